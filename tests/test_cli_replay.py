"""``wgpsim replay`` end to end, through ``wgpsim.cli.main``."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from wgpsim.cli import main

LANES = range(32)


def _write_trace(path, warps_partitions: dict[int, int], loads: int = 4) -> None:
    lines = []
    for w in warps_partitions:
        lines.append({"warp": w, "op": "barrier"})
        lines.append({"warp": w, "op": "clock", "label": "start"})
    for w, part in warps_partitions.items():
        for i in range(loads):
            base = part * 65536 + 512 * i
            lines.append(
                {"warp": w, "op": "ds_load_b128", "addr": [base + 16 * lane for lane in LANES]}
            )
        lines.append({"warp": w, "op": "wait_ds", "n": 0})
    for w in warps_partitions:
        lines.append({"warp": w, "op": "barrier"})
        lines.append({"warp": w, "op": "clock", "label": "end"})
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")


@pytest.fixture
def conflict(tmp_path):
    path = tmp_path / "conflict.jsonl"
    _write_trace(path, {0: 0, 1: 0})
    return path


@pytest.fixture
def separate(tmp_path):
    path = tmp_path / "separate.jsonl"
    _write_trace(path, {0: 0, 1: 1})
    return path


def _json(capsys, *argv) -> dict:
    assert main(["replay", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_output_shows_the_partition_conflict(capsys, conflict, separate):
    c, s = _json(capsys, conflict), _json(capsys, separate)
    assert c["passes"] == s["passes"] == 16 and c["bytes"] == 4096
    assert c["measured_cycles"] - s["measured_cycles"] == 8  # 16 serialized vs 8 parallel cycles
    assert (
        sum(c["partition_stall_cycles"].values()) > 0 == sum(s["partition_stall_cycles"].values())
    )
    assert c["port_busy_cycles"]["C"] == 0 and s["port_busy_cycles"]["C"] == 8
    assert c["trace"].endswith("conflict.jsonl")


def test_table_output(capsys, conflict):
    assert main(["replay", str(conflict)]) == 0
    out = capsys.readouterr().out
    assert "partition_stall_cycles_A" in out and "start_end_cycles" in out and "warp 1" in out


def test_set_and_hw_overrides(capsys, conflict, tmp_path):
    base = _json(capsys, conflict)["measured_cycles"]
    slower = _json(capsys, conflict, "--set", "timing.lds_latency=80")["measured_cycles"]
    assert slower - base == 80 - 56
    from wgpsim.hw import load_hardware

    hw_file = tmp_path / "hw.yaml"
    hw_file.write_text(
        json.dumps(load_hardware().with_overrides(**{"timing.barrier_latency": 17}).to_dict())
    )
    assert _json(capsys, conflict, "--hw", hw_file)["measured_cycles"] - base == 10


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_events_file(capsys, conflict, tmp_path, suffix):
    out = tmp_path / f"events{suffix}"
    d = _json(capsys, conflict, "--events", out)
    events = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert (events.status == "granted").sum() == d["passes"]
    assert (events.status == "stalled").sum() == sum(d["partition_stall_cycles"].values())
    assert not list(out.parent.glob(".events*"))  # no temporary file left behind


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--set", "timing.lds_latency=-1"],
            "error: --set timing.lds_latency=-1: field 'timing.lds_latency' must be a positive "
            "integer (valid: 1..65536), got -1",
        ),
        (
            ["--set", "timing.queue_depth=2", "--set", "ports.bytes_per_cycle=0"],
            "error: --set ports.bytes_per_cycle=0: field 'ports.bytes_per_cycle' must be",
        ),
        (
            ["--set", "timing.nope=1"],
            "--set timing.nope=1: cannot override unknown field 'timing.nope'",
        ),
        (["--set", "oops"], "expected key=value"),
        (["--events", "log.txt"], "unknown format '.txt'"),
        (["--engine", "fast9"], "unknown engine 'fast9'"),
    ],
)
def test_bad_config_is_one_line_exit_2(capsys, conflict, argv, message):
    assert main(["replay", str(conflict), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_bad_trace_is_one_line_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"warp": 0, "op": "ds_load_b128", "addr": [2] * 32}) + "\n")
    assert main(["replay", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wgpsim: error: ") and "aligned" in err and err.count("\n") == 1
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_unwritable_outputs_are_one_line_exit_2(capsys, conflict, tmp_path):
    typo = tmp_path / "typo" / "events.csv"
    assert main(["replay", str(conflict), "--events", str(typo)]) == 2
    err = capsys.readouterr().err
    assert f"{typo.parent}: no such file or directory" in err and err.count("\n") == 1
    assert not typo.parent.exists()  # no directory is created for a typo
    (tmp_path / "dir.csv").mkdir()
    assert main(["replay", str(conflict), "--events", str(tmp_path / "dir.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("wgpsim: error: ") and err.count("\n") == 1
    (tmp_path / "dir.jsonl").mkdir()
    assert main(["replay", str(tmp_path / "dir.jsonl")]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_wave64_trace_replays_on_a_wave64_file_only(capsys, tmp_path):
    """A trace of 64 lanes a warp on the MI450 file (wave32) is one line naming both, exit 2;
    on a wave64 hardware file it replays (one ds_load_b32 of 64 lanes: 256 B, one pass)."""
    import numpy as np
    import yaml
    from wave64_hardware import wave64

    from wgpsim.trace import TraceBuilder, write_trace

    b = TraceBuilder(1, lanes=64)
    b.clock(0, "start")
    b.load(0, "ds_load_b32", 4 * np.arange(64))
    b.wait_ds(0, 0)
    b.clock(0, "end")
    trace = write_trace(b.build(), tmp_path / "w64.jsonl")
    assert main(["replay", str(trace)]) == 2
    err = capsys.readouterr().err
    assert "the trace has 64 lanes per warp, but" in err and "wgp.warp_size 32" in err
    assert err.count("\n") == 1
    hw = tmp_path / "wave64.yaml"
    hw.write_text(yaml.safe_dump(wave64().to_dict()))
    assert main(["replay", str(trace), "--hw", str(hw), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["bytes"], out["passes"]) == (256, 1)
