"""Issue 29: ``wgpsim kernel`` imports what its answer uses. A plain report imports neither the
loop's program and traces (``--loop-timing`` does), nor the scratch lowerings (a kernel with a
scratch op does), nor the compiler (``FILE.py:FUNCTION`` does), nor pandas, matplotlib or
scipy; the ``wgpsim.kernel`` facade keeps its functions ``report`` and ``loop`` whatever is
imported after it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

WATCHED = (
    "pandas",
    "matplotlib",
    "scipy",
    "wgpsim.frontend.compile",
    "wgpsim.kernel.loop.program",
    "wgpsim.kernel.loop.traces",
    "wgpsim.trace.scratch.lowering",
)
"""The modules a run is checked for (loaded or not)."""

LIGHT = {"pandas", "matplotlib", "scipy", "wgpsim.frontend.compile"}
"""Loaded by none of the runs below."""


def _loaded(*args: str) -> set[str]:
    """The modules of `WATCHED` that ``wgpsim ARGS`` (run in a fresh process) loaded."""
    code = (
        "import json, sys; from wgpsim.cli import main; code = main(sys.argv[1:]); "
        f"print(json.dumps([m for m in {WATCHED!r} if m in sys.modules]), file=sys.stderr); "
        "sys.exit(code)"
    )
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.splitlines()[-1]))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("examples/kernels/attention",), set()),
        (
            ("examples/kernels/attention", "--loop-timing"),
            {"wgpsim.kernel.loop.program", "wgpsim.kernel.loop.traces"},
        ),
        (("examples/kernels/column_sum",), {"wgpsim.trace.scratch.lowering"}),  # tt.reduce
    ],
    ids=["report", "loop-timing", "scratch"],
)
def test_kernel_imports_what_its_answer_uses(args, expected):
    loaded = _loaded("kernel", *args)
    assert loaded == expected
    assert not loaded & LIGHT


def test_facade_keeps_its_functions():
    """Importing the loop's modules after ``wgpsim.kernel`` leaves its ``loop`` and ``report``
    the functions (not the package and module of the same names); the compile functions come
    from `wgpsim.frontend.compile` on first use."""
    import wgpsim.kernel
    import wgpsim.kernel.loop.program
    import wgpsim.kernel.loop.timing
    import wgpsim.kernel.loop.traces
    import wgpsim.kernel.report  # noqa: F401 (the submodule, imported again)
    from wgpsim.frontend import compile as compiler
    from wgpsim.kernel import compile_for, compile_for_gfx1250, loop, report

    assert callable(loop) and callable(report)
    assert wgpsim.kernel.loop is loop and wgpsim.kernel.report is report
    assert (compile_for, compile_for_gfx1250) == (
        compiler.compile_for,
        compiler.compile_for_gfx1250,
    )
    with pytest.raises(AttributeError):
        wgpsim.kernel.no_such_name  # noqa: B018
