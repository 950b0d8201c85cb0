"""A layout suggestion for one conflicted ``local_load`` of a kernel (``wgpsim kernel``).

For a dot-operand load from LDS with bank conflicts or partition stalls, try the layout
search's shared layouts for that operand (same shape, order and destination layout; the
``partitioned: auto`` ones derived from the op's WMMA ctaLayout), each placed alone by the
allocator (with the buffer's stages; the load reads stage 0), lowered and simulated in lock step like the report's own op; return the fastest that
has neither bank conflicts nor partition stalls, fewest LDS bytes on ties, or None. A candidate
with bank conflicts is dropped before its run (`measures.banks.has_bank_conflicts`: whether a run
would report any, from the lanes' addresses alone), so only conflict-free ones are simulated.

No candidate is tried when the two SIMD pairs read alike (`pairs_read_alike`): then every shared
layout stalls them, and the answer is the search's "none" without its lowerings and runs.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from wgpsim.engine import simulate
from wgpsim.errors import WgpsimError
from wgpsim.hw import HardwareConfig
from wgpsim.hw.alloc import allocate_on, tensor_buffers
from wgpsim.kernel.lowering import op_trace
from wgpsim.layout.gluon import to_gluon_code
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
from wgpsim.layout.notation import to_text
from wgpsim.layout.shared import PaddedSharedLayout
from wgpsim.measures.banks import has_bank_conflicts
from wgpsim.microbench.candidates import Gemm, auto_partition, instruction_tiles, issue_rounds
from wgpsim.microbench.gemm import build_shared
from wgpsim.search.space import shared_choices
from wgpsim.trace.lowering import lower


def _gemm_of(dst: DotOperandLayout, shape: tuple[int, int], order: tuple[int, ...]) -> Gemm:
    """A GEMM block the operand belongs to (the other non-K extent: what the ctaLayout covers)."""
    wmma: AMDWMMALayout = dst.parent
    rows, cols = wmma.tile_shape
    other = 1 - dst.op_idx
    cover = 1
    for b in (*wmma.warp_bases, *wmma.reg_bases):
        cover = max(cover, b[other] + 1)
    extent = (1 << (cover - 1).bit_length()) * (rows, cols)[other]
    if dst.op_idx == 0:
        (m, k), n = shape, extent
        k_contiguous = order[0] == 1
    else:
        (k, n), m = shape, extent
        k_contiguous = order[0] == 0
    # 16-bit elements only (the dtype sets the element size here, fp16 and bf16 alike)
    return Gemm(
        (m, n, k),
        "fp16",
        2 ** len(wmma.warp_bases),
        tuple(wmma.instr_shape),
        dst.k_width,
        a_k_contiguous=k_contiguous if dst.op_idx == 0 else True,
        b_k_contiguous=k_contiguous if dst.op_idx == 1 else False,
        transposed=wmma.transposed,
    )


NO_LAYOUT = {
    "layout": None,
    "reason": "none of the search's shared layouts removes the conflicts with this "
    "ctaLayout (co-located SIMD pairs read the same bytes: change the ctaLayout, see "
    "wgpsim search)",
}
"""The answer when every candidate is rejected (a copy is returned)."""


def pairs_read_alike(dst: Any, shape: tuple[int, ...], hw: HardwareConfig) -> bool:
    """Whether the load's warps on one SIMD pair are the mirror image of those on the other:
    warp w and warp w ^ m (for a warp mask m the destination layout maps to no element: both
    read the same elements, lane for lane and register for register) sit on SIMDs in the same
    place of the two pairs, at the same rank. Then for every shared layout their instructions
    and addresses are the same, the lock-step run (no drift) is symmetric between the pairs up
    to the first cycle their heads are granted, and in that cycle the two heads share every
    partition, so one of them stalls: no candidate can pass, whatever its layout.

    >>> from wgpsim.layout.notation import parse
    >>> from wgpsim.hw.config import load_hardware
    >>> mma = ("#ttg.amd_wmma<{version = 3, isTranspose = true, ctaLayout = {warp = [[1, 0], "
    ...        "[2, 0], [4, 0]]}, instrShape = [16, 16, 32]}>")  # the attention example's
    >>> a, b = (parse(f"#ttg.dot_op<{{opIdx = {i}, parent = {mma}, kWidth = 8}}>") for i in (0, 1))
    >>> pairs_read_alike(a, (128, 64), load_hardware()), pairs_read_alike(b, (64, 128), load_hardware())
    (False, True)
    """
    if hw.num_pairs != 2 or hw.partitions.count < 2:
        return False
    if hw.drift.model == "uniform" and hw.drift.jitter_cycles:
        return False  # a random delay per row breaks the symmetry
    layout = dst.to_linear_layout(shape)
    if not layout.has_in_dim("warp"):
        return False
    n = layout.in_dim_size("warp")
    zero = {"register": 0, "lane": 0}
    return any(
        not any(layout.apply({**zero, "warp": m}).values()) and _mirror(hw, n, m)
        for m in range(1, n)
    )


def _mirror(hw: HardwareConfig, n: int, m: int) -> bool:
    """Whether w -> w ^ m maps each warp to the other pair's SIMD in the same place of its
    pair, at the same rank among that SIMD's warps, through one map of SIMDs."""
    place = {
        simd: (p, i) for p, (_, simds) in enumerate(hw.wgp.pairs) for i, simd in enumerate(simds)
    }
    simd = [hw.simd_of_warp(w) for w in range(n)]
    rank = [sum(simd[x] == simd[w] for x in range(w)) for w in range(n)]
    image: dict[int, int] = {}
    for w in range(n):
        v = w ^ m
        (p, i), (q, j) = place[simd[w]], place[simd[v]]
        if p == q or i != j or rank[w] != rank[v] or image.setdefault(simd[w], simd[v]) != simd[v]:
            return False
    return True


