"""Loop timing on hand-made loops whose figures follow from the hardware model by hand
(lds_latency 56, barrier_latency 7, one pass of 32 lanes of b64 / 16 lanes of b128 per port
cycle), and the Chrome trace against the trace-event format."""

from __future__ import annotations

import json
import numbers

import numpy as np
import pytest

from wgpsim.errors import TraceError
from wgpsim.hw import load_hardware
from wgpsim.kernel.loop.chrome_trace import loop_chrome_trace
from wgpsim.kernel.loop.timing import time_loop
from wgpsim.trace.trace import TraceBuilder

HW = load_hardware()
LAT, BAR = HW.timing.lds_latency, HW.timing.barrier_latency
LANE = np.arange(32)


class Loop:
    """A TraceBuilder that keeps each row's iteration and label."""

    def __init__(self, warps: int) -> None:
        self.b, self.it, self.lab, self.i = TraceBuilder(warps), [], [], 0

    def add(self, label: str, method: str, *args) -> None:
        getattr(self.b, method)(*args)
        rows = len(self.b.build(check=False)) - len(self.it)
        self.it += [self.i] * rows
        self.lab += [label] * rows

    def time(self, **kw):
        return time_loop(self.b.build(), HW, iteration=self.it, label=self.lab, **kw)


def test_latency_hidden_behind_work():
    """One warp: a b64 load, 200 cycles of work, then the wait. The load (1 pass) completes at
    issue + 1 + 56 = 57 < 200: the wait costs nothing, 57 cycles in flight all hidden, and the
    iteration is 200 cycles of work; without LDS it is the same 200."""
    lp = Loop(1)
    for i in range(3):
        lp.i = i
        lp.add("load", "load", 0, "ds_load_b64", 8 * LANE)
        lp.add("wmma", "delay", 0, 200)
        lp.add("wait", "wait_ds", 0, 0)
    lt = lp.time(engine="des")
    assert lt.cycles_per_iteration == 200
    assert lt.exposed == 0 and lt.hidden == 1 + LAT and lt.warps["in_flight"][0] == 1 + LAT
    assert lt.what_if("no_lds") == 200
    assert "LDS is exposed for 0 of 200 cycles per iteration" in lt.sentence()


def test_exposed_wait_is_charged_to_the_last_load():
    """One warp: op A (1 b64 pass), op B (1 b64 pass), wait_ds 0, 100 of work. A is granted
    at 0 and completes 57; B issues at 1, granted at 1, completes 58. The wait starts at 1 (the
    warp resumes in the cycle B issues) and ends at 58: 56 cycles up to A's completion charged
    to A, the last 1 to B, and B's own issue stall (reached at 0, issued at 1: issue_interval)
    to B too. Iteration = 58 + 100 = 158; exposed 58, all of it."""
    lp = Loop(1)
    for i in range(3):
        lp.i = i
        lp.add("A", "load", 0, "ds_load_b64", 8 * LANE)
        lp.add("B", "load", 0, "ds_load_b64", 4096 + 8 * LANE)
        lp.add("wait", "wait_ds", 0, 0)
        lp.add("wmma", "delay", 0, 100)
    lt = lp.time(engine="des")
    assert lt.cycles_per_iteration == 58 + 100
    ops = lt.ops.set_index("op")
    assert ops.loc["A", "exposed"] == 57 - 1 and ops.loc["B", "exposed"] == 1 + 1
    assert lt.exposed == 58
    assert ops.loc["A", "instructions"] == 1 and ops.loc["A", "latency"] == 1 + LAT


def test_bank_conflicts_and_the_ideal_banks_what_if():
    """A b32 load whose 32 lanes are 256 B apart: every lane in bank 0, 32 bank cycles (31 of
    them conflict cycles). Completion at 32 + 56 = 88, then 50 of work: 138 per iteration; with
    ideal banks 1 + 56 + 50 = 107, 31 fewer."""
    lp = Loop(1)
    for i in range(2):
        lp.i = i
        lp.add("strided", "load", 0, "ds_load_b32", 256 * LANE)
        lp.add("wait", "wait_ds", 0, 0)
        lp.add("work", "delay", 0, 50)
    lt = lp.time(engine="fast")
    assert lt.steady_from == 1
    assert lt.cycles_per_iteration == 32 + LAT + 50
    assert lt.ops.set_index("op").loc["strided", "bank_conflict_cycles"] == 31
    assert lt.what_if("ideal_banks") == 1 + LAT + 50
    assert lt.saving("ideal_banks") == 31


