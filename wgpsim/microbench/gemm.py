"""One GEMM layout candidate, analysed end to end: layouts -> allocation -> local_load
lowering -> trace -> simulated LDS cycles of one K step.

A candidate is a WMMA ctaLayout and a shared-layout spec per operand. ``analyse`` builds the
shared layouts (``partitioned: auto`` derives its parameters from the ctaLayout), places A and B
together with the partition-aware allocator, finds who reads which band in each WMMA instruction
(``wgpsim.microbench.candidates``) and in which physical partitions those bytes lie
(``wgpsim.microbench.pieces``), lowers each operand's ``local_load`` as Triton does, and simulates
one K step: every warp issues A's loads then B's, then waits (the seed's lock step: the engine
starts all warps together after a barrier and they issue the same sequence).

Spec forms (`build_shared`): ``{"swizzled": {vec, per_phase, max_phase}}``, ``{"padded":
[[interval, padding], ...]}`` (identity for the operand's shape and order), ``{"partitioned":
{num_partitions, num_groups, partition_dim, partition_layout}}``, ``{"partitioned": "auto",
"partition_layout": spec}`` (inner default swizzled), or an encoding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from wgpsim.engine import Result, simulate
from wgpsim.errors import LayoutError
from wgpsim.hw import HardwareConfig
from wgpsim.hw.alloc import Allocation, tensor_buffers
from wgpsim.layout.mma.wmma import AMDWMMALayout
from wgpsim.layout.shared import (
    PaddedSharedLayout,
    PartitionedSharedLayout,
    SwizzledSharedLayout,
)
from wgpsim.microbench import gemm_parts as parts
from wgpsim.microbench.candidates import (
    OPERANDS,
    AutoPartition,
    Gemm,
    auto_partition,
    cross_pair_bands,
    issue_rounds,
)
from wgpsim.microbench.pieces import (
    PieceInfo,
    band_partitions,
    cross_pair_overlap,
    lockstep_partition_overlaps,
    pair_mask_overlaps,
)
from wgpsim.trace.lowering import Lowering
from wgpsim.trace.trace import Trace


@dataclass(frozen=True)
class CandidateSpec:
    """One candidate: ctaLayout bases (instruction-tile units) and the shared-layout spec of A
    and of B (an encoding, or a mapping `build_shared` reads)."""

    name: str
    warp: tuple[tuple[int, int], ...]
    register: tuple[tuple[int, int], ...]
    shared: tuple[Any, Any]
    note: str = ""


@dataclass(frozen=True)
class OperandAnalysis:
    """One operand of one candidate: its layouts, pieces, who reads what, and its loads."""

    op: int
    shared: Any
    auto: AutoPartition | None
    pieces: PieceInfo
    bases: tuple[int, ...]
    co_located: tuple[int, ...]  # WMMA instructions where cross-pair warps read the same band
    same_partition: tuple[int, ...]  # ... where their bands share a physical partition
    band_pieces: tuple[tuple[int, ...], ...]
    band_partitions: tuple[tuple[int, ...], ...]
    lowering: Lowering = field(repr=False)
    lockstep_overlaps: tuple[int, ...] = ()
    result: Result | None = field(default=None, repr=False)


@dataclass(frozen=True)
class CandidateAnalysis:
    """Everything about one candidate: ctaLayout, C tiles per instruction and warp, the SIMD
    pair of each warp, both operands, the allocation and one K step's loads, simulated."""

    spec: CandidateSpec
    wmma: AMDWMMALayout
    tiles: Any = field(repr=False)  # [instruction, warp, 2] C tiles
    pairs: tuple[int, ...]
    operands: tuple[OperandAnalysis, OperandAnalysis]
    allocation: Allocation
    trace: Trace = field(repr=False)
    result: Result = field(repr=False)


