"""The checks of ``tests/test_corpus_others.py`` that fail today, with their causes: the work
queue of issue 23 (gfx1250) and issue 27 (gfx950, gfx942). Each entry is ``(kernel, check):
cause``; the test of that pair is ``xfail(strict=True)``, so a fix that makes it pass fails the
run until its entry is removed here. ``python benchmarks/kernel_corpus_check.py [--target T]``
prints what each check finds today."""

#: why a check fails, shared by the kernels (and targets) it holds for
XFAIL: dict[tuple[str, str], str] = {}

XFAIL_BY_TARGET: dict[str, dict[tuple[str, str], str]] = {
    "gfx1250": XFAIL,
    "gfx942": {
        ("heldout_flaggems_mm_fp32", "ds"): (
            "B's store into amd_rotating_shared (fp32, 32x64): the assembly holds its 8 "
            "ds_write_b32 addresses in 4 registers and pairs only 2 (ds_write2_b32), leaving "
            "4 single; wgpsim pairs all 8, their lane addresses differing by one constant "
            "numerically (likely: LLVM sees no constant difference through the rotation's XOR)"
        ),
    },
    "gfx950": {},
}