def test_a_barrier_behind_another_warps_wait_is_exposed():
    """Warp 0 loads (b64, 1 pass) and waits; warp 1 goes straight to the barrier. Warp 1 waits
    at the barrier while warp 0 waits for its load: cycles 0 .. 57 behind LDS (exposed, charged
    to the load), then the release latency 7 (not LDS)."""
    lp = Loop(2)
    for i in range(2):
        lp.i = i
        lp.add("load", "load", 0, "ds_load_b64", 8 * LANE)
        lp.add("wait", "wait_ds", 0, 0)
        lp.add("barrier", "barrier")
    lt = lp.time(engine="des")
    assert lt.cycles_per_iteration == 1 + LAT + BAR
    w1 = lt.warps.set_index("warp").loc[1]
    assert w1["exposed_barrier"] == 1 + LAT and w1["barrier_other"] == BAR
    assert lt.ops.set_index("op").loc["load", "exposed"] == pytest.approx((2 * (1 + LAT)) / 2)


def test_separate_partitions_what_if():
    """Warps 0 (pair A) and 1 (pair B) each issue one b128 load (2 passes) into partition 0:
    4 passes one a cycle, the last load served at 4 (completes 60); on separate partitions both
    pairs go at once: served 2, completes 58. Then 100 of work and the barrier. In cycles 0, 1
    and 2 both heads ask and one waits: 3 partition-stall cycles per iteration."""
    lp = Loop(2)
    for i in range(2):
        lp.i = i
        for w in range(2):
            lp.add("load", "load", w, "ds_load_b128", 1024 * w + 16 * LANE)
            lp.add("wait", "wait_ds", w, 0)
            lp.add("work", "delay", w, 100)
        lp.add("barrier", "barrier")
    lt = lp.time(engine="des")
    assert lt.cycles_per_iteration == 4 + LAT + 100 + BAR
    assert lt.what_if("separate_partitions") == 2 + LAT + 100 + BAR
    assert lt.ops["partition_stall_cycles"].sum() == 3
    assert "separating partitions would save 2" in lt.sentence()


def test_bad_provenance_is_one_error():
    t = TraceBuilder(1).build()
    with pytest.raises(TraceError, match="iteration"):
        time_loop(t, HW, iteration=[], label=[])


# ---- the Chrome trace -----------------------------------------------------------------------


def check_chrome_trace(doc) -> None:
    """The trace-event format ("Trace Event Format", Google, the JSON object form): an object
    with a ``traceEvents`` list; every event has ``ph``, ``pid``/``tid`` integers; a complete
    event (``X``) a string ``name``, numeric ``ts`` and ``dur`` >= 0; a counter (``C``) numeric
    ``args``; a metadata event (``M``) one of the defined names with its ``args``;
    ``displayTimeUnit`` "ms" or "ns". Complete events of one thread do not overlap (Perfetto
    nests or rejects them); the time unit is said (``otherData.time_unit``)."""
    assert isinstance(doc, dict) and isinstance(doc["traceEvents"], list)
    assert doc.get("displayTimeUnit", "ms") in ("ms", "ns")
    assert "1 simulated cycle" in doc["otherData"]["time_unit"]
    meta = {"process_name", "process_labels", "process_sort_index", "thread_name"}
    meta |= {"thread_sort_index"}
    spans: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for e in doc["traceEvents"]:
        assert e["ph"] in ("X", "M", "C"), e
        assert type(e["pid"]) is int and type(e["tid"]) is int, e
        if e["ph"] == "X":
            assert isinstance(e["name"], str)
            assert isinstance(e["ts"], numbers.Real) and isinstance(e["dur"], numbers.Real)
            assert e["dur"] >= 0 and e["ts"] >= 0
            assert isinstance(e.get("args", {}), dict)
            spans.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
        elif e["ph"] == "C":
            assert e["args"] and all(isinstance(v, numbers.Real) for v in e["args"].values())
        else:
            assert e["name"] in meta and isinstance(e["args"], dict)
            key = {"process_labels": "labels"}.get(e["name"], "name")
            key = key if not e["name"].endswith("sort_index") else "sort_index"
            assert key in e["args"]
    for line in spans.values():
        line.sort()
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(line, line[1:], strict=False))


