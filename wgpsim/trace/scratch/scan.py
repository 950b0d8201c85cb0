"""The LDS traffic of ``tt.scan`` across warps, through its scratch buffer.

Triton 3.9.0's ``ScanOpToLLVM`` scans each thread's contiguous elements along the axis (a
*chunk*), then the chunk totals across the lanes of a warp (``ds_bpermute_b32`` shuffles, not
modelled here); when several warps lie along the axis (``ScanLoweringHelper``), the last lane
along the axis of each warp stores every chunk's total into scratch (``storeWarpAccumulator``),
a barrier, and every thread loads the totals of all the warps along the axis for each of its
chunks (``AddPartialReduce``). The scratch holds, per chunk, per warp along the axis, one
element per *parallel lane* (the threads that differ off the axis: ``parallelLaneId``, the
lane and warp bits of the other dims): element ``parallel + P * (axis_warp + W * chunk)`` with
``P`` parallel lanes and ``W`` warps along the axis (``reverse``: warp ``W - 1 - axis_warp``).
Several operands each use their own copy, one after the other, stored and loaded in turn.

LLVM then drops the loads nobody uses (the last warp's total of an accumulator's last axis
block: no warp needs it) and merges loads of consecutive elements (a 1-D scan: every lane
reads the same totals) into ``ds_load_b128``/``b96`` before pairing the rest into
``ds_*_2addr``. All of it read off Triton's LLVM-dialect addresses and assembly on 8 one-op
scans (`tests/fixtures/scratch_lowering/scan_cases`).

FlagGems' cumsum (``tensor<1024xf32>``, 4 elements a thread, 4 warps): two chunks a thread;
lane 31 of each warp stores two totals (16 B apart: one ``ds_store_2addr_b32``), and every
thread reads 7 of the 8 totals (``ds_load_b128`` + ``ds_load_b96``):

>>> low = lower_scan("#ttg.blocked<{sizePerThread = [4], threadsPerWarp = [32], "
...                  "warpsPerCTA = [4], order = [0]}>", (1024,), "fp32", 0)
>>> low.counts, low.dialect_counts, low.barriers
({'ds_store_2addr_b32': 1, 'ds_load_b128': 1, 'ds_load_b96': 1}, {'ds_store_b32': 2, 'ds_load_b32': 8}, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from wgpsim.errors import LayoutError
from wgpsim.layout.bits import log2
from wgpsim.layout.dtypes import dtype_bits, parse_shape
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.trace.lowering import MAX_VECTOR_BITS, PLAIN_LOADS, PLAIN_STORES, Lowering
from wgpsim.trace.lowering_asm import Issued, assemble
from wgpsim.trace.scratch.lowering import BARRIER, ScratchLowering, thread_layout

__all__ = ["ScanScratch", "live_partials", "lower_scan", "scan_scratch"]

VECTOR_LOADS = {**PLAIN_LOADS, 96: "ds_load_b96"}
"""Loads LLVM's load-store vectorizer merges consecutive elements into, by bits."""


def _gather_bits(index: np.ndarray, positions: Sequence[int]) -> np.ndarray:
    """The bits of ``index`` at ``positions``, packed in order (``pext``)."""
    out = np.zeros_like(index)
    for i, p in enumerate(positions):
        out |= ((index >> p) & 1) << i
    return out


def _split(layout: LinearLayout, dim: str, axis: int) -> tuple[list[int], list[int]]:
    """Positions of ``dim``'s bases along ``axis`` and off it; each basis must step one tensor
    dim (a blocked layout), none may be zero (broadcast lanes and warps are not modelled)."""
    along, off = [], []
    for i, b in enumerate(layout.get_bases(dim)):
        nonzero = [d for d, v in enumerate(b) if v]
        if len(nonzero) != 1:
            raise LayoutError(
                f"tt.scan: {dim} basis {list(b)} is not one step along one dim (a broadcast or "
                "mixed basis): its scratch traffic is not modelled"
            )
        (along if nonzero[0] == axis else off).append(i)
    return along, off


@dataclass(frozen=True)
class ScanScratch:
    """Where ``ScanLoweringHelper`` puts a scan's partial totals: ``parallel[warp, lane]``
    (``parallelLaneId``), ``axis_warp[warp]`` (the warp's rank along the axis, reflected for a
    reverse scan), ``last_lane[lane]`` (the lane that stores: the last along the axis),
    ``parallel_lanes`` (P) and ``axis_warps`` (W), and per chunk whether it is the last axis
    block of its accumulator (``last_block``) and its first (``first_block``: warp 0's totals
    there start the accumulator, the left operand of the combines after)."""

    parallel: np.ndarray
    axis_warp: np.ndarray
    last_lane: np.ndarray
    parallel_lanes: int
    axis_warps: int
    last_block: tuple[bool, ...]
    first_block: tuple[bool, ...]

    @property
    def elems(self) -> int:
        """Scratch elements of one operand."""
        return self.parallel_lanes * self.axis_warps * len(self.last_block)


