"""A timed loop as a Chrome trace (JSON) that Perfetto and chrome://tracing open.

The JSON object form of the trace-event format, as Triton proton's intra-kernel writer
(``third_party/proton/csrc/lib/Data/TraceDataIO/TraceWriter.cpp``) writes it: complete
(``"ph": "X"``) events with ``ts`` and ``dur`` in microseconds and ``displayTimeUnit`` "ns".
**One simulated cycle is shown as one nanosecond** (``ts`` = cycle / 1000): the trace says so
in ``otherData.time_unit`` and in every process's label, and each event's ``args.cycles`` holds
its cycles. Integer ``pid``/``tid`` are named by ``process_name`` / ``thread_name`` metadata.

A few tracks per warp, grouped by process (a warp's ~18 lines of overlapping in-flight
instructions made the trace unreadable):

- a process per warp (``KERNEL CTA<c> warp <w>``), with the thread ``program``: one scope per
  row from the cycle the warp reached it to the cycle it moved on (LDS rows that issued at once,
  and waits that did not wait, take no time and are left out), named by the row's label (its
  TTGIR op, or the mnemonic of other work); the thread ``LDS service``: each LDS instruction
  from its first grant to the end of its service (a second line only where two overlap), its
  args holding issue, completion and stall cycles; and the counter ``LDS in flight``: the
  warp's instructions issued and not complete;
- a process ``KERNEL CTA<c> LDS ports`` (when the arbiter's log is given) with a thread per
  port, ``port L`` and ``port C``: every grant of a pass, for its bank cycles, named by the
  row's label, its args the warp, pair, pass and partitions.

>>> from wgpsim.trace.trace import TraceBuilder
>>> from wgpsim.engine import simulate
>>> b = TraceBuilder(1)
>>> b.load(0, "ds_load_b64", 8 * np.arange(32))
>>> b.wait_ds(0, 0)
>>> t = b.build()
>>> r = simulate(t, record_ops=True, record_events=True)
>>> doc = chrome_trace(t, r.ops(t), ["load", "wait"], kernel="k", events=r.events())
>>> [(e["name"], e["pid"], e["tid"], e["ts"], e["dur"]) for e in doc["traceEvents"] if e["ph"] == "X"]
[('wait', 1, 0, 0.0, 0.057), ('load', 1, 1, 0.0, 0.001), ('load', 0, 0, 0.0, 0.001)]
>>> sorted({e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"})
['LDS service', 'port C', 'port L', 'program']
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Any

import numpy as np

from wgpsim.trace.instructions import NUM_LDS_OPS

PIDS_PER_CTA = 1024
"""pid = cta x PIDS_PER_CTA + 1 + warp; the CTA's ports are pid cta x PIDS_PER_CTA."""
PORTS = ("L", "C")
"""The arbiter's two ports (the AMD blog: "two ports, L and C"), one thread each."""
TIME_UNIT = "1 ns shown = 1 simulated cycle (ts and dur are cycles / 1000 us; args.cycles)"


def chrome_trace(
    trace, times, label, *, kernel: str = "kernel", cta: int = 0, iteration=None, events=None
) -> dict[str, Any]:
    """The Chrome trace of one workgroup's run: ``times`` is ``Result.ops(trace)``, ``label``
    one name per row, ``events`` the arbiter's log (``Result.events()``; None: no port
    tracks) (module docstring)."""
    label = np.asarray(label, dtype=object)
    arrive, leave = times["arrive"].to_numpy(), times["leave"].to_numpy()
    issue, complete = times["issue"].to_numpy(), times["complete"].to_numpy()
    ops = times["op"].to_numpy()
    warp = trace.warp.astype(np.int64)
    meta: list[dict[str, Any]] = []
    scopes: list[dict[str, Any]] = []
    base = cta * PIDS_PER_CTA
    with _paused_gc():
        for w in range(trace.num_warps):
            pid = base + 1 + w
            meta += _process(pid, f"{kernel} CTA{cta} warp {w}", sort=1 + w)
            rows = np.flatnonzero(warp == w)
            for r in rows[leave[rows] > arrive[rows]].tolist():
                args = _args(r, ops, iteration)
                scopes.append(_scope(label[r], kernel, pid, 0, arrive[r], leave[r], args))
            lds = rows[(trace.op[rows] < NUM_LDS_OPS) & (issue[rows] >= 0)]
            service = _service(lds, times, label, kernel, pid, ops, iteration)
            scopes += service
            lines = max((s["tid"] for s in service), default=1)  # tid 1 is the first line
            meta += _threads(pid, ["program"] + [_numbered("LDS service", k) for k in range(lines)])
            scopes += _in_flight(issue[lds], complete[lds], kernel, pid)
        if events is not None:
            meta += _process(base, f"{kernel} CTA{cta} LDS ports", sort=0)
            ports, names = _ports(events, label, kernel, base)
            scopes += ports
            meta += _threads(base, names)
    return {
        "displayTimeUnit": "ns",
        "otherData": {"time_unit": TIME_UNIT},
        "traceEvents": meta + scopes,
    }