def suggest_layout(
    shared: Any,
    dst: Any,
    shape: tuple[int, ...],
    elem_bits: int,
    hw: HardwareConfig,
    *,
    engine: str = "auto",
    alloc_shape: tuple[int, ...] | None = None,
) -> dict[str, Any] | None:
    """The best conflict-free shared layout for this load, verified by simulation; ``layout``
    None (with the reason) when there is none; None when the load is not a 16-bit dot operand
    of a WMMA layout."""
    if not isinstance(dst, DotOperandLayout) or not isinstance(dst.parent, AMDWMMALayout):
        return None
    if len(shape) != 2 or elem_bits != 16:
        return None
    inner = getattr(shared, "partition_layout", shared)
    if isinstance(inner, PaddedSharedLayout):  # its order may be given by offset bases
        order = inner.get_order()
    else:
        order = tuple(getattr(inner, "order", None) or (1, 0))
    if pairs_read_alike(dst, tuple(shape), hw):
        return dict(NO_LAYOUT)
    gemm = _gemm_of(dst, tuple(shape), order)
    op = dst.op_idx
    pairs = [hw.pair_of_warp(w) for w in range(gemm.num_warps)]
    rounds = issue_rounds(gemm.num_warps, hw.wgp.simds)

    @cache  # one derivation for every ``partitioned: auto`` candidate (AutoPartition is frozen)
    def auto():
        tiles = instruction_tiles(dst.parent, gemm.block_mn)
        return auto_partition(gemm, tiles, op, pairs, rounds)

    best = None
    extent = shape[order[0]]
    for choice in shared_choices(extent, elem_bits // 8):
        try:
            layout, _ = build_shared(choice.spec, tuple(shape), order, auto)
            full = alloc_shape or shape  # [stages, *shape] for a multi-buffered local_alloc
            alloc = allocate_on(hw, tensor_buffers("X", layout, full, elem_bits // 8))
            bases = alloc.offsets_of("X")
            low = lower(layout, dst, shape, elem_bits, bases=bases if len(bases) > 1 else bases[0])
            trace = op_trace(low)
            if has_bank_conflicts(trace, hw):  # rejected below anyway: no run needed
                continue
            result = simulate(trace, hw, engine=engine)
        except WgpsimError:
            continue
        stalls = int(sum(result.partition_stall_cycles.values()))
        if result.bank_conflict_cycles or stalls:
            continue
        key = (result.measurement(), alloc.size)
        if best is None or key < best[0]:
            best = (key, layout, low)
    if best is None:
        return dict(NO_LAYOUT)
    (cycles, size), layout, low = best
    return {
        "layout": to_text(layout),
        "gluon": to_gluon_code(layout),
        "lds_cycles": cycles,
        "lds_bytes": size,
        "instructions": dict(low.counts),
    }


__all__ = ["suggest_layout"]