def scan_scratch(layout: LinearLayout, axis: int, reverse: bool = False) -> ScanScratch | None:
    """The scratch of a scan along ``axis`` of ``layout`` ((register, lane, warp) -> tensor, no
    broadcast registers); None with one warp along the axis (no scratch)."""
    lane_axis, lane_off = _split(layout, "lane", axis)
    warp_axis, warp_off = _split(layout, "warp", axis)
    if not warp_axis:
        return None
    regs = [list(b) for b in layout.get_bases("register")]
    contiguous, blocks, step = [], [], 1
    for i, b in enumerate(regs):
        if b[axis] == step and not any(v for d, v in enumerate(b) if d != axis):
            contiguous.append(i)
            step *= 2
        elif b[axis]:
            blocks.append(i)
    lanes = layout.in_dim_size("lane")  # the layout's lane bases: 5 bits (wave32) or 6
    lane, warp = np.arange(lanes), np.arange(1 << len(warp_axis) + len(warp_off))[:, None]
    parallel = _gather_bits(lane, lane_off)[None, :] | (
        _gather_bits(warp, warp_off) << len(lane_off)
    )
    axis_warp = _gather_bits(warp[:, 0], warp_axis)
    if reverse:
        axis_warp = (1 << len(warp_axis)) - 1 - axis_warp
    full = sum(1 << i for i in contiguous)
    last = sum(1 << i for i in blocks)
    chunks = [r for r in range(1 << len(regs)) if r & full == full]
    return ScanScratch(
        parallel=parallel,
        axis_warp=axis_warp,
        last_lane=_gather_bits(lane, lane_axis) == (1 << len(lane_axis)) - 1,
        parallel_lanes=1 << len(lane_off) + len(warp_off),
        axis_warps=1 << len(warp_axis),
        last_block=tuple(r & last == last for r in chunks),
        first_block=tuple(r & last == 0 for r in chunks),
    )


def _aligned(addresses: np.ndarray, n: int, bits: int) -> bool:
    """Whether a load of ``n`` elements starting at ``addresses`` (every warp and lane) is
    aligned as its width needs: a power-of-two width's own bytes, 16 for ``b96``."""
    width = n * bits // 8
    need = min(16, 1 << (width - 1).bit_length())
    return bool((addresses % need == 0).all())


def live_partials(
    deps: Sequence[frozenset[int]] | None, used: Sequence[bool] | None
) -> tuple[frozenset[int], frozenset[int]] | None:
    """The operands whose warp totals the scan reads, from its combine region's ``deps``
    (`wgpsim.frontend.combine.combine_deps`: per result, the left operands ``0..n-1`` and
    right operands ``n..2n-1`` it reads) and which results are ``used``: Triton's
    ``AddPartialReduce`` starts each warp's accumulator from warp 0's totals and combines the
    next warps' totals in as right operands, then the warp's own values as right operands.
    The accumulator's live operands: those the used results read on the left, closed under
    the combine; a total of warp 0 is read where live, a later warp's where a live result
    reads it on the right. (first warp's operands, the other warps' operands).

    >>> deps = (frozenset({0, 2}), frozenset({1, 2, 3}))   # g = g_r g_l; x = g_r x_l + x_r
    >>> [sorted(s) for s in live_partials(deps, (False, True))]
    [[1], [0, 1]]

    None (every total read) without the region's dependencies or the results' uses.
    """
    if not deps or not used or len(deps) != len(used):
        return None
    n = len(deps)
    acc = {k for j, u in enumerate(used) if u for k in deps[j] if k < n}
    while grown := {k for j in acc for k in deps[j] if k < n} - acc:
        acc |= grown
    rest = {k - n for j in acc for k in deps[j] if k >= n}
    return frozenset(acc), frozenset(rest)


