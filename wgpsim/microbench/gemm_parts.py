"""What the candidates of a GEMM sweep share, computed once: functools caches keyed on the
frozen ``Gemm``, WMMA layout, shared layouts, hardware and allocation bases.

A ``gemm_candidates`` sweep's candidates repeat their pieces: the same ctaLayout under several
shared layouts, the same shared layout under several ctaLayouts, the same operand at the same
bases. Each piece is cached on exactly what determines it (``docs/DESIGN.md``, "Layout
search"):

* ``cta_tiles(gemm, warp, register)``: the WMMA layout and its C tiles per instruction;
* ``sentinel_lowering(gemm, wmma, op, shared)``: the operand's ``local_load`` lowered once, its
  destination layout built once, buffer ``p`` at the sentinel ``p << 24``;
  ``lowering_at(low, bases)`` puts it at the allocator's bases (the assembly is rebuilt from
  the real addresses, so 2addr merging sees what ``lower(..., bases=bases)`` would);
* ``sentinel_elements(shared, shape, elem_bytes)``: every element's address, decoded the same
  way by ``elements_at``; ``pieces_of``: pieces, TDM instructions, band pieces;
* ``allocation(hw, buffers)``; ``k_step(lowerings)``: one K step's trace from a skeleton kept
  per issued-instruction sequence (only the LDS rows' addresses change).

Decoded, the cached route gives what the direct one does (``tests/test_gemm_parts.py``):

>>> from wgpsim.microbench.candidates import Gemm
>>> from wgpsim.microbench.gemm import build_shared
>>> from wgpsim.trace.lowering import lower
>>> g = Gemm((128, 128, 64), "fp16", 4, (16, 16, 32))
>>> wmma, tiles = cta_tiles(g, ((2, 1), (1, 0)), ((2, 0),))
>>> b, _ = build_shared({"padded": [[128, 16]]}, g.operand_shape(1), g.order(1), None)
>>> low = lowering_at(sentinel_lowering(g, wmma, 1, b), (4096,))
>>> direct = lower(b, g.dot_operand(wmma, 1), g.operand_shape(1), g.dtype, bases=4096)
>>> np.array_equal(low.addresses, direct.addresses), low.counts == direct.counts
(True, True)
>>> clear()  # every cache empty again (benchmarks/candidate_cost.py's un-cached route)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from wgpsim.hw import HardwareConfig
from wgpsim.hw.alloc import Allocation, Buffer, allocate_on
from wgpsim.layout.addresses import linear_of
from wgpsim.layout.shared import PartitionedSharedLayout
from wgpsim.microbench.candidates import Gemm, instruction_tiles
from wgpsim.microbench.kernels import k_step_trace
from wgpsim.microbench.operand_plan import BUFFER_SHIFT, OFFSET_MASK
from wgpsim.microbench.pieces import band_pieces, element_addresses, piece_info
from wgpsim.trace.lowering import Lowering, lower
from wgpsim.trace.trace import Trace
from wgpsim.trace.validate import DEFAULT_LDS_BYTES, validate

#: Entries kept per cache: a few hundred candidates' operands (a cached operand at given bases
#: holds its lowering, trace and result, tens of KB).
CACHE_SIZE = 256


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def num_buffers(shared: Any) -> int:
    """Buffers of an operand in ``shared``: one per partition, else one."""
    return shared.num_partitions if isinstance(shared, PartitionedSharedLayout) else 1


def decode(sentinel: np.ndarray, bases: Sequence[int]) -> np.ndarray:
    """Sentinel addresses (``buffer << 24 | offset``; negative: inactive, kept) at ``bases``.

    >>> decode(np.array([-1, 8, (1 << 24) + 8]), (100, 200)).tolist()
    [-1, 108, 208]
    """
    base = np.asarray(bases, dtype=np.int64)
    buf = np.where(sentinel >= 0, sentinel >> BUFFER_SHIFT, 0)
    return np.where(sentinel >= 0, base[buf] + (sentinel & OFFSET_MASK), sentinel)


@lru_cache(maxsize=CACHE_SIZE)
def cta_tiles(gemm: Gemm, warp: tuple, register: tuple) -> tuple[Any, np.ndarray]:
    """The WMMA layout of a ctaLayout and its ``[instruction, warp, 2]`` C tiles (read-only)."""
    wmma = gemm.wmma(warp, register)
    return wmma, _frozen(instruction_tiles(wmma, gemm.block_mn))


@lru_cache(maxsize=CACHE_SIZE)
def sentinel_lowering(gemm: Gemm, wmma: Any, op: int, shared: Any) -> Lowering:
    """Operand ``op``'s local_load from ``shared`` into ``wmma``'s dot operand layout, buffer
    ``p`` at ``p << 24`` (LayoutError if it cannot be lowered: not cached, raised again)."""
    n = num_buffers(shared)
    sentinel = [p << BUFFER_SHIFT for p in range(n)] if n > 1 else 0
    dst = gemm.dot_operand(wmma, op)
    return lower(shared, dst, gemm.operand_shape(op), gemm.dtype, bases=sentinel)


def lowering_at(low: Lowering, bases: Sequence[int]) -> Lowering:
    """A sentinel lowering with its buffers at ``bases``."""
    addresses = _frozen(np.ascontiguousarray(decode(low.addresses, bases)))
    return dataclasses.replace(low, addresses=addresses, issued=None)


@lru_cache(maxsize=CACHE_SIZE)
def sentinel_elements(shared: Any, shape: tuple[int, ...], elem_bytes: int) -> np.ndarray:
    """``element_addresses`` of ``shared`` with buffer ``p`` at ``p << 24`` (read-only)."""
    sentinel = [p << BUFFER_SHIFT for p in range(num_buffers(shared))]
    bases = sentinel if len(sentinel) > 1 else sentinel[0]
    return _frozen(element_addresses(shared, shape, elem_bytes, bases))


def elements_at(shared: Any, shape: tuple[int, ...], elem_bytes: int, bases) -> np.ndarray:
    """``element_addresses(shared, shape, elem_bytes, bases)`` from the cached sentinel map."""
    return decode(sentinel_elements(shared, shape, elem_bytes), bases)


@lru_cache(maxsize=CACHE_SIZE)
def pieces_of(gemm: Gemm, op: int, shared: Any, cacheline_bytes: int) -> tuple[Any, tuple]:
    """``piece_info`` and ``band_pieces`` of operand ``op`` in ``shared``."""
    shape, dim = gemm.operand_shape(op), gemm.non_k_dim(op)
    info = piece_info(
        shared, shape, gemm.contiguous_dim(op), gemm.elem_bytes, gemm.num_warps, cacheline_bytes
    )
    return info, tuple(band_pieces(shared, shape, dim, gemm.band_extent(op)))


@lru_cache(maxsize=CACHE_SIZE)
def allocation(hw: HardwareConfig, buffers: tuple[Buffer, ...]) -> Allocation:
    """``allocate_on(hw, buffers)`` (AllocationError: not cached, raised again)."""
    return allocate_on(hw, buffers)


@lru_cache(maxsize=CACHE_SIZE)
def _skeleton(lowerings: tuple[Lowering, ...], lds_bytes: int) -> tuple[Trace, np.ndarray]:
    """The K step of ``lowerings`` and its LDS rows (warp-major, each lowering's issued rows
    in order): what every lowering with the same issued sequence shares."""
    trace = k_step_trace(lowerings, lds_bytes=lds_bytes)
    return trace, np.flatnonzero(trace.lds_mask())


def _shape_key(low: Lowering) -> tuple:
    issued = low.issued
    return (low.num_warps, issued.ops, issued.distance.tobytes())


_SKELETONS: dict[tuple, tuple[Lowering, ...]] = {}


def k_step(lowerings: Sequence[Lowering], *, lds_bytes: int = DEFAULT_LDS_BYTES) -> Trace:
    """``k_step_trace(lowerings)``: the skeleton of the first lowerings with this issued
    sequence, with these lowerings' addresses in its LDS rows."""
    lowerings = tuple(lowerings)
    key = (tuple(_shape_key(low) for low in lowerings), lds_bytes)
    if len(_SKELETONS) >= CACHE_SIZE and key not in _SKELETONS:
        _SKELETONS.clear()
    first = _SKELETONS.setdefault(key, lowerings)
    skeleton, rows = _skeleton(first, lds_bytes)
    if first is lowerings:
        return skeleton
    addr = skeleton.addr.copy()
    lanes = np.concatenate([low.issued.addresses for low in lowerings], axis=1)
    addr[rows] = lanes.reshape(-1, lanes.shape[-1])
    trace = Trace(
        skeleton.warp, skeleton.op, skeleton.arg, addr, skeleton.labels, skeleton.num_warps
    )
    return validate(trace, lds_bytes)


def clear() -> None:
    """Empty every cache of this module, and the layouts' LinearLayouts (``linear_of``)."""
    for fn in (cta_tiles, sentinel_lowering, sentinel_elements, pieces_of, allocation, _skeleton):
        fn.cache_clear()
    _SKELETONS.clear()
    linear_of.cache_clear()


__all__ = [
    "CACHE_SIZE",
    "allocation",
    "clear",
    "cta_tiles",
    "decode",
    "elements_at",
    "k_step",
    "lowering_at",
    "num_buffers",
    "pieces_of",
    "sentinel_elements",
    "sentinel_lowering",
]
