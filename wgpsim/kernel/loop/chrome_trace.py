"""A timed loop as a Chrome trace (JSON) that Perfetto and chrome://tracing open, in the shape of
Triton proton's intra-kernel trace.

Proton's intra-kernel writer (``third_party/proton/csrc/lib/Data/TraceDataIO/TraceWriter.cpp``,
``StreamChromeTraceWriter``) writes ``{"displayTimeUnit": "ns", "traceEvents": [...]}`` with one
process per CTA (``"KERNEL Core<proc> CTA<cta>"``), one thread per warp and line (``"warp <w>
(line <k>)"``: overlapping scopes of one warp go on separate lines, first fit by start time),
and one complete (``"ph": "X"``) event per scope, ``ts`` and ``dur`` in microseconds of its
nanosecond clock. wgpsim writes the same shape with integer ``pid``/``tid`` (named by
``process_name`` / ``thread_name`` metadata events, as the Chrome format defines them) and one
simulated cycle shown as one nanosecond (``ts`` = cycle / 1000; ``args`` carry the cycles):

- line 0 of warp w: its program, one scope per row from the cycle it reached the row to the cycle
  it moved on (LDS rows that issued at once, and waits that did not wait, take no time and are
  left out), named by the row's label (its TTGIR op, or the mnemonic of other work);
- lines 1, 2, ...: its LDS instructions in flight, issue to completion (``lds_latency`` after the
  last pass), the args holding the first grant, the end of service and the stall cycles.

>>> from wgpsim.trace.trace import TraceBuilder
>>> from wgpsim.engine import simulate
>>> b = TraceBuilder(1)
>>> b.load(0, "ds_load_b64", 8 * np.arange(32))
>>> b.wait_ds(0, 0)
>>> t = b.build()
>>> doc = chrome_trace(t, simulate(t, record_ops=True).ops(t), ["load", "wait"], kernel="k")
>>> [(e["name"], e["tid"], e["ts"], e["dur"]) for e in doc["traceEvents"] if e["ph"] == "X"]
[('wait', 0, 0.0, 0.057), ('load', 1, 0.0, 0.057)]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wgpsim.trace.instructions import NUM_LDS_OPS

LINES_PER_WARP = 64
"""tid = warp x LINES_PER_WARP + line (a warp never has more than ``dscnt_max`` + 1 lines)."""


def chrome_trace(
    trace, times, label, *, kernel: str = "kernel", cta: int = 0, iteration=None
) -> dict[str, Any]:
    """The Chrome trace of one workgroup's run: ``times`` is ``Result.ops(trace)``, ``label``
    one name per row (module docstring)."""
    label = np.asarray(label, dtype=object)
    arrive, leave = times["arrive"].to_numpy(), times["leave"].to_numpy()
    issue, complete = times["issue"].to_numpy(), times["complete"].to_numpy()
    granted, served = times["granted"].to_numpy(), times["served"].to_numpy()
    stalls, ops = times["stall_cycles"].to_numpy(), times["op"].to_numpy()
    warp = trace.warp.astype(np.int64)
    events: list[dict[str, Any]] = [
        _meta("process_name", cta, 0, {"name": f"{kernel} Core0 CTA{cta}"}),
        _meta("process_sort_index", cta, 0, {"sort_index": cta}),
    ]
    scopes: list[dict[str, Any]] = []
    lines_used: dict[int, int] = {}
    for w in range(trace.num_warps):
        rows = np.flatnonzero(warp == w)
        lines_used[w] = 1
        for r in rows:
            if leave[r] > arrive[r]:
                scopes.append(
                    _scope(
                        label[r], kernel, cta, w, 0, arrive[r], leave[r], _args(r, ops, iteration)
                    )
                )
        lds = rows[(trace.op[rows] < NUM_LDS_OPS) & (issue[rows] >= 0)]
        ends: list[int] = []  # per line, the end of its last scope
        for r in lds[np.argsort(issue[lds], kind="stable")]:
            line = next((k for k, e in enumerate(ends) if e <= issue[r]), len(ends))
            if line == len(ends):
                ends.append(0)
            ends[line] = complete[r]
            args = _args(r, ops, iteration)
            args.update(
                issue=int(issue[r]),
                granted=int(granted[r]),
                served=int(served[r]),
                complete=int(complete[r]),
                stall_cycles=int(stalls[r]),
            )
            scopes.append(_scope(label[r], kernel, cta, w, line + 1, issue[r], complete[r], args))
        lines_used[w] = 1 + len(ends)
    for w, n in lines_used.items():
        for line in range(n):
            tid = w * LINES_PER_WARP + line
            name = f"warp {w} (line {line})" + ("" if line == 0 else " LDS in flight")
            events.append(_meta("thread_name", cta, tid, {"name": name}))
            events.append(_meta("thread_sort_index", cta, tid, {"sort_index": tid}))
    return {"displayTimeUnit": "ns", "traceEvents": events + scopes}


def loop_chrome_trace(lt, *, kernel: str = "kernel", cta: int = 0) -> dict[str, Any]:
    """``chrome_trace`` of a ``wgpsim.kernel.loop.timing.LoopTiming`` (its trace, per-row
    cycles, labels and iterations)."""
    return chrome_trace(
        lt.trace, lt.op_times, lt.label, kernel=kernel, cta=cta, iteration=lt.iteration
    )


def _args(r: int, ops, iteration) -> dict[str, Any]:
    args: dict[str, Any] = {"row": int(r), "op": str(ops[r])}
    if iteration is not None:
        args["iteration"] = int(iteration[r])
    return args


def _scope(name, cat, pid, warp, line, start, end, args) -> dict[str, Any]:
    args = {**args, "cycles": [int(start), int(end)]}
    return {
        "name": str(name),
        "cat": cat,
        "ph": "X",
        "pid": int(pid),
        "tid": int(warp * LINES_PER_WARP + line),
        "ts": int(start) / 1000,
        "dur": (int(end) - int(start)) / 1000,
        "args": args,
    }


def _meta(name: str, pid: int, tid: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "ph": "M", "pid": int(pid), "tid": int(tid), "args": args}
