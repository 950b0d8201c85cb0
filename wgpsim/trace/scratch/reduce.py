"""The LDS traffic of ``tt.reduce`` across warps and of atomics, through a scratch buffer.

Both reuse the conversion of `wgpsim.trace.scratch.lowering`: a reduce moves its partial
results between warps with one or two conversions (`reduce_layouts`), an atomic shares its old
values with a store by the threads that did it and a load by all.

The corpus's column sum (``tensor<128x64xf32>``, 4 warps stacked along the rows, summed along
them): each warp's 64 partial sums go to one warp (one ``ds_store_b128`` and one
``ds_load_b128`` a lane), and the sums back into the result's layout (again one each).

>>> blocked = ("#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], "
...            "warpsPerCTA = [4, 1], order = [1, 0]}>")
>>> low = lower_reduce(blocked, f"#ttg.slice<{{dim = 0, parent = {blocked}}}>", (128, 64),
...                    "fp32", 0)
>>> low.counts, low.barriers
({'ds_store_b128': 2, 'ds_load_b128': 2}, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from wgpsim.layout.bits import log2
from wgpsim.layout.dtypes import dtype_bits, parse_shape
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.trace.lowering import Lowering, lower_offsets
from wgpsim.trace.scratch.lowering import (
    BARRIER,
    NUM_BANKS,
    THREAD_DIMS,
    ScratchLowering,
    convert_steps,
    thread_layout,
)
from wgpsim.trace.scratch.swizzling import ScratchTile, flat_bases, scratch_tile

__all__ = ["lower_atomic", "lower_reduce", "reduce_layouts"]


def _bases(layout: LinearLayout) -> dict[str, list[list[int]]]:
    return {d: [list(b) for b in layout.get_bases(d)] for d in THREAD_DIMS}


def reduce_layouts(
    src: LinearLayout, axis: int
) -> tuple[LinearLayout, LinearLayout, LinearLayout | None] | None:
    """The layouts of a ``tt.reduce`` across warps, as Triton 3.9.0's ``ReduceOpToLLVM``
    moves its partials: ``partials`` (after reducing within each thread and warp: the axis
    components of register and lane bases zeroed, the axis renumbered to the warps along it),
    ``gathered`` (the warps along the axis swapped with lanes, so that one warp holds every
    partial of its elements: with broadcast lanes, if there are enough of them, else with the
    first lanes; matched on Triton's addresses, `tests/fixtures/scratch_lowering/`) and ``reduced`` (``gathered`` after the lane reduction, the
    axis dropped; None for a 1-D tensor reduced to a scalar). None when no warp basis moves along
    the axis (no scratch)."""
    names = list(src.out_dim_names)
    bases = _bases(src)
    warp_axis = sorted({b[axis] for b in bases["warp"] if b[axis]})
    if not warp_axis:
        return None
    rank = {v: 1 << i for i, v in enumerate(warp_axis)}
    for d in ("register", "lane"):
        for b in bases[d]:
            b[axis] = 0
    bases["register"] = [b for b in bases["register"] if any(b)]
    for b in bases["warp"]:
        b[axis] = rank.get(b[axis], 0)
    sizes = [s for _, s in src.out_dims]
    sizes[axis] = 1 << len(warp_axis)
    partials = LinearLayout.from_bases(bases, names, sizes, require_surjective=False)
    moved = [i for i, b in enumerate(bases["warp"]) if b[axis]]
    free = [i for i, b in enumerate(bases["lane"]) if not any(b)]
    lanes = free if len(free) >= len(moved) else range(len(moved))
    for lane, w in zip(lanes, moved, strict=False):
        bases["lane"][lane], bases["warp"][w] = bases["warp"][w], bases["lane"][lane]
    gathered = LinearLayout.from_bases(bases, names, sizes, require_surjective=False)
    keep = [i for i in range(len(names)) if i != axis]
    if not keep:  # a 1-D tensor reduced to a scalar
        return partials, gathered, None
    rest = {
        d: [[b[i] for i in keep] if b[axis] == 0 else [0] * len(keep) for b in bs]
        for d, bs in bases.items()
    }
    reduced = LinearLayout.from_bases(
        rest, [names[i] for i in keep], [sizes[i] for i in keep], require_surjective=False
    )
    return partials, gathered, reduced


REDUCE_SCRATCH_ALIGN = 16
"""Byte alignment of each operand's part of a reduce's scratch (``kReduceScratchAlign``)."""


def _operand_steps(
    src: LinearLayout, dst: LinearLayout, bits: Sequence[int], base: int, num_banks: int
) -> tuple[list[Lowering | str], list[ScratchTile]]:
    """One conversion of every operand of a reduce, each through its own part of the scratch
    (``getSmemBaseOffsets``: the widest operands first, each part 16-byte aligned), in operand
    order: store, barrier, load each."""
    mem = [max(b, 8) for b in bits]
    tiles = [scratch_tile(src, dst, b, num_banks) for b in mem]
    offsets, at = [0] * len(mem), 0
    for i in sorted(range(len(mem)), key=lambda i: -mem[i]):
        at = -(-at // REDUCE_SCRATCH_ALIGN) * REDUCE_SCRATCH_ALIGN
        offsets[i] = at
        at += tiles[i].elems * mem[i] // 8
    steps: list[Lowering | str] = []
    for i, b in enumerate(mem):
        steps += convert_steps(src, dst, b, base + offsets[i], num_banks)[0]
    return steps, tiles


def lower_reduce(
    src: Any,
    dst: Any,
    shape: str | Sequence[int],
    dtype: str | int | Sequence[str | int],
    axis: int,
    *,
    base: int = 0,
    num_banks: int = NUM_BANKS,
) -> ScratchLowering:
    """The LDS steps of a ``tt.reduce`` along ``axis`` of a ``shape`` tensor in layout ``src``
    whose result has layout ``dst`` (None: a scalar): the partials of the warps along the axis through scratch
    into one warp (`reduce_layouts`), a barrier, and, unless that already is ``dst``, a second
    conversion into ``dst`` through the same scratch. ``dtype`` may list one element type per
    operand (an argmax reduces values and indices): each conversion then moves every operand
    in turn. No steps when the reduction stays within each warp."""
    shape = parse_shape(shape)
    dtypes = [dtype] if isinstance(dtype, str | int) else list(dtype)
    bits = [dtype_bits(d) if isinstance(d, str) else int(d) for d in dtypes]
    layouts = reduce_layouts(thread_layout(src, shape), axis)
    if layouts is None:
        return ScratchLowering("tt.reduce", ())
    partials, gathered, reduced = layouts
    steps, tiles = _operand_steps(partials, gathered, bits, base, num_banks)
    if reduced is None or dst is None:  # a scalar: every thread holds it after the lanes
        return ScratchLowering("tt.reduce", tuple(steps), tuple(tiles))
    out_shape = [s for i, s in enumerate(shape) if i != axis]
    result = thread_layout(dst, out_shape)
    if _bases(reduced) != _bases(result):
        more, last = _operand_steps(reduced, result, bits, base, num_banks)
        steps += [BARRIER, *more]
        tiles += last
    return ScratchLowering("tt.reduce", tuple(steps), tuple(tiles))


def _only(low: Lowering, active: np.ndarray) -> Lowering:
    """``low`` with the lanes where ``active[warp, lane]`` is False inactive (address -1)."""
    addresses = np.where(active[:, None, :], low.addresses, -1)
    addresses.flags.writeable = False
    return replace(low, addresses=addresses, issued=None)


def _owners(layout: LinearLayout) -> np.ndarray:
    """``[warp, lane]``: the threads that own their elements first (every broadcast lane and
    warp bit 0), the threads whose atomic result Triton writes to scratch."""
    mask = {
        d: sum(1 << i for i, b in enumerate(layout.get_bases(d)) if not any(b))
        for d in ("lane", "warp")
    }
    warps, lanes = (1 << len(layout.get_bases(d)) for d in ("warp", "lane"))
    w, lane = np.arange(warps)[:, None], np.arange(lanes)[None, :]
    return ((w & mask["warp"]) == 0) & ((lane & mask["lane"]) == 0)


def lower_atomic(
    result: Any | None,
    shape: str | Sequence[int],
    dtype: str | int,
    *,
    num_warps: int,
    base: int = 0,
    lanes: int = 32,
) -> ScratchLowering:
    """The LDS steps of an atomic (``tt.atomic_rmw``, ``tt.atomic_cas``,
    ``amdg.buffer_atomic_*``) whose result is used, as Triton 3.9.0 lowers it on AMD: a barrier,
    then the threads that did the atomic store its old value into scratch (a scalar: lane 0
    of warp 0, at ``base``; a tensor in layout ``result``: each element's first owner, at the
    element's index), a barrier, and every thread loads the values it holds. Checked on a
    scalar and a 1-D tensor of 32 elements over 128 threads (lane by lane). A scalar's warps
    have ``lanes`` threads (64 on gfx950 / gfx942: Triton's scratch load is every thread's)."""
    bits = max(dtype_bits(dtype) if isinstance(dtype, str) else int(dtype), 8)
    if result is None:
        one = LinearLayout.from_bases(
            {"register": [], "lane": [[0]] * log2(lanes), "warp": [[0]] * log2(num_warps)},
            ["offset"],
            [1],
            require_surjective=False,
        )
        load = lower_offsets(one, bits, base, store=False, reason="an atomic's old value")
        first = np.zeros((num_warps, lanes), dtype=bool)
        first[0, 0] = True
        store = _only(
            lower_offsets(one, bits, base, store=True, reason="an atomic's old value"), first
        )
        return ScratchLowering("atomic", (BARRIER, store, BARRIER, load))
    layout = thread_layout(result, parse_shape(shape))
    flat = {d: [[b] for b in flat_bases(layout, d)] for d in THREAD_DIMS}
    cvt = LinearLayout.from_bases(
        flat, ["offset"], [layout.total_out_size], require_surjective=False
    )
    why = "an atomic's old values shared through scratch"
    store = _only(lower_offsets(cvt, bits, base, store=True, reason=why), _owners(layout))
    load = lower_offsets(cvt, bits, base, store=False, reason=why)
    return ScratchLowering("atomic", (BARRIER, store, BARRIER, load))
