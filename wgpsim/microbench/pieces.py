"""Operand pieces in LDS: how many, their TDM cost, their cacheline use, their partitions.

A PartitionedSharedLayout cuts an operand along ``partition_dim`` into ``num_partitions x
num_groups`` pieces (a plain layout is one piece). Each TDM instruction moves at most one piece
per warp (seed, "Choosing the ctaLayout to Reduce TDM Traffic"), so

* seed:   TDM instructions = ceil(pieces / warps);
* Triton: ``warpsAlongPartition = gcd(warps, pieces)``, ceil(pieces / warpsAlongPartition)
  (TDMUtility.cpp; the same number whenever both are powers of two).

The seed's B operand, N-contiguous fp16, K = 128: eight [K, 16] pieces take 2 TDM instructions
with 4 warps and each piece row (32 B) fills a quarter of a 128-byte cacheline; two [K, 64]
pieces take one and fill whole lines:

>>> from wgpsim.layout.shared import PartitionedSharedLayout, SwizzledSharedLayout
>>> inner = SwizzledSharedLayout(1, 1, 1, (1, 0))
>>> p = piece_info(PartitionedSharedLayout(2, 4, 1, inner), (128, 128), 1, 2, 4, 128)
>>> p.num_pieces, p.piece_shape, p.tdm_instructions, p.row_bytes, p.cacheline_use
(8, (128, 16), 2, 32, 0.25)
>>> piece_info(PartitionedSharedLayout(2, 1, 1, inner), (128, 128), 1, 2, 4, 128).cacheline_use
1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import ceil, gcd
from typing import Any

import numpy as np

from wgpsim.errors import LayoutError
from wgpsim.layout.notation import parse_any
from wgpsim.layout.shared import PaddedSharedLayout, PartitionedSharedLayout


@dataclass(frozen=True)
class PieceInfo:
    """Pieces of one operand in its shared layout (``partition_dim`` None: not partitioned)."""

    num_pieces: int
    num_partitions: int
    num_groups: int
    partition_dim: int | None
    piece_shape: tuple[int, ...]
    tdm_instructions: int
    tdm_instructions_triton: int
    row_bytes: int
    cacheline_use: float


def tdm_instructions(num_pieces: int, num_warps: int) -> int:
    """The seed's formula: ceil(pieces / warps).

    >>> tdm_instructions(4, 4), tdm_instructions(8, 4), tdm_instructions(2, 4)
    (1, 2, 1)
    """
    return ceil(num_pieces / num_warps)


def tdm_instructions_triton(num_pieces: int, num_warps: int) -> int:
    """Triton's ``distributeTDMWarpsAlignToPartition``: ceil(pieces / gcd(warps, pieces)).

    >>> tdm_instructions_triton(8, 4), tdm_instructions_triton(6, 4)
    (2, 3)
    """
    return ceil(num_pieces / gcd(num_warps, num_pieces))


def cacheline_use(row_bytes: int, line_bytes: int) -> float:
    """Fraction of the cachelines a contiguous row of ``row_bytes`` touches that it fills
    (row aligned to a line).

    >>> cacheline_use(32, 128), cacheline_use(256, 128), cacheline_use(192, 128)
    (0.25, 1.0, 0.75)
    """
    return row_bytes / (ceil(row_bytes / line_bytes) * line_bytes)


def piece_info(
    shared: Any,
    shape: Sequence[int],
    contiguous_dim: int,
    elem_bytes: int,
    num_warps: int,
    line_bytes: int,
) -> PieceInfo:
    """Pieces, TDM instructions and cacheline use of an operand of ``shape`` in ``shared`` (an
    encoding, its ``#ttg`` text or dict, or a Gluon layout object).

    A piece row is the piece's extent along the contiguous dim, in bytes (what one strided
    TDM row reads from global memory).
    """
    shape, shared = tuple(int(s) for s in shape), parse_any(shared)
    if isinstance(shared, PartitionedSharedLayout):
        piece = shared.piece_shape(shape)
        parts, groups, dim = shared.num_partitions, shared.num_groups, shared.partition_dim
    else:
        piece, parts, groups, dim = shape, 1, 1, None
    pieces = parts * groups
    row = piece[contiguous_dim] * elem_bytes
    return PieceInfo(
        pieces,
        parts,
        groups,
        dim,
        piece,
        tdm_instructions(pieces, num_warps),
        tdm_instructions_triton(pieces, num_warps),
        row,
        cacheline_use(row, line_bytes),
    )


def element_addresses(
    shared: Any, shape: Sequence[int], elem_bytes: int, bases: int | Sequence[int] = 0
) -> np.ndarray:
    """LDS byte address of every element of a ``shape`` tensor in ``shared`` (int64[shape]).

    ``bases``: the buffer's address, or one per partition buffer (``Allocation.offsets_of``).

    >>> from wgpsim.layout.shared import SwizzledSharedLayout
    >>> element_addresses(SwizzledSharedLayout(1, 1, 1, (1, 0)), (2, 4), 2, 64).tolist()
    [[64, 66, 68, 70], [72, 74, 76, 78]]
    """
    shape, shared = tuple(int(s) for s in shape), parse_any(shared)
    ll = shared.to_linear_layout(shape)
    offset = np.arange(ll.in_dim_size("offset"))[:, None]
    parts = ll.in_dim_size("partition") if ll.has_in_dim("partition") else 1
    part = np.arange(parts)[None, :]
    inputs = {"offset": offset}
    if ll.has_in_dim("partition"):
        inputs["partition"] = part
    out = ll.apply(inputs)
    grid = (offset.size, parts)
    coords = tuple(np.broadcast_to(out[f"dim{d}"], grid).ravel() for d in range(len(shape)))
    padded = offset
    if isinstance(shared, PaddedSharedLayout | PartitionedSharedLayout):
        padded = np.asarray(shared.pad(offset), dtype=np.int64)
    base = np.asarray(bases, dtype=np.int64).reshape(-1)
    if base.size != parts:
        raise LayoutError(
            f"bases {base.tolist()}: the layout has {parts} buffer(s), give one address each"
        )
    addr = np.broadcast_to(base[part] + padded * elem_bytes, grid).ravel()
    result = np.full(shape, -1, dtype=np.int64)
    result[coords] = addr
    if (result < 0).any():
        raise LayoutError(f"shared layout does not hold every element of shape {list(shape)}")
    return result


def band_partitions(
    addresses: np.ndarray, dim: int, extent: int, partition_size: int
) -> list[tuple[int, ...]]:
    """Physical LDS partitions of each band of ``extent`` rows along ``dim`` (all of the other
    dim), from the element address map.

    >>> band_partitions(np.array([[0, 2], [65536, 65538]]), 0, 1, 65536)
    [(0,), (1,)]
    """
    moved = np.moveaxis(addresses, dim, 0)
    bands = moved.reshape(moved.shape[0] // extent, -1) // partition_size
    if bands.size and (bands.min() < 0 or bands.max() >= 62):  # not as bits: one by one
        return [tuple(int(p) for p in np.unique(b)) for b in bands]
    masks = np.bitwise_or.reduce(np.int64(1) << bands, axis=1).tolist()
    names = {m: tuple(p for p in range(m.bit_length()) if m >> p & 1) for m in set(masks)}
    return [names[m] for m in masks]


def band_pieces(shared: Any, shape: Sequence[int], dim: int, extent: int) -> list[tuple[int, ...]]:
    """Logical pieces (``j``: partition ``j % num_partitions``, group ``j // num_partitions``)
    each band of ``extent`` along ``dim`` lies in; a plain layout is piece 0."""
    num_bands, shared = shape[dim] // extent, parse_any(shared)
    if not isinstance(shared, PartitionedSharedLayout):
        return [(0,)] * num_bands
    pdim, piece = shared.partition_dim, shared.piece_shape(shape)[shared.partition_dim]
    if pdim != dim:
        return [tuple(range(shared.num_logical_pieces))] * num_bands
    return [
        tuple(sorted({(b * extent + i) // piece for i in range(extent)})) for b in range(num_bands)
    ]


def lockstep_partition_overlaps(
    addresses: np.ndarray,
    pairs: Sequence[int],
    partition_size: int,
    rounds: Sequence[int] | None = None,
) -> list[int]:
    """Instructions ``k`` of a lowering (``addresses[warp, k, lane]``) in which warps of
    different SIMD pairs touch a common physical partition, issuing together (lock step; with
    ``rounds``, only warps of one issue round meet).

    >>> a = np.array([[[0] * 32], [[65536] * 32], [[16] * 32], [[65552] * 32]])
    >>> lockstep_partition_overlaps(a, [0, 1, 0, 1], 65536)
    []
    """
    active = addresses >= 0
    part = np.where(active, addresses // partition_size, 0)
    if part.size and part.max() >= 62:  # more partitions than bits: one set per warp instead
        return _lockstep_by_sets(addresses, pairs, partition_size, rounds)
    masks = np.bitwise_or.reduce(np.where(active, np.int64(1) << part, 0), axis=-1)
    return np.flatnonzero(pair_mask_overlaps(masks, pairs, rounds)).tolist()


def _lockstep_by_sets(addresses, pairs, partition_size, rounds) -> list[int]:
    hits = []
    for k in range(addresses.shape[1]):
        sets = []
        for w in range(addresses.shape[0]):
            lanes = addresses[w, k]
            sets.append(set((lanes[lanes >= 0] // partition_size).tolist()))
        if cross_pair_overlap(sets, pairs, rounds):
            hits.append(k)
    return hits


def pair_mask_overlaps(
    masks: np.ndarray, pairs: Sequence[int], rounds: Sequence[int] | None = None
) -> np.ndarray:
    """Per column ``k`` of ``masks[warp, k]`` (bitmasks, e.g. of partitions): whether warps of
    different pairs in one issue round have a bit in common (``cross_pair_overlap`` of the
    masks' bit sets, for every column at once).

    >>> pair_mask_overlaps(np.array([[1, 1], [2, 2], [1, 2], [1, 1]]), [0, 1, 0, 1]).tolist()
    [True, True]
    >>> pair_mask_overlaps(np.array([[1], [2], [2], [1]]), [0, 1, 0, 1], [0, 0, 1, 1]).tolist()
    [False]
    """
    pairs_ = np.asarray(pairs)
    rounds_ = np.zeros(len(pairs_), dtype=np.int64) if rounds is None else np.asarray(rounds)
    groups = sorted(set(zip(rounds_.tolist(), pairs_.tolist(), strict=True)))
    acc = {
        g: np.bitwise_or.reduce(masks[(rounds_ == g[0]) & (pairs_ == g[1])], axis=0) for g in groups
    }
    hit = np.zeros(masks.shape[1:], dtype=bool)
    for a in groups:
        for b in groups:
            if a[0] == b[0] and a[1] < b[1]:
                hit |= (acc[a] & acc[b]) != 0
    return hit


def cross_pair_overlap(
    sets: Sequence[set[int]], pairs: Sequence[int], rounds: Sequence[int] | None = None
) -> bool:
    """Whether, within one issue round, warps of different pairs have intersecting sets.

    >>> cross_pair_overlap([{0}, {1}, {0}, {0}], [0, 1, 0, 1])
    True
    >>> cross_pair_overlap([{0}, {1}, {1}, {0}], [0, 1, 0, 1], [0, 0, 1, 1])
    False
    """
    rounds = [0] * len(pairs) if rounds is None else list(rounds)
    by_key: dict[tuple[int, int], set[int]] = {}
    for s, p, r in zip(sets, pairs, rounds, strict=True):
        by_key.setdefault((int(r), int(p)), set()).update(s)
    return any(
        by_key[a] & by_key[b] for a in by_key for b in by_key if a[0] == b[0] and a[1] < b[1]
    )


__all__ = [
    "PieceInfo",
    "band_partitions",
    "band_pieces",
    "cacheline_use",
    "cross_pair_overlap",
    "element_addresses",
    "lockstep_partition_overlaps",
    "pair_mask_overlaps",
    "piece_info",
    "tdm_instructions",
    "tdm_instructions_triton",
]
