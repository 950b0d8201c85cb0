"""The scratch layout Triton 3.9.0 picks for a ``convert_layout`` through LDS (generic swizzling).

``optimalSwizzlingLdSt`` (Triton's ``lib/Tools/GenericSwizzling.cpp``) works on flattened
layouts: every register, lane and warp basis is one integer, its flat tensor index (Triton's
``flattenOuts``: the first out dim is the most minor). It builds the scratch tile as four groups
of bases over that index, from the lowest scratch offset bit up:

- ``vector``: bases in the registers of both layouts (so one ``ds_store``/``ds_load`` moves them
  together), topped up to 32 bits with registers of one side that are warps of the other;
- ``bank``: the bases that fill one row of ``num_banks`` 4-byte banks;
- ``segment``: the rest, chosen so that the lanes of one store (and of one load) differ in a bank
  bit: a basis neither side's lanes touch first, then XORs of a source-only and a
  destination-only lane basis (a swizzle), then conflicts;
- ``reps``: segment bases in the registers of both layouts: the tile is moved in
  ``2 ** len(reps)`` rounds through the same scratch, with barriers between.

A 64-element fp32 column sum, ``slice(dim 0)`` of a 4x16-lane blocked layout into a 1-D blocked
layout, needs no swizzle: the registers share no basis (no vector bases), and the tile is the
identity; each source lane's 4 registers are still contiguous in it, so the store that
``lowerLdStShared`` emits is one ``ds_store_b128``.

>>> from wgpsim.layout.linear_layout import LinearLayout
>>> src = LinearLayout.from_bases({"register": [[1], [2]], "lane": [[4], [8], [16], [32], [0]],
...                                "warp": [[0], [0]]}, ["dim0"])
>>> dst = LinearLayout.from_bases({"register": [], "lane": [[1], [2], [4], [8], [16]],
...                                "warp": [[32], [0]]}, ["dim0"])
>>> tile = scratch_tile(src, dst, 32)
>>> tile.vector, tile.bank, tile.segment, tile.reps
((), (1, 2, 4, 8, 16, 32), (), ())
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wgpsim.layout import gf2
from wgpsim.layout.bits import log2
from wgpsim.layout.linear_layout import LinearLayout

MAX_VECTOR_BITS = 128
"""Widest vector one lane stores or loads (``ds_store_b128``)."""

BANK_BITS = 32
"""Bits of one LDS bank (4 bytes)."""


@dataclass(frozen=True)
class ScratchTile:
    """The swizzled scratch: flat tensor index of each scratch offset bit, in four groups
    (``vector`` lowest, then ``bank``, ``segment``), and the ``reps`` bases moved in rounds."""

    vector: tuple[int, ...]
    bank: tuple[int, ...]
    segment: tuple[int, ...]
    reps: tuple[int, ...]

    @property
    def offset_bases(self) -> tuple[int, ...]:
        """Flat index of scratch offset bit k (the tile of one round)."""
        return self.vector + self.bank + self.segment

    @property
    def rounds(self) -> int:
        return 1 << len(self.reps)

    @property
    def elems(self) -> int:
        """Elements of scratch one round uses."""
        return 1 << len(self.offset_bases)

    def offsets_of(self, flat: np.ndarray) -> np.ndarray:
        """Scratch element offset of flat tensor index ``flat`` (its reps bits dropped: every
        round uses the same scratch)."""
        inverse = _inverse(list(self.offset_bases + self.reps))
        out = np.zeros_like(np.asarray(flat, dtype=np.int64))
        for bit, column in enumerate(inverse):
            out ^= np.where((np.asarray(flat) >> bit) & 1, column, 0)
        return out & (self.elems - 1)


def _inverse(bases: list[int]) -> list[int]:
    """For an invertible map with column k = ``bases[k]``: the preimage of each unit vector."""
    n = len(bases)
    rows = [sum(((b >> j) & 1) << k for k, b in enumerate(bases)) for j in range(n)]
    return gf2.lstsq(rows, [1 << j for j in range(n)], n, n)


def flat_bases(layout: LinearLayout, dim: str) -> list[int]:
    """``dim``'s bases of ``layout`` as flat tensor indices (Triton's ``flattenOuts``)."""
    if not layout.has_in_dim(dim):
        return []
    flat = layout.flatten_outs()
    return [b[0] for b in flat.get_bases(dim)]


def _intersection(a: list[int], b: list[int]) -> list[int]:
    """Bases of ``a`` also in ``b``, in ``a``'s order (Triton's ``intersectionBasis`` for
    power-of-two bases, the only ones blocked, sliced and WMMA layouts have)."""
    return [x for x in a if x and x in b]


def vector_bases(src: LinearLayout, dst: LinearLayout, bits: int) -> list[int]:
    """``getVecBasisLdSt``: the bases one store and one load move together: registers of both,
    then (below 32 bits) registers of one side that are warps of the other, and warps."""
    reg_src, reg_dst = flat_bases(src, "register"), flat_bases(dst, "register")
    vbasis = _intersection(reg_src, reg_dst)[: log2(MAX_VECTOR_BITS // bits)]
    if (1 << len(vbasis)) * bits >= BANK_BITS:
        return vbasis
    per_bank = log2(BANK_BITS // bits)
    warp_src = [w for w in flat_bases(src, "warp") if w]
    warp_dst = [w for w in flat_bases(dst, "warp") if w]
    src_warp = _intersection([r for r in reg_src if r not in vbasis], warp_dst)
    dst_warp = _intersection([r for r in reg_dst if r not in vbasis], warp_src)
    if len(src_warp) == len(dst_warp) and src_warp:
        src_fills = min(src_warp) < min(dst_warp)
    else:
        src_fills = len(src_warp) > len(dst_warp)
    vbasis += src_warp if src_fills else dst_warp
    if len(vbasis) < per_bank:
        vbasis += _intersection(warp_src, warp_dst)
    i = 0
    while len(vbasis) < per_bank and (i < len(warp_src) or i < len(warp_dst)):
        if i < len(warp_src) and warp_src[i] not in vbasis:
            vbasis.append(warp_src[i])
        if len(vbasis) < per_bank and i < len(warp_dst) and warp_dst[i] not in vbasis:
            vbasis.append(warp_dst[i])
        i += 1
    return vbasis[:per_bank]


def lane_tile(lanes: list[int], vec_elems: int, bits: int, num_banks: int) -> list[int]:
    """``getLaneTile``: the lane bases of one LDS cycle (sequential lanes: all but the top
    ``log2Phase``, the lanes beyond one row of ``num_banks`` banks)."""
    log2_vec = log2(max(1, vec_elems * bits // BANK_BITS))
    phase = max(0, log2_vec + len(lanes) - log2(num_banks))
    return lanes[: len(lanes) - phase]


def _segment(bank_src: list[int], bank_dst: list[int], dim: int, length: int) -> list[int]:
    """``computeSegment``: segment bases that keep both sides' lanes in distinct banks."""
    set_src = {b for b in bank_src if b}
    set_dst = {b for b in bank_dst if b}
    segment = [1 << b for b in range(dim) if (1 << b) not in set_src and (1 << b) not in set_dst]
    if len(segment) >= length:
        return segment[:length]
    a = sorted(v for v in set_src if v not in set_dst)
    b = sorted(v for v in set_dst if v not in set_src)
    if len(a) > len(b):
        a, b = b, a
    conflicts = min(max(0, length - len(a) - len(segment)), len(a))
    segment += [a[i] ^ b[i] for i in range(conflicts, len(a))]
    segment += a[:conflicts] + b[:conflicts]
    return segment[:length]


