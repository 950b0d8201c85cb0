"""What one operand's ``local_load`` reads under any ctaLayout, computed once per shared layout.

Triton lowers a dot operand's ``local_load`` from ``cvt = dst.invert_and_compose(shared)``.
The destination's warp bases are the ctaLayout's warp bases projected on the operand's non-K
dim, and a linear layout is XOR-linear in its inputs, so the element a lane of warp ``w`` reads
in instruction ``k`` is the element warp 0 reads there, XOR the warp's tile offset. An
:class:`OperandPlan` keeps, for one (operand, register bases, shared layout, transposed loads)
the lowering of warp 0 as element coordinates and the byte address of every element, so a
candidate's addresses are two array gathers instead of a lowering (``docs/DESIGN.md``,
"Layout search"). ``tests/test_search.py`` checks the gathers against ``wgpsim.lower``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from wgpsim.layout.shared import PartitionedSharedLayout
from wgpsim.microbench.candidates import Gemm
from wgpsim.microbench.pieces import element_addresses
from wgpsim.trace.lowering import choose

#: Buffer ``p`` of a plan lies at ``p << BUFFER_SHIFT`` (a sentinel, decoded per candidate).
BUFFER_SHIFT = 24
OFFSET_MASK = (1 << BUFFER_SHIFT) - 1


@dataclass(frozen=True, eq=False)
class OperandPlan:
    """One operand's lowering, kept independent of the warps' tiles and the allocation.

    ``coords[k, lane]``: the (dim0, dim1) element lane reads in instruction k of warp 0;
    ``addr[dim0, dim1]``: sentinel address ``buffer << 24 | byte offset`` of every element.
    """

    instruction: str
    eligibility: str
    reason: str
    coords: np.ndarray = field(repr=False)
    addr: np.ndarray = field(repr=False)
    num_buffers: int

    @property
    def instructions(self) -> int:
        return int(self.coords.shape[0])

    @property
    def transposed(self) -> bool:
        return "_tr" in self.instruction

    def addresses(self, offsets: np.ndarray, bases: np.ndarray) -> np.ndarray:
        """Byte addresses ``[warp, k, lane]`` for warps at element ``offsets[warp] = (d0, d1)``
        and buffers at ``bases``."""
        d0 = self.coords[None, :, :, 0] ^ offsets[:, None, None, 0]
        d1 = self.coords[None, :, :, 1] ^ offsets[:, None, None, 1]
        sentinel = self.addr[d0, d1]
        return bases[sentinel >> BUFFER_SHIFT] + (sentinel & OFFSET_MASK)


def plan_addresses(gemm: Gemm, op: int, shared: Any) -> np.ndarray:
    """Sentinel address (``buffer << BUFFER_SHIFT | byte offset``) of every element of operand
    ``op`` in ``shared``, int64 ``[dim0, dim1]`` (what :class:`OperandPlan` keeps as ``addr``;
    it depends on neither the ctaLayout nor the transposed loads)."""
    buffers = shared.num_partitions if isinstance(shared, PartitionedSharedLayout) else 1
    sentinel = [p << BUFFER_SHIFT for p in range(buffers)]
    addr = element_addresses(shared, gemm.operand_shape(op), gemm.elem_bytes, sentinel)
    return addr.astype(np.int64)


def make_plan(
    gemm: Gemm,
    wmma: Any,
    op: int,
    shared: Any,
    allow_transpose: bool,
    dst: Any = None,
    addr: np.ndarray | None = None,
) -> OperandPlan:
    """The plan of operand ``op`` in ``shared`` (lowered once with ``wmma``'s ctaLayout;
    ``dst``: its destination layout, ``addr``: :func:`plan_addresses`, when the caller has
    them already)."""
    choice = choose(
        shared,
        gemm.dot_operand(wmma, op) if dst is None else dst,
        gemm.operand_shape(op),
        gemm.dtype,
        allow_transpose=allow_transpose,
    )
    lane, register = choice.sources()
    element = choice.dst_ll.apply({"register": register, "lane": lane, "warp": 0})
    coords = np.stack([element["dim0"], element["dim1"]], axis=-1).astype(np.int64)
    addr = plan_addresses(gemm, op, shared) if addr is None else addr
    buffers = shared.num_partitions if isinstance(shared, PartitionedSharedLayout) else 1
    plan = choice.plan
    return OperandPlan(plan.instruction, plan.eligibility, plan.reason, coords, addr, buffers)


__all__ = ["BUFFER_SHIFT", "OperandPlan", "make_plan", "plan_addresses"]
