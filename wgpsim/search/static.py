"""What one operand's loads do under one ctaLayout and shared layout, before the allocation
places its buffers: each pass's warp, instruction, bank cycles, buffer and byte span
(:class:`OperandStatic`), for many operands at once (:func:`operand_statics`: one
``wgpsim.hw.rules.pass_table`` over all their instructions, since a pass depends only on its
own instruction's lane addresses).

The partition a pass touches needs the buffers' addresses, which the allocation gives later:
``masks`` turns the byte spans into partition bitmasks for given buffer bases.

A K-contiguous A tile unswizzled, rows of 64 fp16 (128 B): the lanes of a ``ds_load_b128``
pass read rows 128 B apart, the same banks, four bank cycles a pass:

>>> from wgpsim.microbench.candidates import Gemm
>>> from wgpsim.microbench.operand_plan import make_plan
>>> from wgpsim.hw import load_hardware
>>> from wgpsim.layout.shared import SwizzledSharedLayout
>>> g = Gemm((64, 64, 32), "fp16", 1, (16, 16, 32))
>>> wmma = g.wmma((), ((0, 1), (0, 2), (1, 0), (2, 0)))
>>> shared = SwizzledSharedLayout(1, 1, 1, (1, 0))
>>> plan = make_plan(g, wmma, 0, shared, True)
>>> (s,) = operand_statics([(plan, shared, np.zeros((1, 2), dtype=np.int64), None)],
...                        load_hardware(), np.array([0]))
>>> plan.instruction, len(s.pass_bank), s.pass_bank.tolist()[:4], s.pair_busy
('ds_load_b128', 16, [4, 4, 4, 4], (64,))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wgpsim.hw import HardwareConfig
from wgpsim.hw.rules import pass_table
from wgpsim.microbench.operand_plan import BUFFER_SHIFT, OperandPlan
from wgpsim.trace.instructions import INSTRUCTIONS, WAVE_SIZES, op_code


@dataclass(frozen=True, eq=False)
class OperandStatic:
    """One operand under one ctaLayout and shared layout: its plan, warps' offsets and passes
    (warp, instruction, bank cycles, buffer, first and last byte offset in the buffer)."""

    plan: OperandPlan
    offsets: np.ndarray
    shared: Any
    pass_warp: np.ndarray
    pass_instr: np.ndarray
    pass_bank: np.ndarray
    pass_buf: np.ndarray
    pass_lo: np.ndarray
    pass_hi: np.ndarray
    pair_busy: tuple[int, ...]  # bank cycles per SIMD pair
    pieces: Any

    @property
    def bank_conflict_cycles(self) -> int:
        return int((self.pass_bank - 1).sum())

    def masks(self, bases: np.ndarray, partition_size: int) -> np.ndarray:
        """Partition bitmask of every pass with the buffers at ``bases``."""
        base = bases[self.pass_buf]
        lo = (base + self.pass_lo) // partition_size
        hi = (base + self.pass_hi) // partition_size
        return (np.int64(1) << lo) | (np.int64(1) << hi)


def operand_statics(
    items: Sequence[tuple[OperandPlan, Any, np.ndarray, Any]],
    hw: HardwareConfig,
    pairs: np.ndarray,
) -> list[OperandStatic]:
    """The :class:`OperandStatic` of each ``(plan, shared, warp offsets, pieces)``
    (``pairs[w]``: warp w's SIMD pair), from one pass table over every item's instructions."""
    addrs, bufs, codes, starts = [], [], [], [0]
    for plan, _, offsets, _ in items:
        zero = np.zeros(plan.num_buffers, dtype=np.int64)
        sentinel = np.arange(plan.num_buffers, dtype=np.int64) << BUFFER_SHIFT
        lane_addr = plan.addresses(offsets, zero)  # [..., lanes]: the layout's lanes
        lanes = lane_addr.shape[-1]
        addrs.append(lane_addr.reshape(-1, lanes))
        bufs.append((plan.addresses(offsets, sentinel).reshape(-1, lanes) >> BUFFER_SHIFT)[:, 0])
        codes.append(np.full(len(addrs[-1]), op_code(plan.instruction)))
        starts.append(starts[-1] + len(addrs[-1]))
    addr = np.concatenate(addrs)
    row, bank_cycles, lo, hi = _passes(np.concatenate(codes), addr, hw)
    cuts = np.searchsorted(row, starts)
    out = []
    for k, (plan, shared, offsets, pieces) in enumerate(items):
        part = slice(cuts[k], cuts[k + 1])
        own = row[part] - starts[k]
        bank = bank_cycles[part].astype(np.int64)
        pass_warp = own // plan.instructions
        busy = np.bincount(pairs[pass_warp], weights=bank, minlength=pairs.max() + 1)
        width = INSTRUCTIONS[plan.instruction].bytes_per_lane
        out.append(
            OperandStatic(
                plan,
                offsets,
                shared,
                pass_warp,
                own % plan.instructions,
                bank,
                bufs[k][own],
                lo[part],
                hi[part] + width - 1,
                tuple(int(x) for x in busy),
                pieces,
            )
        )
    return out


def _passes(codes: np.ndarray, addr: np.ndarray, hw: HardwareConfig) -> tuple[np.ndarray, ...]:
    """Every pass of instructions ``codes`` at lane addresses ``addr`` (``pass_table``'s
    order): its row, bank cycles, and lowest and highest active lane address. Each distinct
    (instruction, addresses) row is split once, since a pass depends on nothing else, and the
    plans of a search repeat most rows (on the AMD blog's tile, 455,040 rows hold 132,693
    distinct ones)."""
    key = np.concatenate([codes[:, None], addr], axis=1)
    digest = key @ _MIX[: key.shape[1]]  # wraps around: a hash, checked below
    _, first, inverse = np.unique(digest, return_index=True, return_inverse=True)
    if not np.array_equal(key[first][inverse], key):  # a collision: split every row
        first, inverse = np.arange(len(key)), np.arange(len(key))
    table = pass_table(codes[first], addr[first], hw)
    lanes = ((table.lane_mask[:, None] >> np.arange(addr.shape[1])[None, :]) & 1).astype(bool)
    rows = addr[first][table.row]
    lo = np.where(lanes, rows, np.iinfo(np.int64).max).min(axis=1)
    hi = np.where(lanes, rows, -1).max(axis=1)
    passes = np.bincount(table.row, minlength=len(first))
    start = np.cumsum(passes) - passes  # each distinct row's first pass in the table
    count = passes[inverse]
    row = np.repeat(np.arange(len(key)), count)
    within = np.arange(len(row)) - np.repeat(np.cumsum(count) - count, count)
    index = np.repeat(start[inverse], count) + within
    return row, table.bank_cycles[index], lo[index], hi[index]


_MIX = np.random.default_rng(2026).integers(1, 2**62, size=max(WAVE_SIZES) + 1, dtype=np.int64) | 1
"""Odd multipliers hashing an (instruction, 32 or 64 addresses) row into one int64 (a 32-lane
row takes the first 33: the hashes of wave32 rows are as before)."""

__all__ = ["OperandStatic", "operand_statics"]
