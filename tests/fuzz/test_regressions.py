"""One regression case per defect of issue 15 (each found as a traceback, an echoed file, a
lost result or a trusted config), in the order the issue lists them."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli

from wgpsim.errors import ConfigError
from wgpsim.experiments import run_experiment
from wgpsim.experiments.executor import SCHEDULER_ENV, run_points

ROOT = Path(__file__).resolve().parents[2]
LDS = ROOT / "configs" / "lds_bandwidth.yaml"
SMALL = ["--set", "burst_lengths=[4, 8]", "--workers", "1"]


# -- security ------------------------------------------------------------------------------------
def test_a_config_file_cannot_name_a_scheduler(tmp_path):
    config = tmp_path / "shared.yaml"
    config.write_text(LDS.read_text() + "\nexecution: {scheduler: 'tcp://127.0.0.1:8786'}\n")
    outcome = run_cli("run", config, "--out", tmp_path / "out")
    outcome.assert_one_line("field 'execution.scheduler'", "--scheduler", SCHEDULER_ENV)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match="cannot name a Dask scheduler"):
        run_experiment(LDS, overrides={"execution": {"scheduler": "tcp://h:1"}})


def test_the_scheduler_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(SCHEDULER_ENV, "nohost")
    outcome = run_cli("run", LDS, "--out", tmp_path / "out")
    outcome.assert_one_line("scheduler nohost: not an address")


def test_inproc_scheduler_is_refused_at_once():
    with pytest.raises(ConfigError, match="no scheduler of this process listens there"):
        run_points(abs, [1], scheduler="inproc://x")
    run_cli("run", LDS, "--scheduler", "inproc://127.0.0.1/1/1").assert_one_line("inproc://")


def test_an_error_never_prints_a_files_contents(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("password: hunter2-" + "x" * 200 + "\nsecond line of the file\n")
    trace = ROOT / "examples" / "traces" / "bank_conflict.jsonl"
    for argv in (
        ("replay", trace, "--hw", secret),
        ("run", LDS, "--hw", secret, "--out", tmp_path / "out"),
        ("run", secret, "--out", tmp_path / "out"),
    ):
        outcome = run_cli(*argv)
        outcome.assert_one_line(str(secret.name))
        assert "hunter2" not in outcome.err
