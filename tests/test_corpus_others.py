"""Issue 23's acceptance checks on kernels other people wrote (tests/corpus_others): per kernel
and per check, `wgpsim kernel` runs clean, every local_load matches the assembly, the LDS total
and every buffer offset equal Triton's, and the ds_* per loop iteration (per kernel, with no
loop) equal the assembly's. The fixtures are Triton 3.9.0 compiles for gfx1250; the checks are
``corpus_others.checks``; those that fail today are ``corpus_others.xfail.XFAIL`` (strict: a
fix that makes one pass fails the run until its entry goes)."""

from __future__ import annotations

import pytest
from corpus_others import checks
from corpus_others.kernels import kernels
from corpus_others.xfail import XFAIL

NAMES = checks.compiled()


def _param(name: str, check: str):
    cause = XFAIL.get((name, check))
    marks = [pytest.mark.xfail(strict=True, reason=cause)] if cause else []
    return pytest.param(name, check, id=f"{name}-{check}", marks=marks)


@pytest.mark.parametrize(("name", "check"), [_param(n, c) for n in NAMES for c in checks.CHECKS])
def test_check(name, check):
    result = checks.check_kernel(name)[check]
    if result.passed is None:
        pytest.skip(result.detail)
    assert result.passed, result.cause


def test_every_kernel_of_the_table_is_in_the_corpus():
    """Every row of the launch table was compiled (or is listed with Triton's error), and the
    corpus holds the kinds issue 23 names: at least 20 kernels after public sources and the
    held-out regressions."""
    index = checks.index()["kernels"]
    assert set(index) == set(kernels())
    public = [n for n, k in kernels().items() if not k.regression]
    assert len(public) >= 20 and all(kernels()[n].origin for n in public)
    for name in NAMES:
        assert (checks.FIXTURES / name / "kernel.amdgcn").is_file()


def test_xfail_entries_name_real_checks():
    """An entry of the xfail table names a compiled kernel and one of the checks."""
    for name, check in XFAIL:
        assert name in NAMES and check in checks.CHECKS, (name, check)


def test_a_failing_check_says_why():
    """A check that fails names its cause (the work queue needs it)."""
    for (name, check), _ in XFAIL.items():
        result = checks.check_kernel(name)[check]
        assert result.passed is not False or result.cause


@pytest.mark.triton
def test_regenerate_reproduces_a_fixture(tmp_path):
    """The fixtures are what the script makes today: one kernel compiled again, in a
    subprocess with a fresh cache, gives the stored files byte for byte."""
    pytest.importorskip("triton")
    from corpus_others import regenerate

    name = "liger_rms_norm_fwd"
    meta, err = regenerate.base._run_child(
        ["compile", name, str(tmp_path)], script=regenerate.__file__
    )
    assert meta is not None, err
    for file in ("kernel.ttgir", "kernel.alloc.mlir", "kernel.amdgcn"):
        assert (tmp_path / file).read_text() == (checks.FIXTURES / name / file).read_text()
    assert meta["shared"] == checks.expected(name)["metadata_shared"]
