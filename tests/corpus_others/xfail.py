"""The checks of ``tests/test_corpus_others.py`` that fail today, with their causes: the work
queue of issue 23 (gfx1250) and issue 27 (gfx950, gfx942). Each entry is ``(kernel, check):
cause``; the test of that pair is ``xfail(strict=True)``, so a fix that makes it pass fails the
run until its entry is removed here. ``python benchmarks/kernel_corpus_check.py [--target T]``
prints what each check finds today."""

#: why a check fails, shared by the kernels (and targets) it holds for
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
        ("heldout_accelerated_scan_fwd", "ds"): PAIR_SCAN,
        ("heldout_flaggems_mm_fp32", "ds"): (
            "B's store into amd_rotating_shared (fp32, 32x64): the assembly holds its 8 "
            "ds_write_b32 addresses in 4 registers and pairs only 2 (ds_write2_b32), leaving "
            "4 single; wgpsim pairs all 8, their lane addresses differing by one constant "
            "numerically (likely: LLVM sees no constant difference through the rotation's XOR)"
        ),
    },
    "gfx950": {
        ("heldout_accelerated_scan_fwd", "ds"): PAIR_SCAN,
    },
}
