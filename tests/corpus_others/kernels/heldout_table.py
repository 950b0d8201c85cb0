"""The held-out rows of the launch table (issue 27): kernels after public ones, of kinds the
rest of the corpus lacks or has few of (``heldout_public.py``, ``heldout_attention.py``)."""

from __future__ import annotations

from .launch import Kernel

_TUT = "triton-lang/triton python/tutorials/"
_LIGER = "linkedin/Liger-Kernel src/liger_kernel/ops/"
_GEMS = "FlagOpen/FlagGems src/flag_gems/ops/"
_VLLM = "vllm-project/vllm vllm/attention/ops/"

HELDOUT_PUBLIC: tuple[Kernel, ...] = (
    Kernel(
        "heldout_liger_rope",
        "heldout_public:rope_kernel",
        "q_ptr:*bf16 q_row_stride:i32 k_ptr:*bf16 k_row_stride:i32 cos:*fp32 "
        "cos_row_stride:i32 sin:*fp32 sin_row_stride:i32 sl:i32",
        dict(n_qh=32, n_kh=8, hd=128, pad_n_qh=32, pad_n_kh=8, pad_hd=128),
        num_warps=4,
        origin=_LIGER + "rope.py",
    ),
    Kernel(
        "heldout_tutorial_layer_norm_bwd_dx",
        "heldout_public:layer_norm_bwd_dx_fused",
        "DX:*fp16 DY:*fp16 DW:*fp16 DB:*fp16 X:*fp16 W:*fp16 Mean:*fp32 Rstd:*fp32 "
        "Lock:*i32 stride:i32 N:i32",
        dict(GROUP_SIZE_M=64, BLOCK_SIZE_N=1024),
        num_warps=8,
        origin=_TUT + "05-layer-norm.py@545699290b85",
    ),
    Kernel(
        "heldout_liger_softmax_multi_block",
        "heldout_public:softmax_multi_block_forward",
        "Y_ptr:*fp32 Y_row_stride:i32 X_ptr:*fp32 X_row_stride:i32 n_cols:i32",
        dict(BLOCK_SIZE=4096),
        num_warps=16,
        origin=_LIGER + "softmax.py",
    ),
    Kernel(
        "heldout_flaggems_celoss_indices",
        "heldout_public:celoss_indices_kernel",
        "inp_ptr:*fp16 tgt_ptr:*i64 out_ptr:*fp32 ignore_index:i32 C:i32 D:i32",
        dict(BLOCK_C=32, BLOCK_D=64),
        num_warps=4,
        origin=_GEMS + "cross_entropy_loss.py",
    ),
    Kernel(
        "heldout_flaggems_topk_stage1",
        "heldout_public:topk_stage1_kernel",
        "y_ptr:*fp32 index_ptr:*i64 x_ptr:*fp32 N:i32",
        dict(CHUNK_SIZE=256, K=8),
        num_warps=4,
        origin=_GEMS + "topk.py",
    ),
    Kernel(
        "heldout_splitk_gemm_fp16",
        "heldout_public:gemm_split_k_kernel",
        "a_ptr:*fp16 b_ptr:*fp16 c_ptr:*fp32 stride_am:i32 stride_ak:i32 stride_bk:i32 "
        "stride_bn:i32 stride_cm:i32 stride_cn:i32 m:i32 n:i32 k:i32",
        dict(block_m=64, block_n=64, block_k=128, split_k=4, group_m=8),
        num_warps=4,
        num_stages=2,
        origin="pytorch-labs/applied-ai kernels/triton/inference/fp8/splitk_gemm_fp8.py",
    ),
    Kernel(
        "heldout_linear_gelu_bf16",
        "heldout_public:linear_gelu_kernel",
        "x_ptr:*bf16 w_ptr:*bf16 bias_ptr:*bf16 y_ptr:*bf16 M:i32 N:i32 K:i32 stride_xm:i32 "
        "stride_wn:i32 stride_ym:i32",
        dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64),
        num_warps=8,
        num_stages=2,
        origin=_GEMS + "addmm.py (the weight as [N, K], tl.trans)",
    ),
    Kernel(
        "heldout_tutorial_attn_bwd_dkdv",
        "heldout_attention:attn_bwd_dkdv",
        "Q:*fp16 K:*fp16 V:*fp16 DO:*fp16 M:*fp32 D:*fp32 DK:*fp16 DV:*fp16 sm_scale:fp32 "
        "stride_tok:i32 N_CTX:i32",
        dict(BLOCK_M1=32, BLOCK_N1=128, HEAD_DIM=64),
        num_warps=4,
        num_stages=1,
        origin=_TUT + "06-fused-attention.py@dc6ee3ed2cf9 (_attn_bwd_dkdv)",
    ),
    Kernel(
        "heldout_vllm_paged_decode",
        "heldout_attention:paged_attention_decode",
        "out_ptr:*bf16 q_ptr:*bf16 k_cache:*bf16 v_cache:*bf16 block_tables:*i32 "
        "seq_lens:*i32 scale:fp32 stride_q_tok:i32 stride_bt:i32 stride_k_blk:i32 "
        "stride_k_tok:i32 stride_o_tok:i32",
        dict(num_queries_per_kv=8, BLOCK_M=16, BLOCK_SIZE=16, HEAD_SIZE=128),
        num_warps=4,
        num_stages=2,
        origin=_VLLM + "triton_unified_attention.py (kernel_unified_attention_2d, decode)",
    ),
    Kernel(
        "heldout_fla_chunk_fwd_o",
        "heldout_attention:chunk_fwd_kernel_o",
        "q:*bf16 k:*bf16 v:*bf16 h:*bf16 o:*bf16 scale:fp32 T:i32",
        dict(H=16, K=128, V=128, BT=64, BK=64, BV=64),
        num_warps=4,
        num_stages=2,
        origin="fla-org/flash-linear-attention fla/ops/common/chunk_o.py (chunk_fwd_kernel_o)",
    ),
    Kernel(
        "heldout_vllm_scaled_mm_int8",
        "heldout_attention:scaled_mm_kernel",
        "a_ptr:*i8 b_ptr:*i8 scale_a_ptr:*fp32 scale_b_ptr:*fp32 c_ptr:*bf16 M:i32 N:i32 "
        "K:i32 stride_am:i32 stride_bk:i32 stride_cm:i32",
        dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128),
        num_warps=8,
        num_stages=2,
        origin="vllm-project/vllm vllm/model_executor/layers/quantization/compressed_tensors/"
        "triton_scaled_mm.py",
    ),
    Kernel(
        "heldout_vllm_awq_gemm",
        "heldout_attention:awq_gemm_kernel",
        "a_ptr:*fp16 b_ptr:*i32 c_ptr:*fp16 zeros_ptr:*i32 scales_ptr:*fp16 M:i32 N:i32 "
        "K:i32 group_size:i32",
        dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=64, BLOCK_SIZE_K=64),
        num_warps=4,
        num_stages=2,
        origin="vllm-project/vllm vllm/model_executor/layers/quantization/awq_triton.py",
    ),
    Kernel(
        "heldout_vllm_fused_moe_fp8",
        "heldout_attention:fused_moe_fp8_kernel",
        "a_ptr:*fp8e4nv b_ptr:*fp8e4nv c_ptr:*bf16 a_scale_ptr:*fp32 b_scale_ptr:*fp32 "
        "topk_weights_ptr:*fp32 sorted_token_ids_ptr:*i32 expert_ids_ptr:*i32 N:i32 K:i32 "
        "num_valid_tokens:i32 stride_am:i32 stride_be:i32 stride_bn:i32 stride_cm:i32",
        dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=64, BLOCK_SIZE_K=64, top_k=2),
        num_warps=4,
        num_stages=2,
        origin="vllm-project/vllm vllm/model_executor/layers/fused_moe/fused_moe.py (use_fp8_w8a8)",
    ),
    Kernel(
        "heldout_vllm_moe_count_and_sort",
        "heldout_scans:count_and_sort_expert_tokens",
        "topk_ids_ptr:*i32 sorted_token_ids_ptr:*i32 cumsum_ptr:*i32 numel:i32",
        dict(BLOCK=256),
        num_warps=4,
        origin="vllm-project/vllm vllm/model_executor/layers/fused_moe/moe_align_block_size.py",
    ),
    Kernel(
        "heldout_flaggems_var_mean_welford",
        "heldout_scans:var_mean_welford_kernel",
        "X:*bf16 Var:*fp32 Mean:*fp32 M:i32 N:i32 correction:fp32",
        dict(BLOCK_M=4, BLOCK_N=512),
        num_warps=8,
        origin=_GEMS + "var_mean.py",
    ),
    Kernel(
        "heldout_accelerated_scan_fwd",
        "heldout_scans:forward_scan",
        "gates:*bf16 tokens:*bf16 outputs:*bf16",
        dict(SEQUENCE_LENGTH=2048),
        num_warps=4,
        origin="proger/accelerated-scan accelerated_scan/triton.py",
    ),
    Kernel(
        "heldout_flaggems_mm_fp32",
        "heldout_scans:mm_fp32_kernel",
        "A:*fp32 B:*fp32 C:*fp32 M:i32 N:i32 K:i32 stride_am:i32 stride_bk:i32 stride_cm:i32",
        dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32),
        num_warps=4,
        num_stages=2,
        origin=_GEMS + "mm.py (fp32, ieee)",
    ),
    Kernel(
        "heldout_aiter_mha_fwd_causal",
        "heldout_more:mha_fwd_causal",
        "Q:*bf16 K:*bf16 V:*bf16 Out:*bf16 sm_scale:fp32 stride_qm:i32 stride_kn:i32 "
        "stride_om:i32 N_CTX:i32",
        dict(BLOCK_M=128, BLOCK_N=64, HEAD=128),
        num_warps=8,
        num_stages=1,
        origin="ROCm/aiter aiter/ops/triton/_triton_kernels/mha.py (_attn_fwd, causal)",
    ),
    Kernel(
        "heldout_fla_chunk_local_cumsum",
        "heldout_more:chunk_local_cumsum_vector",
        "s:*fp32 o:*fp32 T:i32",
        dict(S=128, BT=64, BS=32),
        num_warps=4,
        origin="fla-org/flash-linear-attention fla/ops/utils/cumsum.py",
    ),
    Kernel(
        "heldout_triton_kernels_swiglu",
        "heldout_more:swiglu_kernel",
        "Out:*bf16 A:*bf16 stride_am:i32 stride_om:i32 M:i32 N:i32 alpha:fp32 limit:fp32",
        dict(BLOCK_M=32, BLOCK_N=128),
        num_warps=4,
        origin=_TUT.replace("tutorials/", "")
        + "triton_kernels/triton_kernels/swiglu_details/_swiglu.py",
    ),
    Kernel(
        "heldout_mamba_chunk_state",
        "heldout_more:chunk_state_fwd",
        "x_ptr:*bf16 b_ptr:*bf16 states_ptr:*fp32 dt_ptr:*fp32 dA_ptr:*fp32 chunk_size:i32 "
        "hdim:i32 dstate:i32 stride_x_l:i32 stride_b_l:i32 stride_st_p:i32",
        dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32),
        num_warps=4,
        num_stages=2,
        origin="state-spaces/mamba mamba_ssm/ops/triton/ssd_chunk_state.py",
    ),
    Kernel(
        "heldout_vllm_paged_decode_fp8kv",
        "heldout_more:paged_decode_fp8kv",
        "out_ptr:*bf16 q_ptr:*bf16 k_cache:*fp8e4nv v_cache:*fp8e4nv block_tables:*i32 "
        "seq_lens:*i32 scale:fp32 k_scale:fp32 v_scale:fp32 stride_q_tok:i32 stride_bt:i32 "
        "stride_k_blk:i32 stride_o_tok:i32",
        dict(QUERIES_PER_KV=8, BLOCK_M=16, BLOCK_SIZE=16, HEAD_SIZE=128),
        num_warps=4,
        num_stages=2,
        origin=_VLLM + "chunked_prefill_paged_decode.py (fp8 KV cache)",
    ),
    # ---- the public kernels above again under their libraries' AMD compile options
    Kernel(
        "heldout_tutorial_matmul_hip_k16",
        "triton_tutorials:matmul_kernel",
        "a_ptr:*fp16 b_ptr:*fp16 c_ptr:*fp16 M:i32 N:i32 K:i32 stride_am:i32 stride_ak:i32 "
        "stride_bk:i32 stride_bn:i32 stride_cm:i32 stride_cn:i32",
        dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=16, GROUP_SIZE_M=1),
        num_warps=4,
        num_stages=2,
        origin=_TUT + "03-matrix-multiplication.py (get_hip_autotune_config, its first row)",
        options=dict(waves_per_eu=2),
    ),
    Kernel(
        "heldout_tutorial_matmul_nonk32",
        "triton_tutorials:matmul_kernel",
        "a_ptr:*bf16 b_ptr:*bf16 c_ptr:*bf16 M:i32 N:i32 K:i32 stride_am:i32 stride_ak:i32 "
        "stride_bk:i32 stride_bn:i32 stride_cm:i32 stride_cn:i32",
        dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32, GROUP_SIZE_M=1),
        num_warps=8,
        num_stages=2,
        origin=_TUT + "03-matrix-multiplication.py (a HIP config, 32x32 MFMA)",
        options=dict(waves_per_eu=2, matrix_instr_nonkdim=32),
    ),
    Kernel(
        "heldout_aiter_gemm_a16w16_256x128",
        "triton_tutorials:matmul_kernel",
        "a_ptr:*bf16 b_ptr:*bf16 c_ptr:*bf16 M:i32 N:i32 K:i32 stride_am:i32 stride_ak:i32 "
        "stride_bk:i32 stride_bn:i32 stride_cm:i32 stride_cn:i32",
        dict(BLOCK_SIZE_M=256, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=4),
        num_warps=8,
        num_stages=2,
        origin="ROCm/aiter aiter/ops/triton/gemm_a16w16.py (an MI355 config: 256x128x64, "
        "8 warps, waves_per_eu 2, 16x16 MFMA; the kernel as tutorial 03's)",
        options=dict(waves_per_eu=2, matrix_instr_nonkdim=16),
    ),
    Kernel(
        "heldout_aiter_mha_fwd_nonk32",
        "heldout_more:mha_fwd_causal",
        "Q:*fp16 K:*fp16 V:*fp16 Out:*fp16 sm_scale:fp32 stride_qm:i32 stride_kn:i32 "
        "stride_om:i32 N_CTX:i32",
        dict(BLOCK_M=128, BLOCK_N=64, HEAD=64),
        num_warps=4,
        num_stages=1,
        origin="ROCm/aiter aiter/ops/triton/_triton_kernels/mha.py (_attn_fwd, causal; "
        "head dim 64 with the 32x32 MFMA)",
        options=dict(waves_per_eu=2, matrix_instr_nonkdim=32),
    ),
)