def _complement(basis: list[int], dim: int) -> list[int]:
    """``complementBasis``: unit vectors completing ``basis`` (the non-pivot columns of its
    row echelon form)."""
    pivots = set(gf2.rref(basis, dim)[1])
    return [1 << i for i in range(dim) if i not in pivots]


def scratch_tile(
    src: LinearLayout, dst: LinearLayout, bits: int, num_banks: int = 64
) -> ScratchTile:
    """``optimalSwizzlingLdSt(src, dst, bits, num_banks)`` for sequential-lane loads and stores;
    ``src``/``dst`` without broadcast registers or a block dim."""
    dim = log2(src.total_out_size)
    vbasis = vector_bases(src, dst, bits)
    vec = 1 << len(vbasis)
    tile_src = lane_tile(flat_bases(src, "lane"), vec, bits, num_banks)
    tile_dst = lane_tile(flat_bases(dst, "lane"), vec, bits, num_banks)
    len_bank = min(log2(num_banks * BANK_BITS // (vec * bits)), dim - len(vbasis))
    len_segment = dim - len_bank - len(vbasis)
    segment = _segment(vbasis + tile_src, vbasis + tile_dst, dim, len_segment)
    bank = _complement(vbasis + segment, dim)
    reg_src, reg_dst = flat_bases(src, "register"), flat_bases(dst, "register")
    reps = [s for s in segment if s in reg_src and s in reg_dst]
    segment = [s for s in segment if s not in reps]
    return ScratchTile(tuple(vbasis), tuple(bank), tuple(segment), tuple(reps))
