"""The CLI verbs that print results show rocprof-compute's LDS metrics and a per-instruction bank
table; one default engine; replay --timeline says where the figure went and takes PDF/SVG."""

import json
from pathlib import Path

import pytest

from wgpsim.cli import main

ROOT = Path(__file__).resolve().parents[1]
CONFLICT = ROOT / "examples" / "traces" / "bank_conflict.jsonl"
PAIRS = ROOT / "examples" / "traces" / "two_pairs_conflict.jsonl"
SEED_TOY = [
    "lower",
    "--shared",
    "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>",
    "--dst",
    "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], "
    "[16, 0]], warp = [], block = []}>",
    "--shape",
    "32x8",
    "--dtype",
    "bf16",
    "--simulate",
]


def test_replay_prints_the_metrics_and_the_bank_table(capsys):
    assert main(["replay", str(CONFLICT), "--engine", "des"]) == 0
    out = capsys.readouterr().out
    for name in ("SQ_LDS_IDX_ACTIVE", "SQ_LDS_BANK_CONFLICT", "Partition Conflict Cycles"):
        assert name in out
    assert "per instruction" in out and "ds_load_b32" in out
    assert "(des engine)" in out  # the engine that ran


def test_replay_json_metrics(capsys):
    assert main(["replay", str(PAIRS), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    metrics = payload["lds_metrics"]
    assert metrics["SQ_LDS_BANK_CONFLICT"] == 0 and metrics["Partition Conflict Cycles"] > 0
    assert payload["engine"] == "fast"
    (row,) = payload["per_instruction"]
    assert row["instruction"] == "ds_load_b128" and row["LDS Instructions"] == 8


@pytest.mark.parametrize("suffix", [".pdf", ".svg", ".png"])
def test_replay_timeline_formats_and_says_where(tmp_path, capsys, suffix):
    figure = tmp_path / f"timeline{suffix}"
    assert main(["replay", str(PAIRS), "--timeline", str(figure)]) == 0
    assert f"timeline: {figure}" in capsys.readouterr().out
    head = figure.read_bytes()[:5]
    assert head == {".pdf": b"%PDF-", ".svg": b"<?xml", ".png": b"\x89PNG\r"}[suffix]


def test_replay_timeline_other_format_is_one_line(tmp_path, capsys):
    assert main(["replay", str(PAIRS), "--timeline", str(tmp_path / "t.jpg")]) == 2
    err = capsys.readouterr().err
    assert ".png, .svg, .pdf" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("engine", ["des", "fast"])
def test_lower_engine_flag(capsys, engine):
    """The seed's toy: one ds_load_tr16_b128, two passes, 1 bank-conflict cycle each."""
    assert main([*SEED_TOY, "--engine", engine, "--json"]) == 0
    sim = json.loads(capsys.readouterr().out)["simulation"]
    assert sim["engine"] == engine and sim["bank_conflict_cycles"] == 2
    assert sim["lds_metrics"]["Bank Conflict Rate (%)"] == pytest.approx(100.0)


def test_lower_text_shows_the_bank_table(capsys):
    assert main([*SEED_TOY, "--engine", "des"]) == 0
    out = capsys.readouterr().out
    assert "(des engine)" in out and "Bank Conflict Rate (%)" in out and "ds_load_tr16" in out


@pytest.mark.parametrize("columns", ["80", "200"])
def test_counter_names_stay_whole_at_any_width(capsys, monkeypatch, columns):
    """rocprof-compute's counter names are what a user greps for: never broken across lines."""
    monkeypatch.setenv("COLUMNS", columns)
    assert main(["replay", str(PAIRS)]) == 0
    table = capsys.readouterr().out.split("per instruction")[1]
    for name in ("SQ_LDS_IDX_ACTIVE", "SQ_LDS_BANK_CONFLICT", "Bank Conflicts/Access"):
        assert name in table
    assert max(len(line) for line in table.splitlines()) <= int(columns)


def test_replay_default_runs_a_small_trace_on_des_in_a_fresh_process():
    """The default engine is ``auto``: a newcomer's first replay loads no numba (on a fresh
    machine it would compile the fast engine for a few passes; a built fast engine would take
    it, loading no numba either)."""
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "wgpsim", "replay", str(CONFLICT)],
        env={**os.environ, "WGPSIM_FAST_KERNELS": "jit"},
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    assert "(des engine)" in done.stdout
