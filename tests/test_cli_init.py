"""`wgpsim init DIR` and `wgpsim --version`: a starting set of files a user edits."""

import json
import tomllib
from pathlib import Path

import pytest
from bandwidth_reference import BANDWIDTH_BURSTS

import wgpsim
from wgpsim.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _run_cycles(config: Path, capsys) -> dict[str, int]:
    assert main(["run", str(config), "--json", "--set", BANDWIDTH_BURSTS]) == 0
    return {r["layout"]: r["cycles"] for r in json.loads(capsys.readouterr().out)}


def test_init_writes_configs_that_run_and_a_hardware_file_to_edit(
    tmp_path, monkeypatch, capsys, bandwidth_cycles
):
    target = tmp_path / "study"
    assert main(["init", str(target)]) == 0
    capsys.readouterr()
    assert {"lds_bandwidth.yaml", "gemm_128x128.yaml", "mi450.yaml"} <= {
        p.name for p in target.iterdir()
    }
    assert (target / "traces" / "two_pairs_conflict.jsonl").is_file()
    monkeypatch.chdir(target)
    assert _run_cycles(Path("lds_bandwidth.yaml"), capsys) == bandwidth_cycles
    # the written hardware file is the one the configs use: an edit shows in the cycles (16
    # cycles less latency, 16 less per measurement: one un-overlapped round trip)
    hw = target / "mi450.yaml"
    hw.write_text(hw.read_text().replace("lds_latency: 56", "lds_latency: 40"))
    faster = {layout: cycles - 16 for layout, cycles in bandwidth_cycles.items()}
    assert _run_cycles(Path("lds_bandwidth.yaml"), capsys) == faster
    assert main(["replay", "traces/two_pairs_conflict.jsonl", "--json"]) == 0


def test_init_never_overwrites(tmp_path, capsys):
    (tmp_path / "lds_bandwidth.yaml").write_text("mine\n")
    assert main(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "lds_bandwidth.yaml: already exists" in err and "--force" in err
    assert (tmp_path / "lds_bandwidth.yaml").read_text() == "mine\n"
    assert not (tmp_path / "mi450.yaml").exists()  # nothing half-written
    assert main(["init", str(tmp_path), "--force"]) == 0
    assert (tmp_path / "lds_bandwidth.yaml").read_text().startswith("#")


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"wgpsim {wgpsim.__version__}"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "wgpsim.__version__"}


def test_license_is_the_one_pyproject_names():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "MIT"}
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
