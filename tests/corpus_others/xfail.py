"""The checks of ``tests/test_corpus_others.py`` that fail today, with their causes: the work
queue of issue 23 (gfx1250) and issue 27 (gfx950, gfx942). Each entry is ``(kernel, check):
cause``; the test of that pair is ``xfail(strict=True)``, so a fix that makes it pass fails the
run until its entry is removed here. ``python benchmarks/kernel_corpus_check.py [--target T]``
prints what each check finds today."""

#: why a gfx950 check fails, shared by the kernels it holds for
TR_LOADS = (
    "gfx950's ds_read_b64_tr_b16/b8 is not lowered (Triton's chooseDotDsReadB64TrLayout and its "
    "V1 lane exchange): wgpsim reads that operand with ds_read_u16/u8"
)
D16_HI = (
    "16-bit stores: the assembly splits them into ds_write_b16 and ds_write_b16_d16_hi (values "
    "in a register's high half) differently from wgpsim, so some stores of the line stay "
    "unmatched"
)
SCALES = (
    "ds_read_u8 of the block scales on a line with no TTGIR LDS op: their path to the MFMA is "
    "not in the kernel model"
)

XFAIL: dict[tuple[str, str], str] = {}

XFAIL_BY_TARGET: dict[str, dict[tuple[str, str], str]] = {
    "gfx1250": XFAIL,
    "gfx942": {
        ("transpose_tile_fp16", "ds"): D16_HI,
        ("vllm_prefix_prefill", "ds"): D16_HI,
    },
    "gfx950": {
        ("flaggems_bmm_fp16", "local_load"): TR_LOADS,
        ("flaggems_bmm_fp16", "ds"): TR_LOADS,
        ("flaggems_mm_bf16", "local_load"): TR_LOADS,
        ("flaggems_mm_bf16", "ds"): TR_LOADS,
        ("heldout_attn_causal_descriptor", "local_load"): TR_LOADS,
        ("heldout_attn_causal_descriptor", "ds"): TR_LOADS,
        ("heldout_bmm_branchy", "local_load"): TR_LOADS,
        ("heldout_bmm_branchy", "ds"): TR_LOADS,
        ("heldout_bmm_rank3_masked", "local_load"): TR_LOADS,
        ("heldout_bmm_rank3_masked", "ds"): TR_LOADS,
        ("transpose_tile_fp16", "ds"): D16_HI,
        ("tutorial_attention_fwd", "local_load"): TR_LOADS,
        ("tutorial_attention_fwd", "ds"): TR_LOADS,
        ("tutorial_block_scaled_mxfp4", "ds"): SCALES,
        ("tutorial_block_scaled_mxfp8", "ds"): SCALES,
        ("tutorial_grouped_gemm", "local_load"): TR_LOADS,
        ("tutorial_grouped_gemm", "ds"): TR_LOADS,
        ("tutorial_matmul_fp16", "local_load"): TR_LOADS,
        ("tutorial_matmul_fp16", "ds"): TR_LOADS,
        ("tutorial_matmul_fp8", "local_load"): TR_LOADS,
        ("tutorial_matmul_fp8", "ds"): TR_LOADS,
        ("tutorial_persistent_matmul", "local_load"): TR_LOADS,
        ("tutorial_persistent_matmul", "ds"): TR_LOADS,
        ("vllm_decode_grouped_stage1", "local_load"): TR_LOADS,
        ("vllm_decode_grouped_stage1", "ds"): TR_LOADS,
        ("vllm_prefix_prefill", "local_load"): TR_LOADS,
        ("vllm_prefix_prefill", "ds"): TR_LOADS,
    },
}
