"""TDM writes (``tensor_load_to_lds`` rows, ``wait_tensor``): a hand-timed case on both engines,
trace files and validation (docs/DESIGN.md, "TDM writes"; the random traces of
tests/test_engine_differential.py mix them with everything else)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from wgpsim.engine import simulate
from wgpsim.errors import TraceError
from wgpsim.hw import load_hardware
from wgpsim.trace import read_trace, write_trace
from wgpsim.trace.trace import Trace, TraceBuilder

HW = load_hardware()
LAT = HW.timing.lds_latency  # 56
LANE = np.arange(32)


def one_warp() -> Trace:
    """Warp 0: one TDM instruction writing 1 KiB (4 rows of 256 B, contiguous from 0), a b64
    load, wait_tensor 0, wait_ds 0."""
    b = TraceBuilder(1)
    b.tdm(0, 256 * np.arange(4)[:, None] + 8 * LANE)
    b.load(0, "ds_load_b64", 4096 + 8 * LANE)
    b.wait_tensor(0, 0)
    b.wait_ds(0, 0)
    return b.build()


@pytest.mark.parametrize("engine", ["des", "fast"])
def test_tdm_by_hand(engine):
    """The warp hands the 4 rows to its pair's copy engine at 0 and goes on to the load. The
    copy engine takes the queue's write port first: its rows enter at 0, 1, 2, 3, each one pass
    of 1 bank cycle (32 x 8 contiguous bytes: 64 banks once), granted at once, served 1..4,
    complete 57..60 (+ lds_latency, like a store); the load issues at 4 once the copy engine is
    done, served 5, completes 61. wait_tensor 0 (reached at 4, when the load issues) leaves at
    60, when the instruction's last row completes; wait_ds 0 leaves at 61."""
    t = one_warp()
    r = simulate(t, HW, engine=engine, record_ops=True)
    ops = r.ops(t)
    assert ops["op"].tolist() == ["tensor_load_to_lds"] * 4 + [
        "ds_load_b64",
        "wait_tensor",
        "wait_ds",
    ]
    assert ops["arrive"].tolist() == [0, 0, 0, 0, 0, 4, 4 + LAT]
    assert ops["issue"].tolist()[:5] == [0, 1, 2, 3, 4]
    assert ops["served"].tolist()[:5] == [1, 2, 3, 4, 5]
    assert ops["complete"].tolist()[:5] == [1 + LAT, 2 + LAT, 3 + LAT, 4 + LAT, 5 + LAT]
    assert ops["leave"].tolist() == [0, 0, 0, 0, 4, 4 + LAT, 5 + LAT]
    assert r.passes == 5 and r.bytes == 4 * 256 + 256
    assert r.instructions["tdm"] == 4  # rows


def test_wait_tensor_counts_instructions_not_rows():
    """Two TDM instructions of 2 rows each; wait_tensor 1 waits only for the first one's last
    row (row 1: served 2, complete 2 + 56), not for all four rows."""
    b = TraceBuilder(1)
    for k in range(2):
        b.tdm(0, 512 * k + 256 * np.arange(2)[:, None] + 8 * LANE)
    b.wait_tensor(0, 1)
    b.wait_tensor(0, 0)
    t = b.build()
    for engine in ("des", "fast"):
        ops = simulate(t, HW, engine=engine, record_ops=True).ops(t)
        assert ops["leave"].tolist()[4:] == [2 + LAT, 4 + LAT]


def test_tdm_rows_in_trace_files(tmp_path):
    """JSON Lines: ``"last": true`` on an instruction's last row (absent = false); Parquet
    keeps ``arg``; both read back to the same trace and the same timing."""
    t = one_warp()
    for name in ("t.jsonl", "t.parquet"):
        write_trace(t, tmp_path / name)
        back = read_trace(tmp_path / name)
        assert back.arg.tolist() == t.arg.tolist() and back.op.tolist() == t.op.tolist()
        assert simulate(back, HW).total_cycles == simulate(t, HW).total_cycles
    text = (tmp_path / "t.jsonl").read_text().splitlines()
    lines = [json.loads(x) for x in text if not x.startswith("#")]
    tdm = [x for x in lines if x.get("op") == "tensor_load_to_lds"]
    assert [x.get("last", False) for x in tdm] == [False, False, False, True]
    assert {"warp": 0, "op": "wait_tensor", "n": 0} in lines


def test_bad_tdm_rows_are_one_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"warp": 0, "op": "tensor_load_to_lds", "last": 1, "addr": {"base": 0, "stride": 8}}\n'
    )
    with pytest.raises(TraceError, match="'last': expected true or false"):
        read_trace(bad)
    neg = tmp_path / "neg.jsonl"
    neg.write_text('{"warp": 0, "op": "wait_tensor", "n": -1}\n')
    with pytest.raises(TraceError, match="negative"):
        read_trace(neg)
    t = one_warp()
    arg = t.arg.copy()
    arg[0] = 2
    with pytest.raises(TraceError, match="field 'last'"):
        simulate(Trace(t.warp, t.op, arg, t.addr, t.labels, t.num_warps), HW)