def build_shared(
    spec: Any, shape: tuple[int, int], order: tuple[int, int], auto: Callable[[], AutoPartition]
) -> tuple[Any, AutoPartition | None]:
    """The shared encoding a spec means for an operand of ``shape`` and ``order``, and the
    derived parameters if it was ``partitioned: auto`` (``auto()`` derives them).

    >>> spec = {"partitioned": "auto", "partition_layout": {"padded": [[128, 8]]}}
    >>> auto = lambda: AutoPartition(0, 2, 2, (32, 128), 1)
    >>> shared, _ = build_shared(spec, (128, 128), (1, 0), auto)
    >>> shared.num_groups, shared.partition_layout.shape
    (2, (32, 128))
    """
    if not isinstance(spec, dict):
        return spec, None
    if "swizzled" in spec:
        p = spec["swizzled"] or {}
        return SwizzledSharedLayout(
            p.get("vec", 1), p.get("per_phase", 1), p.get("max_phase", 1), order
        ), None
    if "padded" in spec:
        return PaddedSharedLayout.with_identity_for(spec["padded"], shape, order), None
    p = spec["partitioned"]
    inner_spec = spec.get("partition_layout") if p == "auto" else p.get("partition_layout")
    derived = auto() if p == "auto" else None
    if derived is not None:
        parts, groups, dim = derived.num_partitions, derived.num_groups, derived.partition_dim
    else:
        parts, groups, dim = (int(p[k]) for k in ("num_partitions", "num_groups", "partition_dim"))
    if not 0 <= dim < len(shape) or shape[dim] % (parts * groups):
        raise LayoutError(
            f"partition_dim {dim} of shape {list(shape)} must be 0 or 1 and divisible into "
            f"num_partitions x num_groups = {parts * groups} pieces"
        )
    piece = tuple(s // (parts * groups) if d == dim else s for d, s in enumerate(shape))
    inner, _ = build_shared(inner_spec or {"swizzled": {}}, piece, order, auto)
    return PartitionedSharedLayout(parts, groups, dim, inner), derived


def analyse(
    gemm: Gemm,
    hw: HardwareConfig,
    spec: CandidateSpec,
    *,
    cacheline_bytes: int,
    engine: str = "des",
    seed: int = 0,
    stages: int = 1,
) -> CandidateAnalysis:
    """Every number of one candidate (LayoutError / AllocationError if it cannot work).

    ``stages``: buffers per operand (``num_stages``): each operand is one ``local_alloc`` of
    ``[stages, *shape]``, as a pipelined Gluon GEMM allocates it; the K step reads buffer 0.
    What candidates share (layouts, lowerings, pieces, allocations, operands at the same bases,
    simulations) comes from the caches of ``wgpsim.microbench.gemm_parts``.
    """
    wmma, tiles = parts.cta_tiles(gemm, tuple(spec.warp), tuple(spec.register))
    pairs = tuple(hw.pair_of_warp(w) for w in range(gemm.num_warps))
    rounds = issue_rounds(gemm.num_warps, hw.wgp.simds)
    layouts = []
    for op in range(2):
        shape = gemm.operand_shape(op)
        layouts.append(
            build_shared(
                spec.shared[op],
                shape,
                gemm.order(op),
                lambda op=op: _auto(gemm, wmma, op, pairs, rounds),
            )
        )
    buffers = tuple(
        b
        for op, (shared, _) in enumerate(layouts)
        for b in tensor_buffers(
            OPERANDS[op].upper(),
            shared,
            (stages, *gemm.operand_shape(op)) if stages > 1 else gemm.operand_shape(op),
            gemm.elem_bytes,
        )
    )
    allocation = parts.allocation(hw, buffers)
    operands = tuple(
        _operand(
            gemm,
            hw,
            op,
            shared,
            derived,
            wmma,
            tuple(allocation.offsets_of(OPERANDS[op].upper())),
            cacheline_bytes,
            engine,
            seed,
        )
        for op, (shared, derived) in enumerate(layouts)
    )
    trace, result = _k_step(tuple(o.lowering for o in operands), hw, engine, seed)
    return CandidateAnalysis(spec, wmma, tiles, pairs, operands, allocation, trace, result)


@lru_cache(maxsize=parts.CACHE_SIZE)
def _auto(gemm: Gemm, wmma: AMDWMMALayout, op: int, pairs: tuple, rounds: tuple) -> AutoPartition:
    tiles = parts.cta_tiles(gemm, wmma.warp_bases, wmma.reg_bases)[1]
    return auto_partition(gemm, tiles, op, pairs, rounds)


@lru_cache(maxsize=16)  # equal candidates (an operand's own run is cached with the operand)
def _k_step(lowerings: tuple[Lowering, ...], hw: HardwareConfig, engine: str, seed: int):
    """One K step of ``lowerings`` and its simulation."""
    trace = parts.k_step(lowerings)
    return trace, simulate(trace, hw, engine=engine, seed=seed)


@lru_cache(maxsize=parts.CACHE_SIZE)
def _operand(
    gemm, hw, op, shared, derived, wmma, bases, cacheline_bytes, engine, seed
) -> OperandAnalysis:
    """Operand ``op`` in ``shared`` under ``wmma`` with its buffers at ``bases``."""
    pairs = tuple(hw.pair_of_warp(w) for w in range(gemm.num_warps))
    rounds = issue_rounds(gemm.num_warps, hw.wgp.simds)
    tiles = parts.cta_tiles(gemm, wmma.warp_bases, wmma.reg_bases)[1]
    shape, dim, extent = gemm.operand_shape(op), gemm.non_k_dim(op), gemm.band_extent(op)
    addresses = parts.elements_at(shared, shape, gemm.elem_bytes, bases)
    band_parts = band_partitions(addresses, dim, extent, hw.partitions.size)
    colocated, _ = cross_pair_bands(tiles, op, pairs, rounds)
    band_masks = [sum(1 << p for p in parts_) for parts_ in band_parts]
    if max(band_masks, default=0) < 1 << 62:  # as int64 bits: every instruction at once
        masks = np.array(band_masks, dtype=np.int64)[tiles[..., op]].T  # [warp, instruction]
        same_partition = np.flatnonzero(pair_mask_overlaps(masks, pairs, rounds)).tolist()
    else:
        same_partition = [
            r
            for r, bands in enumerate(tiles[..., op].tolist())
            if cross_pair_overlap([set(band_parts[b]) for b in bands], pairs, rounds)
        ]
    lowering = parts.lowering_at(parts.sentinel_lowering(gemm, wmma, op, shared), bases)
    info, pieces = parts.pieces_of(gemm, op, shared, cacheline_bytes)
    _, alone = _k_step((lowering,), hw, engine, seed)
    return OperandAnalysis(
        op,
        shared,
        derived,
        info,
        bases,
        tuple(colocated),
        tuple(same_partition),
        pieces,
        tuple(band_parts),
        lowering,
        tuple(lockstep_partition_overlaps(lowering.addresses, pairs, hw.partitions.size, rounds)),
        alone,
    )


def clear_caches() -> None:
    """Empty the caches ``analyse`` reads (this module's and ``wgpsim.microbench.gemm_parts``)."""
    for fn in (_auto, _k_step, _operand):
        fn.cache_clear()
    parts.clear()


__all__ = [
    "CandidateAnalysis",
    "CandidateSpec",
    "OperandAnalysis",
    "analyse",
    "build_shared",
    "clear_caches",
]
