"""``import wgpsim`` and ``wgpsim --help`` stay light: no table, plotting, engine or scheduler
library is imported before a command needs it (issue 18; ``benchmarks/startup.py`` times them).

Each case runs in a fresh interpreter, because this test process has imported everything already.
Not even numpy (0.1 CPU-s of the 0.3 s ``--help`` may take) or yaml: the verbs import what they
use in their handlers.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pandas", "numba", "matplotlib", "scipy", "simpy", "dask", "pyarrow", "numpy", "yaml")

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


def test_the_seed_run_builds_no_dataframe(tmp_path: Path) -> None:
    """``wgpsim run configs/lds_bandwidth.yaml`` (``engine: auto``: des) prints its table and
    writes its files without pandas (nor pyarrow), numba, scipy, dask or pyplot: it needs
    numpy, yaml, simpy and matplotlib's Figure only."""
    out = tmp_path / "out"
    code = (
        "import contextlib, io, sys\n"
        "from wgpsim.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as shown:\n"
        f"    assert main(['run', 'configs/lds_bandwidth.yaml', '--out', {str(out)!r}]) == 0\n"
        "assert 'partitioned' in shown.getvalue(), shown.getvalue()\n"
        "assert 'matplotlib.pyplot' not in sys.modules\n"
    )
    heavy = _heavy_modules_after(code)
    assert sorted(heavy) == ["matplotlib", "numpy", "simpy", "yaml"]
    assert {p.name for p in out.iterdir()} >= {"results.csv", "bandwidth_vs_burst.png"}


def test_run_help_names_the_scheduler_variable() -> None:
    """``wgpsim run --help`` names the executor's variable without importing the executor."""
    import contextlib
    import io

    from wgpsim.cli import main
    from wgpsim.sweeps.executor import SCHEDULER_ENV

    with contextlib.redirect_stdout(io.StringIO()) as out, pytest.raises(SystemExit):
        main(["run", "--help"])
    assert f"${SCHEDULER_ENV}" in out.getvalue()


def _command(args: list[str], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "wgpsim", *args], cwd=ROOT, env=env, timeout=300, **kw
    )


def test_the_command_flushes_before_it_leaves(tmp_path: Path) -> None:
    """``entry`` skips the interpreter's teardown (os._exit): what was printed to a file is
    all there, and the exit codes are main's (0; 2 for a bad file, one line)."""
    out = tmp_path / "out.json"
    with out.open("w") as f:
        done = _command(["replay", "examples/traces/two_pairs_conflict.jsonl", "--json"], stdout=f)
    assert done.returncode == 0
    assert json.loads(out.read_text())["trace"] == "examples/traces/two_pairs_conflict.jsonl"
    bad = _command(["replay", str(tmp_path / "missing.jsonl")], capture_output=True, text=True)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "no such file" in bad.stderr


def test_the_command_into_a_closed_pipe_is_quiet() -> None:
    """``wgpsim ... --json | head -1``: exit 0 and nothing on stderr, with the early exit too."""
    code = (
        "import os, subprocess, sys\n"
        "r, w = os.pipe(); os.close(r)\n"
        "done = subprocess.run([sys.executable, '-m', 'wgpsim', 'replay',\n"
        "    'examples/traces/two_pairs_conflict.jsonl', '--json'], stdout=w, stderr=subprocess.PIPE)\n"
        "print(done.returncode, repr(done.stderr.decode()))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.stdout.split() == ["0", "''"], done
