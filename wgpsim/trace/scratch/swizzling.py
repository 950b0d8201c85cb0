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
from wgpsim.layout.cvt_swizzle import flat_bases, swizzle_bases
from wgpsim.layout.linear_layout import LinearLayout

__all__ = ["ScratchTile", "flat_bases", "scratch_tile"]


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


def scratch_tile(
    src: LinearLayout, dst: LinearLayout, bits: int, num_banks: int = 64
) -> ScratchTile:
    """``optimalSwizzlingLdSt(src, dst, bits, num_banks)`` for sequential-lane loads and stores
    (`wgpsim.layout.cvt_swizzle.swizzle_bases`), its segment bases in the registers of both
    layouts split off as ``reps``; ``src``/``dst`` without broadcast registers or a block dim."""
    vector, bank, segment = swizzle_bases(src, dst, bits, num_banks)
    both = set(flat_bases(src, "register")) & set(flat_bases(dst, "register"))
    reps = [s for s in segment if s in both]
    segment = [s for s in segment if s not in both]
    return ScratchTile(tuple(vector), tuple(bank), tuple(segment), tuple(reps))
