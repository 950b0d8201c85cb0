"""The launch table of the corpus of kernels other people wrote (issue 23).

Each row of ``TABLE`` is one compile for gfx1250: the kernel (``module:function`` of this
package), its signature (argument name -> Triton type), constexprs, ``num_warps`` and
``num_stages``, further HIP compile options (``options``), and where the kernel comes from.
The rows of ``heldout_table.HELDOUT_PUBLIC`` (issue 27) are held-out kernels after public ones
(``heldout_public``, ``heldout_attention``, ``heldout_scans``, ``heldout_more``), named
``heldout_<library>_<kernel>``; ``heldout.py``'s rows reproduce the project's own held-out
failures. The kernel modules import triton; this file does not, so the table can be read
without it:

>>> [k for k in TABLE if k.name == "tutorial_softmax"][0].num_warps
8
"""

from __future__ import annotations

from .heldout_table import HELDOUT_PUBLIC
from .launch import Kernel

_TUT = "triton-lang/triton python/tutorials/"
_LIGER = "linkedin/Liger-Kernel src/liger_kernel/ops/"
_GEMS = "FlagOpen/FlagGems src/flag_gems/ops/"
_VLLM = "vllm-project/vllm vllm/attention/ops/"
_AITER = "ROCm/aiter aiter/ops/triton/"
_MM = dict(stride_ak="i32", stride_bn="i32")

