"""From kernel source to the report in one call, compiling for gfx1250 on the CPU (Triton
3.9.0): the AMD blog's attention example and its LDS bandwidth microbenchmark as Gluon."""

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")
pytestmark = [pytest.mark.triton, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernels" / "kernels.py"


def _examples():
    """examples/kernels/kernels.py, loaded by path: `tests/corpus/kernels` is a package of the
    same name that another test may have imported first."""
    spec = importlib.util.spec_from_file_location("wgpsim_example_kernels", EXAMPLES)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_attention_reports_128_transposed_v_loads_per_iteration():
    ATTENTION = _examples().ATTENTION

    from wgpsim.kernel import report

    fn, sig, consts, warps = ATTENTION
    rep = report(fn, sig, consts, num_warps=warps)
    in_loop = [op for op in rep.ops if op["loop_depth"] == 1 and op["op"] == "ttg.local_load"]
    v = [op for op in in_loop if op["transposed"]]
    assert [op["instructions"] for op in v] == [{"ds_load_tr16_b128": 128}]
    assert rep.lds_bytes == rep.ttg_shared


def test_bandwidth_microbenchmark_sizes_and_co_location():
    CASES = _examples().CASES

    from wgpsim.kernel import report

    out = {}
    for name in ("lds_bandwidth_plain", "lds_bandwidth_partitioned"):
        fn, sig, consts, warps = CASES[name]
        rep = report(fn, sig, consts, num_warps=warps)
        (load,) = [op for op in rep.ops if op["op"] == "ttg.local_load"]
        out[name] = (rep.lds_bytes, rep.ttg_shared, load["co_located"], load["instructions"])
    assert out == {
        "lds_bandwidth_plain": (65536, 65536, True, {"ds_load_b128": 32}),
        "lds_bandwidth_partitioned": (98304, 98304, False, {"ds_load_b128": 32}),
    }


def test_an_already_compiled_kernel():
    import triton

    CASES = _examples().CASES
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    from wgpsim.frontend.compile import fp_fusion_default
    from wgpsim.kernel import report

    fn, sig, consts, warps = CASES["lds_bandwidth_partitioned"]
    src = GluonASTSource(fn, sig | {k: "constexpr" for k in consts}, constexprs=consts)
    options = {"num_warps": 4, **fp_fusion_default({})}  # as wgpsim compiles: no FP_FUSION warning
    compiled = triton.compile(src, target=GPUTarget("hip", "gfx1250", 32), options=options)
    rep = report(compiled)
    assert rep.buffers[0]["offsets"] == [0, 65536] and rep.extras["offsets_from"] == "module"


def test_a_compile_raises_no_fp_fusion_warning(monkeypatch):
    """Issue 25: the test run ended in Triton 3.9's "TRITON_DEFAULT_FP_FUSION is unset" warning.
    wgpsim asks for Triton's default (fusion on) explicitly: no warning, and the same compile as
    with TRITON_DEFAULT_FP_FUSION=1 (a user's setting of the variable is kept)."""
    import warnings

    import triton.knobs

    from wgpsim.frontend.compile import FP_FUSION_ENV, compile_for_gfx1250, fp_fusion_default

    monkeypatch.delenv(FP_FUSION_ENV, raising=False)
    fn, sig, consts, warps = _examples().CASES["lds_bandwidth_plain"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        monkeypatch.setattr(triton.knobs, "warn_once", lambda msg: warnings.warn(msg, stacklevel=2))
        compiled = compile_for_gfx1250(fn, sig, consts, num_warps=warps, allocate=False)
    assert not [w for w in caught if FP_FUSION_ENV in str(w.message)]
    monkeypatch.setenv(FP_FUSION_ENV, "1")  # Triton's default set by hand: the same compile
    assert fp_fusion_default({}) == {}
    again = compile_for_gfx1250(fn, sig, consts, num_warps=warps, allocate=False)

    def code(text: str) -> list[str]:  # instructions only: a cached compile names its checkout
        return [ln for ln in text.splitlines() if ln.startswith("\t") and ln[1:2] != "."]

    assert code(again.amdgcn) == code(compiled.amdgcn)