def _vector_runs(addresses: np.ndarray, keep: list[int], bits: int) -> list[list[int]]:
    """``keep`` in runs LLVM's load-store vectorizer merges, in address order (it sorts the
    loads of one base by offset): each load reads, in every lane, the element after the
    previous one; at most 128 bits, a width a load has, and aligned for it (`_aligned`); a
    chain whose first load is not aligned for two stays unmerged (assumption, as the
    held-out pair scan's assembly on all three targets: the totals at bytes 4, 8, ... are
    paired, those from byte 16 or 32 merged). Each run in program order."""
    runs: list[list[int]] = []
    for k in sorted(keep, key=lambda k: (int(addresses[0, k, 0]), k)):
        prev = runs[-1] if runs else None
        if (
            prev is not None
            and (len(prev) + 1) * bits <= MAX_VECTOR_BITS
            and (addresses[:, k] - addresses[:, prev[-1]] == bits // 8).all()
        ):
            prev.append(k)
        else:
            runs.append([k])
    out = []
    for run in runs:
        if len(run) > 1 and not _aligned(addresses[:, run[0]], 2, bits):
            out += [[k] for k in run]  # a chain that starts unaligned stays unmerged
            continue
        while run:
            n = max(
                n
                for n in range(1, len(run) + 1)
                if n * bits in VECTOR_LOADS and (n == 1 or _aligned(addresses[:, run[0]], n, bits))
            )
            out.append(run[:n])
            run = run[n:]
    return sorted(out)


def _issue(instruction: str, addresses: np.ndarray, dead: list[int], bits: int) -> Issued:
    """The assembly's instructions for Triton's ``addresses[w, k, lane]``: ``dead`` loads
    dropped, consecutive loads merged (`_vector_runs`), the loads left single paired as
    `wgpsim.trace.lowering_asm.assemble` does; in program order."""
    keep = [k for k in range(addresses.shape[1]) if k not in set(dead)]
    runs = _vector_runs(addresses, keep, bits) if instruction in PLAIN_LOADS.values() else []
    merged = [r for r in runs if len(r) > 1]
    single = [k for k in keep if not any(k in r for r in merged)]
    paired = assemble(instruction, addresses[:, single])
    issued = [(tuple(r), VECTOR_LOADS[len(r) * bits], 0) for r in merged] + [
        (tuple(single[i] for i in s), op, d)
        for s, op, d in zip(paired.sources, paired.ops, paired.distance, strict=True)
    ]
    issued.sort()
    sources = tuple(s for s, _, _ in issued)
    distance = np.array([d for _, _, d in issued], dtype=np.int64)
    rows = np.ascontiguousarray(addresses[:, [s[0] for s in sources]])
    return Issued(tuple(o for _, o, _ in issued), rows, distance, sources, tuple(dead))


def _step(
    addresses: list[np.ndarray],
    dead: list[int],
    bits: int,
    store: bool,
    active: np.ndarray | None = None,
) -> Lowering:
    """One store or load step: Triton's instructions ``addresses[k][warp, lane]``; lanes where
    ``active[warp, lane]`` is False do not take part (address -1; LLVM pairs the stores of the
    lanes that do)."""
    instruction = (PLAIN_STORES if store else PLAIN_LOADS)[bits]
    rows = np.stack(addresses, axis=1).astype(np.int64)
    issued = _issue(instruction, rows, dead, bits)
    if active is not None:
        rows = np.where(active[:, None, :], rows, -1)
        issued = replace(issued, addresses=np.where(active[:, None, :], issued.addresses, -1))
    for arr in (rows, issued.addresses):
        arr.flags.writeable = False
    warps = rows.shape[0]
    none = LinearLayout.from_bases(
        {"register": [], "lane": [[0]] * log2(rows.shape[2]), "warp": [[0]] * log2(warps)},
        ["offset"],
        [1],
        require_surjective=False,
    )
    registers = np.zeros((rows.shape[1], 1), dtype=np.int64)
    registers.flags.writeable = False
    why = "tt.scan's partial totals through scratch"
    return Lowering(
        instruction, 1, "scratch", why, none, (), bits, rows, registers,
        issued=issued, store=store,
    )  # fmt: skip


def lower_scan(
    src: Any,
    shape: str | Sequence[int],
    dtype: str | int | Sequence[str | int],
    axis: int,
    *,
    reverse: bool = False,
    base: int = 0,
    live: tuple[frozenset[int], frozenset[int]] | None = None,
) -> ScratchLowering:
    """The LDS steps of a ``tt.scan`` along ``axis`` of a ``shape`` tensor in layout ``src``:
    the chunk totals stored, a barrier, every warp's totals loaded (see the module
    docstring). ``dtype`` may list one element type per operand; operands of one width are
    stored and loaded interleaved, as Triton does, else one step each. No steps with one warp
    along the axis. ``live`` (`live_partials`; not for a reverse scan): the operands whose
    totals are read where warp 0's of the first axis block start the accumulator, and
    elsewhere; LLVM drops the other loads."""
    shape = parse_shape(shape)
    live = None if reverse else live
    dtypes = [dtype] if isinstance(dtype, str | int) else list(dtype)
    bits = [max(dtype_bits(d) if isinstance(d, str) else int(d), 8) for d in dtypes]
    scratch = scan_scratch(thread_layout(src, shape), axis, reverse)
    if scratch is None:
        return ScratchLowering("tt.scan", ())
    p, w = scratch.parallel_lanes, scratch.axis_warps
    bases = list(base + np.cumsum([0] + [scratch.elems * b // 8 for b in bits[:-1]]))
    active = np.broadcast_to(scratch.last_lane[None, :], scratch.parallel.shape)
    groups = [list(range(len(bits)))] if len(set(bits)) == 1 else [[j] for j in range(len(bits))]
    stores, loads = [], []
    for ops in groups:
        put, get, dead = [], [], []
        for c, (final, first) in enumerate(
            zip(scratch.last_block, scratch.first_block, strict=True)
        ):
            for j in ops:
                at = scratch.parallel + p * (scratch.axis_warp[:, None] + w * c)
                put.append(bases[j] + bits[j] // 8 * at)
            for i in range(w):
                for j in ops:
                    unread = live is not None and j not in live[0 if first and i == 0 else 1]
                    if (final and i == w - 1) or unread:
                        dead.append(len(get))
                    get.append(bases[j] + bits[j] // 8 * (scratch.parallel + p * (i + w * c)))
        stores.append(_step(put, [], bits[ops[0]], True, active))
        loads.append(_step(get, dead, bits[ops[0]], False))
    return ScratchLowering("tt.scan", (*stores, BARRIER, *loads))
