"""One regression case per finding of issue 24 (silent wrong results, mixed or partial outputs,
unbounded memory, tracebacks, inputs taken as given), each run as a user runs the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli

from wgpsim.frontend.probes import catalogue, write_manifest

ROOT = Path(__file__).resolve().parents[2]


# -- 1. a silent wrong result: cycle counts beyond any real measurement ----------------------
@pytest.fixture
def kit(tmp_path: Path) -> Path:
    write_manifest(catalogue(), tmp_path / "manifest.json")
    return tmp_path


@pytest.mark.parametrize(
    "cell, shown",
    [
        (str(2**63), f"'{2**63}' is out of range (valid: 0..{2**48})"),
        ("1e30", "'1e30' is out of range"),
        ("inf", "'inf' is out of range"),
        ("9" * 400, "an integer of 400 digits is out of range"),
        ("-3", "'-3' is out of range"),
        ("6.5", "'6.5' is not a whole number"),
    ],
)
@pytest.mark.parametrize("verb", [["compare"], ["calibrate", "fit"]])
def test_a_cycle_count_out_of_range_is_refused(kit, verb, cell, shown):
    (kit / "m.csv").write_text(f"probe,warp,cycles\nbanks_s4,0,60\nbanks_s4,0,{cell}\n")
    outcome = run_cli(*verb, kit / "m.csv", "--manifest", kit / "manifest.json")
    outcome.assert_one_line("m.csv: row 3 column 'cycles'", shown)


def test_a_warp_of_1e30_is_refused(kit):
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,1e30,60\n")
    run_cli("calibrate", "fit", kit / "m.csv", "--manifest", kit / "manifest.json").assert_one_line(
        "m.csv: row 2 column 'warp'", "'1e30' is out of range (valid: 0..65535)"
    )


def _proton(dur: str) -> str:
    return (
        '{"traceEvents": [{"ph": "X", "name": "banks_s4", "cat": "banks_s4", '
        f'"pid": "banks_s4 Core0 CTA0", "tid": "warp 0 (line 0)", "ts": 0, "dur": {dur}}}]}}'
    )


@pytest.mark.parametrize(
    "text, message",
    [
        (_proton("Infinity"), "Infinity is not a JSON number"),
        (_proton("NaN"), "NaN is not a JSON number"),
        (_proton("1e300"), "'dur' 1e+300 is out of range"),
        (_proton("9" * 400), "an integer of 400 digits"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (_proton("0.062").replace("warp 0", "warp " + "9" * 30), "is out of range"),
    ],
)
def test_a_bad_proton_trace_is_one_line(kit, text, message):
    (kit / "p.json").write_text(text)
    run_cli("compare", kit / "p.json").assert_one_line("p.json", message)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda m: {**m, "version": True}, "manifest version True, this wgpsim reads 1"),
        (lambda m: {**m, "version": 10**400}, "an integer of 401 digits"),
        (lambda m: {**m, "probes": json.loads("[" * 50 + "]" * 50)}, "probes[0]"),
    ],
)
def test_a_bad_manifest_is_one_line(kit, edit, message):
    manifest = json.loads((kit / "manifest.json").read_text())
    (kit / "manifest.json").write_text(json.dumps(edit(manifest)))
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    run_cli("compare", kit / "m.csv").assert_one_line("manifest.json", message)


def test_a_deeply_nested_manifest_is_one_line(kit):
    (kit / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    run_cli("compare", kit / "m.csv").assert_one_line("manifest.json", "nested too deeply")


def test_a_counter_of_infinity_is_refused(kit):
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    (kit / "c.csv").write_text(
        "Kernel_Name,Counter_Name,Counter_Value\nbanks_s4,SQ_INSTS_LDS,inf\n"
    )
    run_cli("compare", kit / "m.csv", "--counters", kit / "c.csv").assert_one_line(
        "c.csv", "'SQ_INSTS_LDS'", "is out of range (valid: 0..2**53)"
    )


def test_a_long_probe_name_is_not_echoed(kit):
    name = "x" * 200_000
    (kit / "m.csv").write_text(f"probe,warp,cycles\n{name},0,60\n")
    outcome = run_cli("compare", kit / "m.csv")
    outcome.assert_one_line("a string of 200000 characters is not in the manifest")
    assert len(outcome.err) < 300
