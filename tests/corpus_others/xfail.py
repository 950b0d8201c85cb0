"""The checks of ``tests/test_corpus_others.py`` that fail today, with their causes: the work
queue of issue 23 (gfx1250) and issue 27 (gfx950, gfx942). Each entry is ``(kernel, check):
cause``; the test of that pair is ``xfail(strict=True)``, so a fix that makes it pass fails the
run until its entry is removed here. ``python benchmarks/kernel_corpus_check.py [--target T]``
prints what each check finds today."""

#: why a gfx950 / gfx942 check fails, shared by the kernels it holds for
SCALES = (
    "ds_read_u8 of the block scales on a line with no TTGIR LDS op: their path to the MFMA is "
    "not in the kernel model"
)

XFAIL: dict[tuple[str, str], str] = {}

XFAIL_BY_TARGET: dict[str, dict[tuple[str, str], str]] = {
    "gfx1250": XFAIL,
    "gfx942": {},
    "gfx950": {
        ("tutorial_block_scaled_mxfp4", "ds"): SCALES,
        ("tutorial_block_scaled_mxfp8", "ds"): SCALES,
        ("tutorial_matmul_fp8", "ds"): (
            "79 of the loop's 80: one ds_read_b128 under the B operand's line (.loc 77), where "
            "only B's ds_read_b64_tr_b8 and its stores are"
        ),
    },
}
