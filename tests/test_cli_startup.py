"""``import wgpsim`` and ``wgpsim --help`` stay light: no table, plotting, engine or scheduler
library is imported before a command needs it (issue 18; ``benchmarks/startup.py`` times them).

Each case runs in a fresh interpreter, because this test process has imported everything already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "numba", "matplotlib", "scipy", "simpy", "dask", "pyarrow")

REPORT = f"""
import json, sys
print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]), file=sys.__stderr__)
"""

CASES = {
    "import wgpsim": "import wgpsim\nwgpsim.__version__",
    "wgpsim --help": (
        "import contextlib, io\n"
        "from wgpsim.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        "        main(['--help'])\n"
        "    except SystemExit as e:\n"
        "        assert e.code == 0, e.code\n"
        "assert 'VERB' in out.getvalue() and 'run' in out.getvalue(), out.getvalue()\n"
    ),
}


def _heavy_modules_after(code: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code + REPORT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("case", list(CASES))
def test_light_start(case: str) -> None:
    assert _heavy_modules_after(CASES[case]) == []


def test_the_check_sees_a_heavy_import() -> None:
    """The probe itself: a command that builds a table does import pandas."""
    code = (
        "from wgpsim.trace.generate import streaming_trace\n"
        "streaming_trace(1, 1, 'ds_load_b128', lambda w: 0).to_frame()\n"
    )
    assert "pandas" in _heavy_modules_after(code)
