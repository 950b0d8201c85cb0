"""Issue 23's acceptance checks on kernels other people wrote (tests/corpus_others): per kernel
and per check, `wgpsim kernel` runs clean, every local_load matches the assembly, the LDS total
and every buffer offset equal Triton's, and the ds_* per loop iteration (per kernel, with no
loop) equal the assembly's. The fixtures are Triton 3.9.0 compiles for gfx1250 and (issue 27)
for gfx950 and gfx942 (``GPUTarget("hip", ..., 64)``, read with their packaged hardware files);
the checks are ``corpus_others.checks``; those that fail today are
``corpus_others.xfail.XFAIL_BY_TARGET`` (strict: a fix that makes one pass fails the run until
its entry goes)."""

from __future__ import annotations

import pytest
from corpus_others import checks
from corpus_others.kernels import kernels
from corpus_others.xfail import XFAIL, XFAIL_BY_TARGET

NAMES = checks.compiled()
GFX9 = ("gfx950", "gfx942")


def _param(name: str, check: str, target: str = "gfx1250"):
    cause = XFAIL_BY_TARGET[target].get((name, check))
    marks = [pytest.mark.xfail(strict=True, reason=cause)] if cause else []
    prefix = "" if target == "gfx1250" else f"{target}-"
    return pytest.param(name, check, target, id=f"{prefix}{name}-{check}", marks=marks)


@pytest.mark.parametrize(
    ("name", "check", "target"),
    [_param(n, c, t) for t in checks.TARGETS for n in checks.compiled(t) for c in checks.CHECKS],
)
def test_check(name, check, target):
    result = checks.check_kernel(name, target)[check]
    if result.passed is None:
        pytest.skip(result.detail)
    assert result.passed, result.cause


@pytest.mark.parametrize("target", GFX9)
def test_the_gfx9_compiles_are_the_same_kernels(target):
    """Every row of the launch table was compiled for the wave64 target too (or is listed with
    Triton's error): the Gluon kernels written for gfx1250's WMMA layouts are the ones refused,
    each with Triton's own words; the others keep their names and are read as that target's."""
    index = checks.index(target)["kernels"]
    assert set(index) == set(kernels())
    refused = checks.not_compiled(target)
    assert all("invalid layout" in err for err in refused.values()), refused
    assert len(checks.compiled(target)) >= 30
    for name in checks.compiled(target):
        exp = checks.expected(name, target)
        text = (checks.root(target) / "fixtures" / name / "kernel.ttgir").read_text()
        assert f'ttg.target = "hip:{target}"' in text and '"ttg.threads-per-warp" = 64' in text
        assert exp["ttg_shared"] == exp["metadata_shared"], name


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
    """An entry of the xfail tables names a kernel compiled for its target and one of the checks."""
    assert XFAIL_BY_TARGET["gfx1250"] is XFAIL and set(XFAIL_BY_TARGET) == set(checks.TARGETS)
    for target, table in XFAIL_BY_TARGET.items():
        for name, check in table:
            assert name in checks.compiled(target) and check in checks.CHECKS, (target, name)


def test_a_failing_check_says_why():
    """A check that fails names its cause (the work queue needs it)."""
    for target, table in XFAIL_BY_TARGET.items():
        for name, check in table:
            result = checks.check_kernel(name, target)[check]
            assert result.passed is not False or result.cause


@pytest.mark.triton
@pytest.mark.parametrize("target", ["gfx1250", "gfx950"])
def test_regenerate_reproduces_a_fixture(tmp_path, target):
    """The fixtures are what the script makes today: one kernel compiled again, in a
    subprocess with a fresh cache, gives the stored files byte for byte (gfx1250, and gfx950
    through ``--target``)."""
    pytest.importorskip("triton")
    from corpus_others import regenerate

    regenerate.use_target(target)
    try:
        name = "liger_rms_norm_fwd"
        meta, err = regenerate.base._run_child(
            ["compile", name, str(tmp_path)], script=regenerate.__file__
        )
    finally:
        regenerate.use_target("gfx1250")
    assert meta is not None, err
    fixtures = checks.root(target) / "fixtures" / name
    for file in ("kernel.ttgir", "kernel.alloc.mlir", "kernel.amdgcn"):
        assert (tmp_path / file).read_text() == (fixtures / file).read_text()
    assert meta["shared"] == checks.expected(name, target)["metadata_shared"]
