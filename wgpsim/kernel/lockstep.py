"""One LDS op timed alone, as the report does (the AMD blog's lock-step measurement): its
trace (`op_trace`: all warps issue the op's instructions together after a barrier, between two
clock reads) and the physical partitions each SIMD pair touches (`pair_partitions`), and in
how many instructions pairs issuing together touch a common one (`co_located_instructions`).

>>> from wgpsim.hw.config import load_hardware
>>> from wgpsim.trace.lowering import lower
>>> low = lower("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
...     "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
...     "order = [1, 0]}>", (16, 64), "fp16")
>>> pair_partitions(low, load_hardware()), co_located_instructions(low, load_hardware())
({'A': (0,), 'B': (0,)}, 1)
>>> op_trace(low) is op_trace(low)
True
"""

from __future__ import annotations

import weakref

import numpy as np

from wgpsim.hw.config import HardwareConfig
from wgpsim.trace.instructions import INSTRUCTIONS
from wgpsim.trace.lowering import Lowering
from wgpsim.trace.trace import Trace, TraceBuilder

__all__ = ["co_located_instructions", "op_trace", "pair_partitions"]


def op_trace(low: Lowering) -> Trace:
    """Every warp's instructions of the op between a barrier + clock and wait_ds 0 + clock:
    the AMD blog's lock-step measurement of one op (built once per lowering: both immutable)."""
    trace = _TRACES.get(low)
    if trace is None:
        trace = _TRACES[low] = _op_trace(low)
    return trace


_TRACES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""op_trace's traces, while their lowering lives (`trace.lowering.lower` keeps the latest)."""


def _op_trace(low: Lowering) -> Trace:
    b = TraceBuilder(num_warps=low.num_warps, lanes=low.lanes)
    b.barrier()
    for w in range(low.num_warps):
        b.clock(w, "start")
        low.add_to(b, w)
        b.wait_ds(w, 0)
        b.clock(w, "end")
    return b.build()


def pair_partitions(low: Lowering, hw: HardwareConfig) -> dict[str, tuple[int, ...]]:
    """Physical LDS partitions each SIMD pair's lanes touch (first and last byte of each)."""
    touched = _touched(low, hw)  # [warp, instruction, partition]
    pairs = [hw.pair_of_warp(w) for w in range(low.num_warps)]
    out = {}
    for index, name in enumerate(hw.pair_names):
        mine = [w for w, p in enumerate(pairs) if p == index]
        out[name] = tuple(np.flatnonzero(touched[mine].any(axis=(0, 1))).tolist())
    return out


def co_located_instructions(low: Lowering, hw: HardwareConfig) -> int:
    """Instructions k in which warps of different pairs that issue together in lock step (the
    same issue round, warp // SIMDs) touch a common partition: where the pairs can collide."""
    touched = _touched(low, hw)
    simds = hw.wgp.simds
    hit = np.zeros(low.num_instructions, dtype=bool)
    for first in range(0, low.num_warps, simds):
        by_pair: dict[int, list[int]] = {}
        for w in range(first, min(first + simds, low.num_warps)):
            by_pair.setdefault(hw.pair_of_warp(w), []).append(w)
        if len(by_pair) > 1:  # a partition every pair of the round touches, per instruction
            common = np.logical_and.reduce([touched[ws].any(axis=0) for ws in by_pair.values()])
            hit |= common.any(axis=1)
    return int(hit.sum())


def _touched(low: Lowering, hw: HardwareConfig) -> np.ndarray:
    """Whether warp w's instruction k touches partition p (a lane's first or last byte),
    ``[warp, instruction, partition]`` (bool; unused addresses, < 0, touch none)."""
    size = hw.partitions.size
    width = INSTRUCTIONS[low.instruction].bytes_per_lane
    used = low.addresses >= 0
    first = np.where(used, low.addresses // size, -1)
    last = np.where(used, (low.addresses + width - 1) // size, -1)
    ends = np.concatenate([first, last], axis=2) + 1  # 0: no partition
    w, k, _ = ends.shape
    out = np.zeros((w, k, int(ends.max(initial=0)) + 1), dtype=bool)
    out[np.arange(w)[:, None, None], np.arange(k)[None, :, None], ends] = True
    return out[:, :, 1:]
