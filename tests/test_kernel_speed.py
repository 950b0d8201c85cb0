"""Issue 29's kernel report path: a small report runs on des without loading numba or pandas,
a large one loads the fast engine up front, and the choice changes no answer."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wgpsim.hw.config import load_hardware
from wgpsim.kernel.report import engine_for, kernel_report

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "kernels"


def _lowerings(name: str):
    ttgir = next((EXAMPLES / name).glob("*.ttgir"))
    return kernel_report(ttgir, engine="des", suggest=False).lowerings


def test_engine_for_loads_fast_only_for_a_large_report(monkeypatch):
    """On numba's JIT (no built engine: loading fast costs 0.32 CPU-s)."""
    monkeypatch.setenv("WGPSIM_FAST_KERNELS", "jit")
    monkeypatch.setattr("wgpsim.engine.auto.fast_cache_present", lambda: True)
    monkeypatch.setattr("wgpsim.engine.auto.fast_loaded", lambda: False)  # a fresh process
    hw = load_hardware()
    attention, transpose = _lowerings("attention"), _lowerings("transpose")
    # attention: 7,424 passes of distinct op traces (13,568 of ops), x 2: under 32,000
    assert engine_for(attention, hw, "auto") == "auto"
    monkeypatch.setattr("wgpsim.engine.auto.DES_PASSES", 20_000)  # every op counted: 27,136
    assert engine_for(attention, hw, "auto") == "auto"
    monkeypatch.setattr("wgpsim.engine.auto.DES_PASSES", 14_000)
    assert engine_for(attention, hw, "auto") == "fast"
    assert engine_for(transpose, hw, "auto") == "auto"  # 160 passes
    assert engine_for(attention, hw, "des") == "des"  # a named engine is kept
    assert engine_for(transpose, hw, "fast") == "fast"


def _wgpsim(*args: str, check_modules: bool = False) -> str:
    code = (
        "import sys; from wgpsim.cli import main; code = main(sys.argv[1:]); "
        "sys.stdout.flush(); "
        + (
            "print('LOADED', 'pandas' in sys.modules, 'numba' in sys.modules, "
            "'rich' in sys.modules); "
        )
        * check_modules
        + "sys.exit(code)"
    )
    hints = ("COLUMNS", "TTY_COMPATIBLE", "FORCE_COLOR")  # a pipe, as rich would call it
    env = {k: v for k, v in os.environ.items() if k not in hints} | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_small_report_imports_neither_numba_nor_pandas_nor_rich():
    """rich only to size a terminal: a report into a pipe has whole rows without it."""
    out = _wgpsim("kernel", "examples/kernels/transpose", check_modules=True)
    assert out.splitlines()[-1] == "LOADED False False False"
    assert "ds_load_tr" in out or "ds_load" in out  # the report itself was printed


@pytest.mark.parametrize("flags", [(), ("--loop-timing",)], ids=["report", "loop"])
def test_default_engine_answers_as_fast(flags):
    """matmul: per-op timings, two layout suggestions and the loop on des by default, the same
    text as with every simulation on the fast engine."""
    default = _wgpsim("kernel", "examples/kernels/matmul", *flags)
    fast = _wgpsim("kernel", "examples/kernels/matmul", *flags, "--engine", "fast")
    assert "suggestion for" in default
    assert default == fast


def test_loop_engine_loads_fast_only_for_a_large_loop(monkeypatch):
    """attention's loop: 24,576 passes, run 3 times (> 32,000): fast up front; matmul's 3,072:
    des (auto); a named engine is kept."""
    from wgpsim.frontend.sources import read_kernel
    from wgpsim.kernel.figures import loop_engine
    from wgpsim.kernel.loop.program import loop_program
    from wgpsim.kernel.loop.traces import loop_trace

    monkeypatch.setenv("WGPSIM_FAST_KERNELS", "jit")  # no built engine: loading fast costs
    monkeypatch.setattr("wgpsim.engine.auto.fast_cache_present", lambda: True)
    monkeypatch.setattr("wgpsim.engine.auto.fast_loaded", lambda: False)  # a fresh process
    hw = load_hardware()

    def trace(name):
        return loop_trace(loop_program(read_kernel(EXAMPLES / name), hw=hw), None, hw).trace

    attention, matmul = trace("attention"), trace("matmul")
    assert loop_engine(attention, hw, "auto") == "fast"
    assert loop_engine(matmul, hw, "auto") == "auto"
    assert loop_engine(attention, hw, "des") == "des"
    monkeypatch.setattr("wgpsim.engine.auto.fast_cache_present", lambda: False)
    monkeypatch.setattr("wgpsim.engine.auto.fast_loaded", lambda: False)
    assert loop_engine(attention, hw, "auto") == "auto"  # a fresh machine compiles nothing


def test_loop_timing_text_imports_no_pandas(tmp_path):
    """Issue 29: the loop's accounting and the engines' event log are numpy, so the text
    imports no pandas; a table that is written (--csv) still is one."""
    out = _wgpsim("kernel", "examples/kernels/matmul", "--loop-timing", check_modules=True)
    assert out.splitlines()[-1] == "LOADED False False False"
    assert "LDS is exposed for" in out and "what if" in out
    csv = tmp_path / "ops.csv"
    _wgpsim("kernel", "examples/kernels/matmul", "--loop-timing", "--csv", str(csv))
    assert csv.read_text().splitlines()[0].startswith("index,")
