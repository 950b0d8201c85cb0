"""What ships in the package: one hardware file, the example configs and traces, no copied
hardware constants in code, and configs that run from anywhere."""

from __future__ import annotations

import ast
import json
import shutil
import tomllib
from pathlib import Path

import pytest
from bandwidth_reference import BANDWIDTH_BURSTS

from wgpsim import packaged
from wgpsim.cli import main
from wgpsim.hw import load_hardware

ROOT = Path(__file__).resolve().parents[1]


def test_package_data_is_the_checkouts_configs_and_traces():
    assert (packaged.DATA / "configs").resolve() == (ROOT / "configs").resolve()
    assert (packaged.DATA / "traces").resolve() == (ROOT / "examples" / "traces").resolve()
    shipped = {p.name for p in packaged.example_configs()}
    assert {"lds_bandwidth.yaml", "gemm_128x128.yaml", "lds_drift.yaml"} <= shipped
    assert {p.name for p in packaged.example_traces()} >= {"two_pairs_conflict.jsonl"}


def test_pyproject_ships_every_example():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["wgpsim"]
    base = ROOT / "wgpsim"
    shipped = {p.resolve() for pattern in patterns for p in base.glob(pattern)}
    for path in [*packaged.example_configs(), *packaged.example_traces()]:
        assert path.resolve() in shipped, path
    assert packaged.hardware_path().resolve() in shipped


def _hardware_numbers() -> set[int]:
    hw = load_hardware()
    return {hw.partitions.lds_bytes, hw.partitions.size}


def test_no_hardware_constant_is_copied_into_code():
    """327680 (LDS bytes) and 65536 (partition size), as literals or products like 64 * 1024,
    live in the hardware file; code reads them (docstrings may show them in examples; bit
    masks like 1 << 16 are not hardware facts)."""
    numbers = _hardware_numbers()
    found = []
    for path in (ROOT / "wgpsim").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            value = None
            if isinstance(node, ast.Constant) and type(node.value) is int:
                value = node.value
            elif (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Mult)
                and all(
                    isinstance(n, ast.Constant) and type(n.value) is int
                    for n in (node.left, node.right)
                )
            ):
                value = eval(compile(ast.Expression(node), str(path), "eval"))  # constants only
            if value in numbers:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found


def test_a_config_copied_elsewhere_runs(tmp_path, monkeypatch, capsys, bandwidth_cycles):
    shutil.copy(ROOT / "configs" / "lds_bandwidth.yaml", tmp_path)
    monkeypatch.chdir(tmp_path)
    code = main(["run", "lds_bandwidth.yaml", "--json", "--set", BANDWIDTH_BURSTS])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["layout"]: r["cycles"] for r in rows} == bandwidth_cycles
    assert (tmp_path / "results" / "lds_bandwidth" / "results.csv").is_file()


def test_a_hardware_file_that_is_nowhere(tmp_path, capsys):
    config = tmp_path / "e.yaml"
    text = (ROOT / "configs" / "lds_bandwidth.yaml").read_text()
    config.write_text(text.replace("hardware: mi450.yaml", "hardware: mi451.yaml"))
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "mi451.yaml: no such hardware file" in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["mi450.yaml", "mi450"])
def test_packaged_hardware_by_bare_name(name):
    assert packaged.packaged_hardware(name) == packaged.hardware_path()