#: The driver table: every kernel of the corpus and how it is launched.
TABLE: tuple[Kernel, ...] = (
    Kernel(
        "tutorial_softmax",
        "triton_tutorials:softmax_kernel",
        "output_ptr:*fp32 input_ptr:*fp32 input_row_stride:i32 output_row_stride:i32 "
        "n_rows:i32 n_cols:i32",
        dict(BLOCK_SIZE=1024, num_stages=2),
        num_warps=8,
        origin=_TUT + "02-fused-softmax.py@fd237c7cf9a7",
    ),
    Kernel(
        "tutorial_matmul_fp16",
        "triton_tutorials:matmul_kernel",
        "a_ptr:*fp16 b_ptr:*fp16 c_ptr:*fp16 M:i32 N:i32 K:i32 stride_am:i32 stride_ak:i32 "
        "stride_bk:i32 stride_bn:i32 stride_cm:i32 stride_cn:i32",
        dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8),
        origin=_TUT + "03-matrix-multiplication.py@7649d87cce6c",
    ),
    Kernel(
        "tutorial_matmul_fp8",
        "triton_tutorials:matmul_kernel",
        "a_ptr:*fp8e4nv b_ptr:*fp8e4nv c_ptr:*fp16 M:i32 N:i32 K:i32 stride_am:i32 "
        "stride_ak:i32 stride_bk:i32 stride_bn:i32 stride_cm:i32 stride_cn:i32",
        dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128, GROUP_SIZE_M=8),
        num_warps=8,
        origin=_TUT + "03-matrix-multiplication.py@7649d87cce6c (its fp8 inputs)",
    ),
    Kernel(
        "tutorial_layer_norm_fwd",
        "triton_tutorials:_layer_norm_fwd_fused",
        "X:*fp16 Y:*fp16 W:*fp16 B:*fp16 Mean:*fp32 Rstd:*fp32 stride:i32 N:i32 eps:fp32",
        dict(BLOCK_SIZE=2048),
        num_warps=8,
        origin=_TUT + "05-layer-norm.py@545699290b85",
    ),
    Kernel(
        "tutorial_layer_norm_dwdb",
        "triton_tutorials:_layer_norm_bwd_dwdb",
        "DW:*fp32 DB:*fp32 FINAL_DW:*fp32 FINAL_DB:*fp32 M:i32 N:i32",
        dict(BLOCK_SIZE_M=32, BLOCK_SIZE_N=128),
        origin=_TUT + "05-layer-norm.py@545699290b85",
    ),
    Kernel(
        "tutorial_attention_fwd",
        "triton_tutorials:_attn_fwd",
        "Q:*fp16 K:*fp16 V:*fp16 sm_scale:fp32 M:*fp32 Out:*fp16 stride_qm:i32 stride_kn:i32 "
        "stride_vn:i32 stride_om:i32 N_CTX:i32",
        dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64),
        origin=_TUT + "06-fused-attention.py@dc6ee3ed2cf9",
    ),
    Kernel(
        "tutorial_grouped_gemm",
        "triton_tutorials:grouped_matmul_kernel",
        "group_a_ptrs:*i64 group_b_ptrs:*i64 group_c_ptrs:*i64 group_gemm_sizes:*i32 "
        "g_lds:*i32 group_size:i32",
        dict(NUM_SM=64, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32),
        origin=_TUT + "08-grouped-gemm.py@7649d87cce6c",
    ),
    Kernel(
        "tutorial_persistent_matmul",
        "triton_tutorials:matmul_kernel_persistent",
        "a_ptr:*fp16 b_ptr:*fp16 c_ptr:*fp16 M:i32 N:i32 K:i32 stride_am:i32 stride_bk:i32 "
        "stride_cm:i32",
        dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, NUM_SMS=64),
        num_warps=8,
        num_stages=3,
        origin=_TUT + "09-persistent-matmul.py@02936a198800",
    ),
    Kernel(
        "tutorial_descriptor_persistent_matmul",
        "triton_tutorials:matmul_kernel_descriptor_persistent",
        "a_ptr:*fp16 b_ptr:*fp16 c_ptr:*fp16 M:i32 N:i32 K:i32",
        dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, NUM_SMS=64),
        num_warps=4,
        num_stages=3,
        origin=_TUT + "09-persistent-matmul.py@02936a198800",
    ),
    Kernel(
        "tutorial_block_scaled_mxfp8",
        "triton_tutorials:block_scaled_matmul_kernel",
        "a_ptr:*fp8e4nv b_ptr:*fp8e4nv a_scale_ptr:*u8 b_scale_ptr:*u8 c_ptr:*fp16 M:i32 "
        "N:i32 K:i32 stride_am:i32 stride_bn:i32 stride_cm:i32",
        dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=128, VEC_SIZE=32),
        origin=_TUT + "10-block-scaled-matmul.py@d1de12c48613",
    ),
    Kernel(
        "tutorial_block_scaled_mxfp4",
        "triton_tutorials:block_scaled_matmul_mxfp4_kernel",
        "a_ptr:*u8 b_ptr:*u8 a_scale_ptr:*u8 b_scale_ptr:*u8 c_ptr:*fp16 M:i32 N:i32 K:i32 "
        "stride_am:i32 stride_bn:i32 stride_cm:i32",
        dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=256, VEC_SIZE=32),
        origin=_TUT + "10-block-scaled-matmul.py@d1de12c48613 (its mxfp4 inputs)",
    ),
    Kernel(
        "liger_rms_norm_fwd",
        "liger:_rms_norm_forward_kernel",
        "Y_ptr:*bf16 Y_row_stride:i32 X_ptr:*bf16 X_row_stride:i32 W_ptr:*bf16 RSTD_ptr:*fp32 "
        "n_cols:i32 eps:fp32 offset:fp32",
        dict(BLOCK_SIZE=4096),
        num_warps=16,
        origin=_LIGER + "rms_norm.py@6a770f5f0a7a",
    ),
    Kernel(
        "liger_rms_norm_bwd",
        "liger:_rms_norm_backward_kernel",
        "dY_ptr:*bf16 dY_row_stride:i32 dX_ptr:*bf16 dX_row_stride:i32 X_ptr:*bf16 "
        "X_row_stride:i32 W_ptr:*bf16 RSTD_ptr:*fp32 dW_ptr:*fp32 dW_row_stride:i32 n_rows:i32 "
        "n_cols:i32 offset:fp32 rows_per_program:i32",
        dict(BLOCK_SIZE=2048),
        num_warps=8,
        origin=_LIGER + "rms_norm.py@6a770f5f0a7a",
    ),
    Kernel(
        "liger_layer_norm_fwd",
        "liger:_layer_norm_forward_kernel",
        "Y_ptr:*fp16 Y_row_stride:i32 X_ptr:*fp16 X_row_stride:i32 W_ptr:*fp16 B_ptr:*fp16 "
        "Mean_ptr:*fp32 RSTD_ptr:*fp32 n_cols:i32 eps:fp32",
        dict(BLOCK_SIZE=1024),
        num_warps=4,
        origin=_LIGER + "layer_norm.py@71b1cdaf1aa6",
    ),
    Kernel(
        "liger_cross_entropy",
        "liger:liger_cross_entropy_kernel",
        "X_ptr:*bf16 X_stride:i32 Y_ptr:*i64 Y_stride:i32 loss_ptr:*fp32 loss_stride:i32 "
        "n_cols:i32 n_non_ignore:i32 ignore_index:i32",
        dict(BLOCK_SIZE=4096),
        num_warps=32,
        origin=_LIGER + "cross_entropy.py@7cf0f3d84781",
    ),
    Kernel(
        "flaggems_softmax_inner",
        "flaggems:softmax_kernel_inner",
        "output_ptr:*fp16 input_ptr:*fp16 M:i32 N:i32",
        dict(TILE_N=2048),
        num_warps=8,
        origin=_GEMS + "softmax.py",
    ),
    Kernel(
        "flaggems_sum_dim",
        "flaggems:sum_dim_kernel",
        "inp:*bf16 out:*bf16 M:i32 N:i32",
        dict(BLOCK_M=4, BLOCK_N=512),
        num_warps=4,
        origin=_GEMS + "sum.py",
    ),
    Kernel(
        "flaggems_argmax",
        "flaggems:argmax_kernel",
        "inp:*fp32 out_index:*i64 M:i32 N:i32 K:i32",
        dict(BLOCK_M=8, BLOCK_N=256),
        num_warps=4,
        origin=_GEMS + "argmax.py@9319ea9323c5",
    ),
    Kernel(
        "flaggems_cumsum",
        "flaggems:scan_part_sum_kernel",
        "inp:*fp32 out:*fp32 partial_sum:*fp32 n_elements:i32",
        dict(BLOCK_SIZE=1024),
        num_warps=4,
        origin=_GEMS + "cumsum.py@15c14fc876e9",
    ),
    Kernel(
        "flaggems_group_norm",
        "flaggems:group_norm_kernel",
        "X:*fp16 Y:*fp16 W:*fp16 B:*fp16 Mean:*fp32 Rstd:*fp32 group_size:i32 C:i32 HW:i32 "
        "num_groups:i32 eps:fp32",
        dict(BLOCK_GROUP_SIZE=16, BLOCK_HW_SIZE=256),
        num_warps=4,
        origin=_GEMS + "groupnorm.py@1ed75020d55b",
    ),
    Kernel(
        "flaggems_mm_bf16",
        "flaggems:mm_kernel",
        "A:*bf16 B:*bf16 C:*bf16 M:i32 N:i32 K:i32 stride_am:i32 stride_bk:i32 stride_cm:i32",
        dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8),
        num_warps=4,
        num_stages=3,
        origin=_GEMS + "mm.py",
    ),
    Kernel(
        "flaggems_bmm_fp16",
        "flaggems:bmm_kernel",
        "A:*fp16 B:*fp16 O:*fp16 M:i32 N:i32 K:i32",
        dict(TILE_M=128, TILE_N=128, TILE_K=32),
        num_warps=4,
        num_stages=2,
        origin=_GEMS + "bmm.py@08715dba7eca",
    ),
    Kernel(
        "vllm_prefix_prefill",
        "serving:_prefix_fwd_kernel",
        "Q:*fp16 K:*fp16 V:*fp16 K_cache:*fp16 V_cache:*fp16 B_Loc:*i32 sm_scale:fp32 "
        "B_Start_Loc:*i32 B_Seqlen:*i32 Out:*fp16 stride_b_loc_b:i32 stride_qbs:i32 "
        "stride_kbs:i32 stride_k_cache_bs:i32 stride_obs:i32 cur_ctx_len:i32",
        dict(BLOCK_SIZE=16, BLOCK_M=64, BLOCK_DMODEL=128, BLOCK_N=64),
        num_warps=4,
        num_stages=1,
        origin=_VLLM + "prefix_prefill.py@0ae8f3ee03fe",
    ),
    Kernel(
        "vllm_decode_grouped_stage1",
        "serving:_fwd_grouped_kernel_stage1",
        "Q:*bf16 K_Buffer:*bf16 V_Buffer:*bf16 sm_scale:fp32 Req_to_tokens:*i32 B_Seqlen:*i32 "
        "Att_Out:*fp32 stride_req_to_tokens_b:i32 stride_qbs:i32 stride_qh:i32 "
        "stride_buf_kbs:i32 stride_mid_ob:i32 stride_mid_oh:i32 stride_mid_os:i32",
        dict(
            kv_group_num=8,
            q_head_num=32,
            BLOCK_DMODEL=128,
            BLOCK_N=32,
            BLOCK_H=16,
            NUM_KV_SPLITS=8,
            PAGE_SIZE=16,
        ),
        num_warps=4,
        num_stages=2,
        origin=_VLLM + "triton_decode_attention.py@1e8e86046cc3",
    ),
    Kernel(
        "vllm_fused_moe_fp16",
        "serving:fused_moe_kernel",
        "a_ptr:*fp16 b_ptr:*fp16 c_ptr:*fp16 topk_weights_ptr:*fp32 sorted_token_ids_ptr:*i32 "
        "expert_ids_ptr:*i32 num_tokens_post_padded_ptr:*i32 N:i32 K:i32 EM:i32 "
        "num_valid_tokens:i32 stride_am:i32 stride_be:i32 stride_bn:i32 stride_cm:i32",
        dict(BLOCK_SIZE_M=64, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64, GROUP_SIZE_M=8, top_k=2),
        num_warps=4,
        num_stages=2,
        origin="vllm-project/vllm vllm/model_executor/layers/fused_moe/fused_moe.py",
    ),
    Kernel(
        "aiter_gemm_a8w8_blockscale",
        "serving:_gemm_a8w8_blockscale_kernel",
        "a_ptr:*fp8e4nv b_ptr:*fp8e4nv c_ptr:*bf16 a_scale_ptr:*fp32 b_scale_ptr:*fp32 M:i32 "
        "N:i32 K:i32 stride_am:i32 stride_bn:i32 stride_cm:i32 stride_ascale_m:i32 "
        "stride_bscale_n:i32",
        dict(GROUP_K=128, GROUP_N=128, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=128),
        num_warps=4,
        num_stages=2,
        origin=_AITER + "gemm_a8w8_blockscale.py",
    ),
    Kernel(
        "transpose_tile_fp16",
        "serving:transpose_kernel",
        "inp:*fp16 out:*fp16 M:i32 N:i32 stride_in:i32 stride_out:i32",
        dict(BLOCK_M=64, BLOCK_N=64),
        num_warps=4,
        origin="the tiled-transpose pattern (FlagGems " + _GEMS + "permute)",
    ),
    Kernel(
        "aiter_gluon_gemm_a16w16",
        "aiter_gluon:gemm_a16w16_bandwidth_bound",
        "a_ptr:*bf16 b_ptr:*bf16 c_ptr:*bf16 M:i32 N:i32 K:i32 stride_am:i32 stride_bn:i32 "
        "stride_cm:i32",
        dict(
            BLOCK_M=128,
            BLOCK_N=128,
            BLOCK_K=64,
            NUM_BUFFERS=3,
            SHARED_A="@aiter_gluon:SHARED_A",
            SHARED_B="@aiter_gluon:SHARED_B",
            WMMA="@aiter_gluon:WMMA",
            OPA="@aiter_gluon:OPERAND_A",
            OPB="@aiter_gluon:OPERAND_B",
        ),
        num_warps=4,
        origin="ROCm/aiter aiter/ops/triton/_gluon_kernels/gfx1250/gemm/basic/gemm_a16w16.py"
        "@0895ae5a3f5a",
    ),
    Kernel(
        "aiter_gluon_gemm_a8w8_blockscale",
        "aiter_gluon:gemm_a8w8_blockscale",
        "a_ptr:*fp8e4nv b_ptr:*fp8e4nv c_ptr:*bf16 a_scale_ptr:*fp32 b_scale_ptr:*fp32 M:i32 "
        "N:i32 K:i32 stride_am:i32 stride_bn:i32 stride_cm:i32 stride_ascale_m:i32 "
        "stride_ascale_k:i32 stride_bscale_k:i32",
        dict(
            GROUP_N=64,
            BLOCK_SIZE_M=128,
            BLOCK_SIZE_N=128,
            BLOCK_SIZE_K=128,
            NUM_BUFFERS=3,
            WARP_BASES=((0, 1), (1, 0)),
        ),
        num_warps=4,
        origin="ROCm/aiter aiter/ops/triton/_gluon_kernels/gfx1250/gemm/basic/"
        "gemm_a8w8_blockscale.py@14165170e98c",
    ),
    # ---- the project's known held-out failures, as regression fixtures
    Kernel(
        "heldout_padded_rowperm_b",
        "heldout:store_load",
        "in_ptr:*fp16 out_ptr:*fp16",
        dict(
            M=64,
            N=128,
            SRC="@heldout:SRC_64x128",
            SHARED="@heldout:PADDED_ROWPERM",
            DST="@heldout:DOT_B",
            INIT=False,
        ),
        regression="a row-permuting padded layout on a B operand: TypeError "
        "'NoneType' object is not iterable",
    ),
    Kernel(
        "heldout_padded_subslice_dot",
        "heldout:padded_subslice_dot",
        "in_ptr:*fp16 out_ptr:*fp16",
        dict(M=128, SRC="@heldout:SRC_128x128", SHARED="@heldout:PADDED_128", A="@heldout:DOT_A"),
        regression="a memdesc_subslice view of a padded buffer read as a dot operand: "
        "LayoutError (padded shape vs view shape)",
    ),
    Kernel(
        "heldout_attn_causal_descriptor",
        "heldout:attn_causal_descriptor",
        "Q:*fp16 K:*fp16 V:*fp16 Out:*fp16 sm_scale:fp32 N_CTX:i32",
        dict(HEAD_DIM=64, BLOCK_M=128, BLOCK_N=64),
        regression="a causal attention loop fed by tensor descriptors: 0 ds per iteration",
    ),
    Kernel(
        "heldout_col_sum_loop",
        "heldout:col_sum_loop",
        "x_ptr:*fp32 out_ptr:*fp32 M:i32",
        dict(N=128, BLOCK_M=64),
        regression="a column-sum reduction loop: 0 ds per iteration",
    ),
    Kernel(
        "heldout_bmm_branchy",
        "heldout:bmm_branchy",
        "a_ptr:*fp16 b_ptr:*fp16 c_ptr:*fp16 skip_ptr:*i32 M:i32 N:i32 K:i32",
        dict(BM=128, BN=128, BK=64),
        regression="a bmm whose loop body spans several basic blocks",
    ),
    Kernel(
        "heldout_bmm_rank3_masked",
        "heldout:bmm_rank3_masked",
        "a_ptr:*fp16 b_ptr:*fp16 c_ptr:*fp16 K:i32",
        dict(BB=2, BM=64, BN=64, BK=32),
        regression="a bmm whose loop body spans several basic blocks (rank-3 dot, masked loads)",
    ),
)


TABLE += HELDOUT_PUBLIC


def kernels() -> dict[str, Kernel]:
    """The table by name (names are unique)."""
    out = {k.name: k for k in TABLE}
    if len(out) != len(TABLE):
        raise ValueError("corpus_others: kernel names repeat")
    return out