def loop_chrome_trace(lt, *, kernel: str = "kernel", cta: int = 0) -> dict[str, Any]:
    """``chrome_trace`` of a ``wgpsim.kernel.loop.timing.LoopTiming`` (its trace, per-row
    cycles, labels, iterations and the arbiter's log)."""
    events = lt.result.events() if lt.result is not None else None
    return chrome_trace(
        lt.trace,
        lt.op_times,
        lt.label,
        kernel=kernel,
        cta=cta,
        iteration=lt.iteration,
        events=events,
    )


def _service(lds, times, label, kernel, pid, ops, iteration) -> list[dict[str, Any]]:
    """Each LDS row of a warp from its first grant to the end of its service, on the first
    line free at its start (tid 1, 2, ...: a second line only where two overlap)."""
    cols = {c: times[c].to_numpy() for c in ("issue", "granted", "served", "complete")}
    stalls = times["stall_cycles"].to_numpy()
    order = lds[np.argsort(cols["granted"][lds], kind="stable")]
    mine = {c: v[order].tolist() for c, v in cols.items()}  # Python ints, row by row
    out = []
    ends: list[int] = []
    for i, (r, stall) in enumerate(zip(order.tolist(), stalls[order].tolist(), strict=True)):
        start, end = mine["granted"][i], max(mine["served"][i], mine["granted"][i])
        line = _first_free(ends, start, end)
        args = _args(r, ops, iteration)
        args.update({c: v[i] for c, v in mine.items()}, stall_cycles=stall)
        out.append(_scope(label[r], kernel, pid, 1 + line, start, end, args))
    return out


def _in_flight(issue, complete, kernel, pid) -> list[dict[str, Any]]:
    """The counter ``LDS in flight``: a value at every cycle the count changes."""
    change: dict[int, int] = {}
    for a, b in zip(issue.tolist(), complete.tolist(), strict=True):
        change[a] = change.get(a, 0) + 1
        change[b] = change.get(b, 0) - 1
    out, count = [], 0
    for cycle in sorted(change):
        count += change[cycle]
        out.append(
            {"name": "LDS in flight", "cat": kernel, "ph": "C", "pid": int(pid), "tid": 0,
             "ts": cycle / 1000, "args": {"instructions": count}}
        )  # fmt: skip
    return out


def _ports(events, label, kernel, pid) -> tuple[list[dict[str, Any]], list[str]]:
    """Every granted pass on its port's thread (first fit within a port: a port grants one
    pass a cycle, so its line is one unless bank cycles overlap); the threads' names."""
    grants = events[events["status"] == "granted"]
    out: list[dict[str, Any]] = []
    names: list[str] = []
    for port in PORTS:
        mine = grants[grants["port"] == port].sort_values("cycle", kind="stable")
        cols = ("cycle", "bank_cycles", "row", "warp", "pair", "pass_index", "partition_list")
        ends: list[int] = []
        first = len(names)
        rows = zip(*(mine[c].tolist() for c in cols), strict=True)
        for cycle, bank, row, warp, pair, k, parts in rows:
            start, end = int(cycle), int(cycle) + int(bank)
            line = first + _first_free(ends, start, end)
            args = {"row": int(row), "warp": int(warp), "pair": str(pair),
                    "pass_index": int(k), "partitions": str(parts),
                    "bank_cycles": int(bank)}  # fmt: skip
            out.append(_scope(label[int(row)], kernel, pid, line, start, end, args))
        names += [_numbered(f"port {port}", k) for k in range(max(len(ends), 1))]
    return out, names


def _first_free(ends: list[int], start: int, end: int) -> int:
    """The first line whose last scope ended by ``start`` (a new line if none); ``ends`` is
    updated with ``end``."""
    line = next((k for k, e in enumerate(ends) if e <= start), len(ends))
    if line == len(ends):
        ends.append(0)
    ends[line] = end
    return line


@contextmanager
def _paused_gc():
    """The cyclic garbage collector paused while a trace's ~90,000 small dicts are built
    (they hold no cycles; the collector would walk the heap again every 700 of them: 0.2 of
    the attention example's 0.5 CPU-s)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _numbered(name: str, k: int) -> str:
    return name if k == 0 else f"{name} ({k + 1})"


def _process(pid: int, name: str, *, sort: int) -> list[dict[str, Any]]:
    return [
        _meta("process_name", pid, 0, {"name": name}),
        _meta("process_labels", pid, 0, {"labels": "1 ns = 1 cycle"}),
        _meta("process_sort_index", pid, 0, {"sort_index": sort}),
    ]


def _threads(pid: int, names: list[str]) -> list[dict[str, Any]]:
    out = []
    for tid, name in enumerate(names):
        out.append(_meta("thread_name", pid, tid, {"name": name}))
        out.append(_meta("thread_sort_index", pid, tid, {"sort_index": tid}))
    return out


def _args(r: int, ops, iteration) -> dict[str, Any]:
    args: dict[str, Any] = {"row": int(r), "op": str(ops[r])}
    if iteration is not None:
        args["iteration"] = int(iteration[r])
    return args


def _scope(name, cat, pid, tid, start, end, args) -> dict[str, Any]:
    args = {**args, "cycles": [int(start), int(end)]}
    return {
        "name": str(name),
        "cat": cat,
        "ph": "X",
        "pid": int(pid),
        "tid": int(tid),
        "ts": int(start) / 1000,
        "dur": (int(end) - int(start)) / 1000,
        "args": args,
    }


def _meta(name: str, pid: int, tid: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "ph": "M", "pid": int(pid), "tid": int(tid), "args": args}
