"""Per-row cycles (``simulate(..., record_ops=True)``): hand-computed cases on the reference
engine, and invariants every run must satisfy on both engines (the differential test holds
the two engines to each other row for row)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from test_engine_differential import VARIANTS, traces  # noqa: E402 (tests/ is on sys.path)

from wgpsim.engine import simulate
from wgpsim.errors import TraceError
from wgpsim.hw import load_hardware
from wgpsim.trace.trace import TraceBuilder

HW = load_hardware()
LAT = HW.timing.lds_latency  # 56
LANE = np.arange(32)


@pytest.mark.parametrize("engine", ["des", "fast"])
def test_one_warp_by_hand(engine):
    """One warp: two b128 loads of one partition, wait, 20 cycles of work, barrier.

    Load 0 issues at 0, its two passes granted at 0 and 1 (1 bank cycle each): served 2,
    complete 2 + 56 = 58. Load 1 is reached at 0 (the warp resumes when load 0 issues) and
    issues at 1 (issue_interval 1); its passes wait behind load 0's: granted 2 and 3, served
    4, complete 60. wait_ds 0 arrives at 1 (the warp resumes when load 1 issues) and leaves at
    60. delay 20: 60 -> 80. The barrier of one warp: leaves 80 + 7 (barrier_latency).
    """
    b = TraceBuilder(1)
    b.loads(0, "ds_load_b128", 512 * np.arange(2)[:, None] + 16 * LANE)
    b.wait_ds(0, 0)
    b.delay(0, 20)
    b.barrier()
    t = b.build()
    ops = simulate(t, HW, engine=engine, record_ops=True).ops(t)
    assert ops["op"].tolist() == ["ds_load_b128"] * 2 + ["wait_ds", "delay", "barrier"]
    assert ops["arrive"].tolist() == [0, 0, 1, 4 + LAT, 4 + LAT + 20]
    assert ops["issue"].tolist() == [0, 1, -1, -1, -1]
    assert ops["granted"].tolist() == [0, 2, -1, -1, -1]
    assert ops["served"].tolist() == [2, 4, -1, -1, -1]
    assert ops["complete"].tolist() == [2 + LAT, 4 + LAT, -1, -1, -1]
    assert ops["leave"].tolist() == [0, 1, 4 + LAT, 80, 87]
    assert ops["stall_cycles"].tolist() == [0] * 5


def test_partition_stall_lands_on_the_waiting_row():
    """Warps 0 (pair A) and 1 (pair B) each issue one b64 load into partition 0 at cycle 0.
    The tie goes to A (favor starts at 0): A granted at 0, B stalls one cycle, granted at 1."""
    b = TraceBuilder(2)
    for w in range(2):
        b.load(w, "ds_load_b64", 1024 * w + 8 * LANE)
    t = b.build()
    r = simulate(t, HW, engine="des", record_ops=True)
    ops = r.ops(t)
    assert ops["granted"].tolist() == [0, 1]
    assert ops["stall_cycles"].tolist() == [0, 1]
    assert r.partition_stall_cycles == {"A": 0, "B": 1}


def test_without_record_ops_there_is_no_table():
    t = TraceBuilder(1).build()
    with pytest.raises(TraceError, match="record_ops"):
        simulate(t, HW).ops(t)


@settings(max_examples=150, deadline=None)
@given(trace=traces(), variant=__import__("hypothesis").strategies.sampled_from(sorted(VARIANTS)))
def test_row_times_are_consistent(trace, variant):
    """Orders every run obeys: a row is reached before it is left, an LDS row's passes come
    after its issue, it completes lds_latency after its service ends, a wait_ds leaves only
    once its loads are few enough, the rows' stalls add up to the pairs', a barrier releases
    all warps in one cycle, and the arbiter log's grants bracket each row's service."""
    hw = VARIANTS[variant]
    r = simulate(trace, hw, engine="fast", record_events=True, record_ops=True)
    ops = r.ops(trace)
    tdm = ops["op"] == "tensor_load_to_lds"
    lds = (ops["issue"] >= 0) & ~tdm  # the rows the DS counter counts
    assert (ops["arrive"] >= 0).all() and (ops["leave"] >= ops["arrive"]).all()
    assert (ops.loc[lds, "issue"] >= ops.loc[lds, "arrive"]).all()
    assert (ops.loc[lds, "leave"] == ops.loc[lds, "issue"]).all()
    # a TDM row is handed to the copy engine at once; it enters the queue then or later
    assert (ops.loc[tdm, "leave"] == ops.loc[tdm, "arrive"]).all()
    assert (ops.loc[tdm, "issue"] >= ops.loc[tdm, "arrive"]).all()
    moved = ops["issue"] >= 0
    assert (ops.loc[moved, "complete"] == ops.loc[moved, "served"] + hw.timing.lds_latency).all()
    served = moved & (ops["granted"] >= 0)
    assert (ops.loc[served, "granted"] >= ops.loc[served, "issue"]).all()
    assert (ops.loc[served, "served"] > ops.loc[served, "granted"]).all()
    assert ops["stall_cycles"].sum() == sum(r.partition_stall_cycles.values())
    events = r.events()
    grants = events[events["status"] == "granted"]
    first = grants.groupby("row")["cycle"].min()
    end = (grants["cycle"] + grants["bank_cycles"]).groupby(grants["row"]).max()
    assert ops.loc[first.index, "granted"].tolist() == first.tolist()
    assert ops.loc[end.index, "served"].tolist() == end.tolist()
    stalls = events[events["status"] == "stalled"].groupby("row").size()
    assert ops.loc[stalls.index, "stall_cycles"].tolist() == stalls.tolist()
    # each wait_ds leaves once at most n of the warp's earlier loads are still incomplete
    for row in ops.index[ops["op"] == "wait_ds"]:
        w, left = ops.at[row, "warp"], ops.at[row, "leave"]
        earlier = ops[(ops["warp"] == w) & lds & (ops.index < row)]
        assert (earlier["complete"] > left).sum() <= trace.arg[row]
    # each wait_tensor leaves once at most n of the warp's earlier TDM instructions (their
    # last rows) are still incomplete
    for row in ops.index[ops["op"] == "wait_tensor"]:
        w, left = ops.at[row, "warp"], ops.at[row, "leave"]
        ends = ops[(ops["warp"] == w) & tdm & (trace.arg == 1) & (ops.index < row)]
        assert (ends["complete"] > left).sum() <= trace.arg[row]
    # the k-th barrier of every warp releases them all in the same cycle
    bars = ops[ops["op"] == "barrier"].copy()
    bars["k"] = bars.groupby("warp").cumcount()
    assert (bars.groupby("k")["leave"].nunique() == 1).all()
