"""Optional dependencies (``wgpsim.extras``): the main job runs without them, and each path that
needs one says which extra installs it, in one line with exit code 2, when it is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wgpsim.cli import main
from wgpsim.extras import MissingExtraError, require
from wgpsim.trace import TraceBuilder, write_trace

ROOT = Path(__file__).resolve().parent.parent
OPTIONAL = ("pyarrow", "dask", "distributed", "scipy")
"""Top-level modules of the extras (``parquet``, ``dask``, ``stats``)."""


@pytest.fixture
def without(monkeypatch):
    """``without("pyarrow")``: importing pyarrow or any of its modules raises ImportError (those
    already imported by other tests too)."""

    def block(*names: str) -> None:
        for name in names:
            for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
                monkeypatch.setitem(sys.modules, loaded, None)
            monkeypatch.setitem(sys.modules, name, None)

    return block


def _error_lines(capsys, *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    return code, capsys.readouterr().err.splitlines()


def test_require_imports_or_names_the_extra(without):
    assert require("json", "parquet", "reading Parquet").dumps([]) == "[]"
    without("pyarrow")
    with pytest.raises(MissingExtraError) as err:
        require("pyarrow.parquet", "parquet", "reading Parquet")
    assert str(err.value) == "reading Parquet needs pyarrow: pip install 'wgpsim[parquet]'"


def test_reading_a_parquet_trace_without_pyarrow(tmp_path, capsys, without):
    b = TraceBuilder(1)
    b.wait_ds(0, 0)
    path = write_trace(b.build(), tmp_path / "t.parquet")
    without("pyarrow")
    code, lines = _error_lines(capsys, "replay", str(path))
    assert code == 2
    assert lines == ["wgpsim: error: reading Parquet needs pyarrow: pip install 'wgpsim[parquet]'"]


def test_parquet_events_and_tables_without_pyarrow(tmp_path, capsys, without):
    trace = ROOT / "examples" / "traces" / "two_pairs_conflict.jsonl"
    without("pyarrow")
    events = tmp_path / "e.parquet"
    code, lines = _error_lines(capsys, "replay", str(trace), "--events", str(events))
    assert (code, lines) == (
        2,
        [f"wgpsim: error: --events {events} needs pyarrow: pip install 'wgpsim[parquet]'"],
    )
    config = str(ROOT / "configs" / "lds_bandwidth.yaml")
    code, lines = _error_lines(capsys, "run", config, "--out", str(tmp_path / "o"), "--parquet")
    assert (code, lines) == (
        2,
        ["wgpsim: error: --parquet needs pyarrow: pip install 'wgpsim[parquet]'"],
    )
    assert not (tmp_path / "o").exists()  # refused before the run


def test_a_dask_scheduler_without_distributed(capsys, without):
    without("distributed", "dask")
    config = str(ROOT / "configs" / "lds_bandwidth.yaml")
    code, lines = _error_lines(capsys, "run", config, "--scheduler", "tcp://127.0.0.1:9")
    assert (code, lines) == (
        2,
        [
            "wgpsim: error: scheduler tcp://127.0.0.1:9 needs distributed: "
            "pip install 'wgpsim[dask]'"
        ],
    )


def test_a_confidence_level_other_than_95_without_scipy(capsys, without):
    without("scipy")
    config = str(ROOT / "configs" / "lds_drift.yaml")
    code, lines = _error_lines(capsys, "run", config, "--set", "drift.confidence=0.9")
    assert (code, lines) == (
        2,
        ["wgpsim: error: confidence 0.9 needs scipy: pip install 'wgpsim[stats]'"],
    )


def test_the_main_job_runs_without_any_extra(tmp_path):
    # a fresh interpreter in which no module of an extra can be imported, as after
    # `pip install -e .` (the block is set before pandas or anything else is imported)
    code = (
        "import sys; sys.modules.update(dict.fromkeys({!r})); "
        "from wgpsim.cli import main; "
        "sys.exit(main(['run', 'configs/lds_bandwidth.yaml', '--out', {!r}]))"
    ).format(OPTIONAL, str(tmp_path / "out"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "results.csv").exists()
    assert "323" in done.stdout  # the plain layout's cycles (README)
