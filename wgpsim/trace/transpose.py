"""The transposed LDS loads as Triton models them: ``tile`` and ``fullTile`` linear layouts.

``ds_load_tr16_b128`` and ``ds_load_tr8_b64`` (seed, Part I) let every lane read one
contiguous row of 8 elements, then exchange the rows across each group of 8 lanes. Triton's
gfx1250 lowering (``MemoryOpToLLVM.cpp``) describes one instruction with two layouts:

* ``tile = identity_1d(8, "lane", "offset")``: destination lanes 0..7 hold 8 consecutive LDS
  elements (for a fixed register). A local_load can use the instruction only if its
  ``cvt`` divides on the left by ``tile``.
* ``fullTile``: (lane, register) of the destination -> (``offset`` within the source row,
  ``addr`` = the source lane whose row supplies it). The remaining lane and register bases
  are assigned to ``addr`` in an instruction-specific order, and that order *is* the exchange:
  ``R[0:a], L[3:3+b], R[a:3], L[3+b:5]`` with ``(a, b) = (3, 0)`` for tr16 and ``(2, 1)`` for
  tr8 (seed, Figures 4a and 4b).

>>> print(TR16.full_tile().table())       # Figure 4a: (lane, register) -> (offset, addr)
lane=1 -> (1, 0)
lane=2 -> (2, 0)
lane=4 -> (4, 0)
lane=8 -> (0, 8)
lane=16 -> (0, 16)
register=1 -> (0, 1)
register=2 -> (0, 2)
register=4 -> (0, 4)
warp is a size 1 dimension
where out dims are: [offset (size 8), addr (size 32)]
>>> TR8.full_tile().get_bases("register")   # register=4 now selects S8, not S4 (Figure 4b)
((0, 1), (0, 2), (0, 8))
>>> TR8.source_lanes()[0]                   # D0 draws from two runs of 4 source lanes
array([ 0,  1,  2,  3,  8,  9, 10, 11])
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from wgpsim.errors import LayoutError
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.trace.instructions import CATALOGUE, LANES, instruction


@dataclass(frozen=True)
class TransposedLoad:
    """One ``ds_load_tr`` variant on gfx1250 (Triton's ``LDSTransLoadParams``, "V2").

    ``leading_reg_bases`` / ``leading_lane_bases`` are Triton's ``a`` and ``b``: how many
    register bases, then how many of the non-tile lane bases, come first in ``addr``;
    ``lanes`` the warp it exchanges within (gfx1250's transposed loads are wave32).

    >>> TR16.tile_size, TR16.bytes_per_lane, TR8.tile_size, TR8.bytes_per_lane
    (8, 16, 8, 8)
    """

    name: str
    elem_bits: int
    leading_reg_bases: int
    leading_lane_bases: int
    lanes: int = LANES

    @property
    def inst_bits(self) -> int:
        """Bits read per lane: 128 for tr16_b128, 64 for tr8_b64."""
        return 8 * instruction(self.name).bytes_per_lane

    @property
    def bytes_per_lane(self) -> int:
        return instruction(self.name).bytes_per_lane

    @property
    def tile_size(self) -> int:
        """Contiguous elements of one source row (= registers per destination lane): 8."""
        return self.inst_bits // self.elem_bits

    def tile(self) -> LinearLayout:
        """``identity_1d(8, "lane", "offset")``: the contiguous factor a cvt must start with."""
        return LinearLayout.identity_1d(self.tile_size, "lane", "offset")

    def full_tile(self) -> LinearLayout:
        """(lane, register) of one instruction's destination -> (offset in row, source lane)."""
        reg_bits = self.tile_size.bit_length() - 1
        lane_bits = self.lanes.bit_length() - 1 - reg_bits
        a, b = self.leading_reg_bases, self.leading_lane_bases
        return (
            self.tile()
            * LinearLayout.identity_1d(1 << a, "register", "addr")
            * LinearLayout.identity_1d(1 << b, "lane", "addr")
            * LinearLayout.identity_1d(1 << (reg_bits - a), "register", "addr")
            * LinearLayout.identity_1d(1 << (lane_bits - b), "lane", "addr")
            * LinearLayout.identity_1d(1, "warp", "addr")
        )

    @cached_property
    def _maps(self) -> tuple[np.ndarray, np.ndarray]:
        lane = np.arange(self.lanes)[:, None]
        reg = np.arange(self.tile_size)[None, :]
        out = self.full_tile().apply({"lane": lane, "register": reg, "warp": 0})
        shape = (self.lanes, self.tile_size)
        return np.broadcast_to(out["addr"], shape).copy(), np.broadcast_to(
            out["offset"], shape
        ).copy()

    def source_lanes(self) -> np.ndarray:
        """``[lane, register]``: the source lane whose row feeds each destination register."""
        return self._maps[0]

    def source_elements(self) -> np.ndarray:
        """``[lane, register]``: which element of that source row (always ``lane % 8``)."""
        return self._maps[1]

    @cached_property
    def _inverse(self) -> LinearLayout:
        return self.full_tile().invert()

    def full_tile_inverse(self) -> LinearLayout:
        """``full_tile().invert()``, computed once per instruction (every lowering asks)."""
        return self._inverse

    @cached_property
    def _owner(self) -> tuple[np.ndarray, np.ndarray]:
        out = self._inverse.apply({"offset": 0, "addr": np.arange(self.lanes)})
        lane, reg = np.array(out["lane"]), np.array(out["register"])
        lane.flags.writeable = reg.flags.writeable = False
        return lane, reg

    def row_owner(self) -> tuple[np.ndarray, np.ndarray]:
        """For each source lane ``s``: the destination (lane, register) that gets element 0 of its row.

        This is ``fullTile.invert()`` at ``offset = 0``; a lowering reads row ``s`` at the LDS
        offset the destination layout gives that (lane, register).

        >>> TR16.row_owner()[1][:9]                 # lanes 0-7 read the rows of registers 0-7
        array([0, 1, 2, 3, 4, 5, 6, 7, 0])
        """
        return self._owner


#: lanes a transposed load exchanges within, by the catalogue's spelling: gfx1250 is wave32,
#: gfx950 (the only gfx9 chip with them) wave64
_LANES = {"gfx12": LANES, "gfx9": 64}

TRANSPOSED_LOADS: dict[str, TransposedLoad] = {
    ins.name: TransposedLoad(ins.name, ins.elem_bits, *ins.exchange, lanes=_LANES[ins.family])
    for ins in CATALOGUE
    if ins.kind == "load_tr" and ins.exchange is not None
}
"""Every ``ds_load_tr`` / ``ds_read_b64_tr`` of the catalogue, from its record (name, element
bits, Triton's ``(leadingRegBases, leadingLaneBases)``, the wave it exchanges within)."""

TR16 = TRANSPOSED_LOADS["ds_load_tr16_b128"]
"""16-bit elements: four independent 8x8 transposes (Triton tileKind Standard)."""

TR8 = TRANSPOSED_LOADS["ds_load_tr8_b64"]
"""8-bit elements: each group gathers two runs of 4 source lanes (Triton DoubleContiguity)."""


def transposed_load_for(elem_bits: int, lanes: int = LANES) -> TransposedLoad:
    """The transposed load for an element width in a warp of ``lanes``: gfx1250's (wave32:
    16 -> tr16_b128, 8 -> tr8_b64) or gfx950's (wave64: ds_read_b64_tr_b16 / _b8).

    >>> transposed_load_for(8).name, transposed_load_for(16, 64).name
    ('ds_load_tr8_b64', 'ds_read_b64_tr_b16')
    >>> transposed_load_for(16, 64).source_lanes()[:8, 0]   # lane c <- row 0, lane c // 4
    array([0, 0, 0, 0, 1, 1, 1, 1])
    >>> transposed_load_for(32)
    Traceback (most recent call last):
    ...
    wgpsim.errors.LayoutError: no ds_load_tr for 32-bit elements on gfx1250 (valid: 8, 16)
    """
    for t in TRANSPOSED_LOADS.values():
        if t.elem_bits == elem_bits and t.lanes == lanes:
            return t
    if lanes != LANES:  # a wave64 layout: the gfx1250 instruction says why it does not apply
        return transposed_load_for(elem_bits)
    valid = ", ".join(str(t.elem_bits) for t in TRANSPOSED_LOADS.values() if t.lanes == lanes)
    raise LayoutError(f"no ds_load_tr for {elem_bits}-bit elements on gfx1250 (valid: {valid})")
