"""The checks of ``tests/test_corpus_others.py`` that fail today, with their causes: the work
queue of issue 23. Each entry is ``(kernel, check): cause``; the test of that pair is
``xfail(strict=True)``, so a fix that makes it pass fails the run until its entry is removed
here. ``python benchmarks/kernel_corpus_check.py`` prints what each check finds today."""

#: issue 23 cause 1: the ds_* that Triton's tt.scan lowers through LDS scratch (its partials; its
#: ds_bpermute_b32 shuffles are listed as lane permutes) are not lowered (convert_layout,
#: tt.reduce and atomics are)
SCAN = "scratch ds_* of tt.scan are not lowered (cause 1)"

XFAIL: dict[tuple[str, str], str] = {
    ("flaggems_cumsum", "ds"): SCAN,
}
