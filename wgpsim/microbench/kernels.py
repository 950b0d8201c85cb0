"""Traces of the two measured kernels the experiments time, built from layouts and lowerings.

* :func:`layout_microbenchmark`: the AMD blog's LDS bandwidth microbenchmark for one
  distributed layout read out of one shared layout at the allocator's bases: per-lane addresses
  (``wgpsim.layout.addresses``), back-to-back vector loads, barriers and clock reads
  (``wgpsim.trace.generate.microbenchmark_trace``).
* :func:`k_step_trace`: one K step of a GEMM's operand loads, from lowered ``local_load``\\ s.

The hardware layer decides where the buffers live (the allocator); these functions take the
bases it chose, so the trace layer stays below it.

>>> from wgpsim.layout.notation import parse
>>> blocked = parse("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], "
...                 "warpsPerCTA = [4, 1], order = [1, 0]}>")
>>> plain = parse("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>")
>>> trace = layout_microbenchmark(blocked, plain, (4, 8192), 2, 0, "ds_load_b128")
>>> trace.num_warps, len(trace), trace.addr[5, :2].tolist()   # warp 0's first load: row 0
(4, 148, [0, 16])
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from wgpsim.layout.addresses import local_load_addresses
from wgpsim.trace.generate import microbenchmark_trace, vector_loads
from wgpsim.trace.instructions import instruction
from wgpsim.trace.trace import Trace, TraceBuilder
from wgpsim.trace.validate import DEFAULT_LDS_BYTES

__all__ = ["k_step_trace", "layout_microbenchmark"]


def layout_microbenchmark(
    distributed: Any,
    shared: Any,
    shape: Sequence[int],
    elem_bytes: int,
    bases: int | Sequence[int],
    op: str,
    *,
    lds_bytes: int = DEFAULT_LDS_BYTES,
) -> Trace:
    """The microbenchmark reading a ``shape`` tensor of ``distributed`` layout out of ``shared``
    at ``bases`` (one LDS byte address, or one per partition buffer) with ``op`` loads."""
    addresses = local_load_addresses(distributed, shared, tuple(shape), elem_bytes, bases)
    vec = instruction(op).bytes_per_lane // elem_bytes
    blocks = vector_loads(addresses, elem_bytes, vec, op)
    return microbenchmark_trace(blocks, op, lds_bytes=lds_bytes)


def k_step_trace(lowerings: Iterable[Any], *, lds_bytes: int = DEFAULT_LDS_BYTES) -> Trace:
    """One K step's operand loads: barrier, clock, every operand's loads, wait, clock (each
    warp issues the same sequence; the engine's lock step is the AMD blog's assumption).

    ``lowerings`` are :class:`wgpsim.trace.lowering.Lowering` values: each warp issues their
    instructions as the assembly holds them (``Lowering.add_to``)."""
    lowerings = list(lowerings)
    b = TraceBuilder(num_warps=lowerings[0].num_warps, lanes=lowerings[0].lanes)
    b.barrier()
    for w in range(b.num_warps):
        b.clock(w, "start")
        for low in lowerings:
            low.add_to(b, w)
        b.wait_ds(w, 0)
        b.clock(w, "end")
    return b.build(lds_bytes=lds_bytes)
