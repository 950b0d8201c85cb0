"""What the model times for each calibration probe (:mod:`wgpsim.calibration.probes`): one trace
per probe, with the clock reads "start" and "end" where the Gluon kernel reads the clock.

Probes that load a tensor with ``local_load`` take their addresses from the lowering
(:func:`wgpsim.trace.lowering.lower`, held to real gfx1250 compiles by the corpus tests); the
others read rows of a plain buffer, and their addresses are written out here. The AMD blog's
microbenchmark at 4 warps, 32 loads per warp:

>>> from wgpsim.calibration.probes import probe
>>> t = probe_trace(probe("bandwidth_plain_w4_b32"))
>>> t.count_by_op()
{'ds_load_b128': 128, 'wait_ds': 4, 'barrier': 8, 'clock': 8}
>>> from wgpsim.engine import simulate
>>> simulate(t).measurement()                  # the AMD blog measured 323
323

A single round trip (clock, one ds_load_b64, s_wait_dscnt 0, clock) is the clock read, one
pass and the LDS latency, 4 + 1 + 56 in the shipped config:

>>> simulate(probe_trace(probe("round_trip_b64_x1"))).measurement()
61
"""

from __future__ import annotations

import numpy as np

from wgpsim.calibration.probes import STAGGER_CYCLES, Probe, layouts
from wgpsim.trace.instructions import LANES, instruction
from wgpsim.trace.lowering import Lowering, lower
from wgpsim.trace.lowering_asm import assemble
from wgpsim.trace.trace import Trace, TraceBuilder

__all__ = ["probe_lowering", "probe_trace", "timed_rows"]


def probe_lowering(p: Probe) -> Lowering | None:
    """The lowering of a layout-built probe's local_load (None for the others)."""
    lay = layouts(p)
    if lay is None:
        return None
    return lower(lay.shared, lay.distributed, lay.shape, lay.dtype, bases=list(lay.bases))


def _round_trip(p: Probe) -> Trace:
    """clock; ``loads`` x (one load of row i of a plain [loads, 32 x vec] buffer; wait 0); clock."""
    op = p.param("op")
    width = instruction(op).bytes_per_lane
    b = TraceBuilder(1)
    b.clock(0, "start")
    for i in range(p.param("loads")):
        b.load(0, op, i * LANES * width + width * np.arange(LANES))
        b.wait_ds(0, 0)
    b.clock(0, "end")
    return b.build()


def _barriers(p: Probe) -> Trace:
    """barrier; clock; ``barriers`` x barrier; clock (every warp)."""
    b = TraceBuilder(p.warps)
    b.barrier()
    for w in range(p.warps):
        b.clock(w, "start")
    for _ in range(p.param("barriers")):
        b.barrier()
    for w in range(p.warps):
        b.clock(w, "end")
    return b.build()


def _banks(p: Probe) -> Trace:
    """clock; ``loads`` ds_load_b32, lane l of load i at row 32 i + l of a plain fp32 buffer
    with ``stride`` bytes per row (the kernel's one-column slice), as LLVM issues them (it
    pairs them into ``ds_load_2addr[_stride64]_b32``: ``wgpsim.trace.lowering_asm``); wait 0;
    clock."""
    stride = p.param("stride")
    rows = np.arange(p.param("loads"))[:, None] * LANES + np.arange(LANES)[None, :]
    issued = assemble("ds_load_b32", (rows * stride)[None])
    b = TraceBuilder(1)
    b.clock(0, "start")
    for op, addr, dist in zip(issued.ops, issued.addresses[0], issued.distance, strict=True):
        b.load(0, op, addr, int(dist))
    b.wait_ds(0, 0)
    b.clock(0, "end")
    return b.build()


def _loaded(p: Probe, low: Lowering, *, closing_barrier: bool, stagger: bool) -> Trace:
    """barrier; [pair B: delay]; clock; the lowering's loads; wait 0; [barrier]; clock."""
    b = TraceBuilder(p.warps)
    b.barrier()
    for w in range(p.warps):
        if stagger and w % 2:  # warps 1, 3 run on SIMDs 1, 3: pair B
            b.delay(w, STAGGER_CYCLES)
        b.clock(w, "start")
        low.add_to(b, w)
        b.wait_ds(w, 0)
        if not closing_barrier:
            b.clock(w, "end")
    if closing_barrier:
        b.barrier()
        for w in range(p.warps):
            b.clock(w, "end")
    return b.build()


def probe_trace(p: Probe) -> Trace:
    """The trace of probe ``p``: what its Gluon kernel does between and around its clocks."""
    if p.family == "round_trip":
        return _round_trip(p)
    if p.family == "barrier":
        return _barriers(p)
    if p.family == "banks":
        return _banks(p)
    low = probe_lowering(p)
    if p.family in ("lane_groups", "issue"):
        b = TraceBuilder(1)
        b.clock(0, "start")
        low.add_to(b, 0)
        b.wait_ds(0, 0)
        b.clock(0, "end")
        return b.build()
    if p.family == "partition_pairs":
        staggered = p.param("timing") == "staggered"
        return _loaded(p, low, closing_barrier=False, stagger=staggered)
    return _loaded(p, low, closing_barrier=True, stagger=False)  # bandwidth, transposed


def timed_rows(trace: Trace, warp: int = 0) -> list[str]:
    """The ops of ``warp`` between its "start" and "end" clocks, by name (what the kernel's
    assembly must hold between its two ``s_get_shader_cycles_u64``).

    >>> from wgpsim.calibration.probes import probe
    >>> timed_rows(probe_trace(probe("round_trip_b64_x2")))
    ['ds_load_b64', 'wait_ds', 'ds_load_b64', 'wait_ds']
    """
    frame_ops = [trace.to_frame().op[r] for r in trace.ops_of(warp)]
    labels = [
        trace.clock_label(r) if op == "clock" else ""
        for r, op in zip(trace.ops_of(warp), frame_ops, strict=True)
    ]
    start, end = labels.index("start"), labels.index("end")
    return [str(op) for op in frame_ops[start + 1 : end]]