def test_chrome_trace_of_a_loop():
    """Two warps, one b128 load each in partition 0, a wait, 100 of work: a process per warp
    with its program and LDS service threads and an in-flight counter, and a process of the
    ports; one cycle shown as 1 ns, said in the trace (issue 25: ~18 tracks per warp, no ports,
    no unit)."""
    lp = Loop(2)
    for w in range(2):
        lp.add("load", "load", w, "ds_load_b128", 1024 * w + 16 * LANE)
        lp.add("wait", "wait_ds", w, 0)
        lp.add("work", "delay", w, 100)
    trace = lp.b.build()
    lt = time_loop(trace, HW, iteration=lp.it, label=lp.lab, what_ifs=())
    doc = json.loads(json.dumps(loop_chrome_trace(lt, kernel="gemm")))
    check_chrome_trace(doc)
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert names == {0: "gemm CTA0 LDS ports", 1: "gemm CTA0 warp 0", 2: "gemm CTA0 warp 1"}
    threads = {
        (e["pid"], e["args"]["name"]) for e in doc["traceEvents"] if e["name"] == "thread_name"
    }
    assert threads == {(0, "port L"), (0, "port C"), (1, "program"), (1, "LDS service"),
                       (2, "program"), (2, "LDS service")}  # fmt: skip
    scopes = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    by_track = {}
    for e in scopes:
        by_track.setdefault((e["pid"], e["tid"]), []).append(e["name"])
    assert by_track[(1, 0)] == by_track[(2, 0)] == ["wait", "work"]
    assert by_track[(1, 1)] == by_track[(2, 1)] == ["load"]
    # both pairs' loads hit partition 0: the port alternates A0 (cycle 0), B0 (1), A1 (2),
    # B1 (3), so warp 1 (pair B) is first granted at 1 and served by 4, completing at 4 + 56
    load1 = next(e for e in scopes if (e["pid"], e["tid"]) == (2, 1))
    assert load1["args"]["cycles"] == [1, 4] and load1["dur"] == 3 / 1000
    assert (load1["args"]["issue"], load1["args"]["complete"]) == (0, 4 + LAT)
    # the ports: every granted pass (2 per load, 1 bank cycle each), on its port's thread
    grants = lt.result.events().query("status == 'granted'")
    ports = [e for e in scopes if e["pid"] == 0]
    assert len(ports) == len(grants) == 4
    assert sorted(e["args"]["cycles"][0] for e in ports) == sorted(grants["cycle"].tolist())
    # the in-flight counter of warp 1: 1 from issue 0 to completion 60, then 0
    counter = [(e["ts"] * 1000, e["args"]["instructions"]) for e in doc["traceEvents"]
               if e["ph"] == "C" and e["pid"] == 2]  # fmt: skip
    assert counter == [(0, 1), (4 + LAT, 0)]


def test_chrome_trace_check_rejects_a_string_pid_and_overlaps():
    bad = {"traceEvents": [{"name": "x", "ph": "X", "pid": "p", "tid": 0, "ts": 0, "dur": 1}]}
    bad["otherData"] = {"time_unit": "1 ns shown = 1 simulated cycle"}
    with pytest.raises(AssertionError):
        check_chrome_trace(bad)
    bad["traceEvents"][0]["pid"] = 0
    check_chrome_trace(bad)
    bad["traceEvents"].append({**bad["traceEvents"][0], "ts": 0.5})  # overlaps on one thread
    with pytest.raises(AssertionError):
        check_chrome_trace(bad)


