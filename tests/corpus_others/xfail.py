"""The checks of ``tests/test_corpus_others.py`` that fail today, with their causes: the work
queue of issue 23. Each entry is ``(kernel, check): cause``; the test of that pair is
``xfail(strict=True)``, so a fix that makes it pass fails the run until its entry is removed
here. ``python benchmarks/kernel_corpus_check.py`` prints what each check finds today."""

XFAIL: dict[tuple[str, str], str] = {}
