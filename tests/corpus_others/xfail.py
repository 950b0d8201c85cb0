"""The checks of ``tests/test_corpus_others.py`` that fail today, with their causes: the work
queue of issue 23 (gfx1250) and issue 27 (gfx950, gfx942). Each entry is ``(kernel, check):
cause``; the test of that pair is ``xfail(strict=True)``, so a fix that makes it pass fails the
run until its entry is removed here. ``python benchmarks/kernel_corpus_check.py [--target T]``
prints what each check finds today."""

#: why a gfx950 / gfx942 check fails, shared by the kernels it holds for
D16_HI = (
    "16-bit stores: the assembly splits them into ds_write_b16 and ds_write_b16_d16_hi (values "
    "in a register's high half) differently from wgpsim, so some stores of the line stay "
    "unmatched"
)
SCALES = (
    "ds_read_u8 of the block scales on a line with no TTGIR LDS op: their path to the MFMA is "
    "not in the kernel model"
)

FP8_B_READ = (
    "one ds_read_b128 under the fp8 B operand's line beyond the loop's LDS ops (as "
    "tutorial_matmul_fp8's)"
)

PAIR_SCAN = (
    "a tt.scan of two operands, one result unused: LLVM drops the unused operand's loads and "
    "merges 3-4 contiguous ds_load_b32 into ds_load_b96/_b128, wgpsim pairs all into 2addr forms"
)

XFAIL: dict[tuple[str, str], str] = {
    ("heldout_accelerated_scan_fwd", "ds"): PAIR_SCAN,
}

XFAIL_BY_TARGET: dict[str, dict[tuple[str, str], str]] = {
    "gfx1250": XFAIL,
    "gfx942": {
        ("transpose_tile_fp16", "ds"): D16_HI,
        ("vllm_prefix_prefill", "ds"): D16_HI,
        ("heldout_tutorial_attn_bwd_dkdv", "ds"): D16_HI,
        ("heldout_fla_chunk_fwd_o", "ds"): D16_HI,
        ("heldout_accelerated_scan_fwd", "ds"): PAIR_SCAN,
        ("heldout_aiter_mha_fwd_causal", "ds"): D16_HI
        + "; and its row-max convert_layout reads ds_read2st64_b32 where wgpsim pairs "
        "ds_read2_b32 (the scratch swizzled for 64 banks, gfx942 has 32)",
        ("heldout_flaggems_mm_fp32", "ds"): (
            "B's store into amd_rotating_shared (fp32, 32x64): the assembly pairs 2 of its 8 "
            "ds_write_b32 into ds_write2_b32 and leaves 4 single, wgpsim pairs all 8 (their "
            "lane addresses differ by one constant; not yet known why LLVM pairs fewer)"
        ),
    },
    "gfx950": {
        ("transpose_tile_fp16", "ds"): D16_HI,
        ("heldout_tutorial_attn_bwd_dkdv", "ds"): D16_HI,
        ("heldout_vllm_fused_moe_fp8", "ds"): FP8_B_READ,
        ("heldout_accelerated_scan_fwd", "ds"): PAIR_SCAN,
        ("tutorial_block_scaled_mxfp4", "ds"): SCALES,
        ("tutorial_block_scaled_mxfp8", "ds"): SCALES,
        ("tutorial_matmul_fp8", "ds"): (
            "79 of the loop's 80: one ds_read_b128 under the B operand's line (.loc 77), where "
            "only B's ds_read_b64_tr_b8 and its stores are"
        ),
    },
}