def test_a_loop_without_lds():
    """Only work: nothing exposed, no op rows, every what-if the same 30 cycles (regression:
    an empty arbiter log)."""
    lp = Loop(1)
    for i in range(2):
        lp.i = i
        lp.add("work", "delay", 0, 30)
    lt = lp.time(engine="fast")
    assert lt.cycles_per_iteration == 30 and lt.exposed == 0 and lt.ops.empty
    assert set(lt.what_ifs.values()) == {30}


def test_wait_tensor_is_exposed_and_charged_to_the_copy():
    """One warp: a TDM instruction of 2 rows (256 B each, into partition 0), wait_tensor 0,
    20 of work. Rows enter the queue at 0 and 1, served 1 and 2; the instruction completes at
    2 + 56 = 58: the wait from 0 to 58 is exposed and charged to the copy; iteration 58 + 20."""
    lp = Loop(1)
    for i in range(2):
        lp.i = i
        lp.add("copy", "tdm", 0, 256 * np.arange(2)[:, None] + 8 * LANE)
        lp.add("wait", "wait_tensor", 0, 0)
        lp.add("work", "delay", 0, 20)
    lt = lp.time(engine="des")
    assert lt.cycles_per_iteration == 2 + LAT + 20
    assert lt.exposed == 2 + LAT and lt.warps["exposed_wait"][0] == 2 + LAT
    ops = lt.ops.set_index("op")
    assert ops.loc["copy", "exposed"] == 2 + LAT and ops.loc["copy", "instructions"] == 2
    assert lt.what_if("no_lds") == 20


@pytest.mark.parametrize("name", ["matmul", "matmul_fp8"])
def test_ideal_banks_of_a_conflict_free_loop_reuses_its_run(name, monkeypatch):
    """matmul's loop has no bank conflicts: ``ideal_banks`` reuses the loop's own run; its
    figure equals a real run on the ideal banks. matmul_fp8's has some: it is simulated."""
    from importlib import import_module
    from pathlib import Path

    from wgpsim.engine import simulate
    from wgpsim.frontend.sources import read_kernel
    from wgpsim.kernel.loop.program import loop_program
    from wgpsim.kernel.loop.timing import _cycles_per_iteration, time_kernel_loop
    from wgpsim.kernel.loop.traces import loop_trace
    from wgpsim.kernel.loop.whatif import ideal_banks

    runs = []
    timing = import_module("wgpsim.kernel.loop.timing")
    monkeypatch.setattr(timing, "simulate", lambda *a, **k: runs.append(a[0]) or simulate(*a, **k))
    folder = Path(__file__).resolve().parents[1] / "examples" / "kernels" / name
    klt = loop_trace(loop_program(read_kernel(folder), hw=HW), None, HW)
    lt = time_kernel_loop(klt, HW, engine="des")
    conflicted = lt.result.bank_conflict_cycles > 0
    assert len(runs) == (4 if conflicted else 3) and conflicted == (name == "matmul_fp8")
    t2, hw2 = ideal_banks(klt.trace, HW)
    again = simulate(t2, hw2, engine="fast", record_ops=True)
    cpi = _cycles_per_iteration(again, t2, klt.iteration, lt.iterations, lt.steady_from)
    assert lt.what_ifs["ideal_banks"] == float(cpi.max())


def test_a_steady_iteration_is_the_same_for_3_and_40_iterations():
    """Issue 25: ``--iterations 1000`` was slow, each wait scanning every earlier row (quadratic
    in the rows). The waits are now charged per warp in one sorted search over its loads
    (``_charge_waits``); the figures of a steady iteration do not depend on how many were
    timed."""
    figures = []
    for n in (3, 40):
        lp = Loop(2)
        for i in range(n):
            lp.i = i
            for w in range(2):
                lp.add("load", "loads", w, "ds_load_b128", 512 * np.arange(8)[:, None] + 16 * LANE)
                lp.add("wait", "wait_ds", w, 0)
                lp.add("wmma", "delay", w, 100)
            lp.add("barrier", "barrier")
        lt = lp.time(engine="des", what_ifs=())
        figures.append((lt.cycles_per_iteration, lt.exposed, lt.ops["exposed"].tolist()))
    assert figures[0][1] > 0
    assert figures[0] == figures[1]
