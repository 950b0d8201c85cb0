"""``#ttg.amd_mfma``: the MFMA result layout of gfx942 (version 3) and gfx950 (version 4).

One ``M x N`` tile per instruction over the 64 lanes of a wave64 warp (Triton 3.9.0's
``mfmaToLinearLayout``): a 32x32 tile gives each lane 16 elements, registers walking M by 1, 2,
then 8, 16 (4-row groups with a gap), lanes 0-31 walking N, lane 32 stepping 4 rows down M; a
16x16 tile gives each lane 4 elements, registers walking M by 1, 2, lanes 0-15 walking N and
lanes 16, 32 stepping M by 4, 8. ``isTransposed`` swaps M and N within the tile. Warps tile
``warpsPerCTA`` with the last dim fastest, then register repeats fill the shape (N, then M).

Checked against Triton's own conversion (``tests/test_layout_mfma.py``). The gfx950 GEMM of
the corpus (``warpsPerCTA = [2, 2]``, 32x32, transposed) on 128x128:

>>> L = AMDMFMALayout(4, (2, 2), (32, 32, 16), True).to_linear_layout((128, 128))
>>> L.get_bases("register")
((0, 1), (0, 2), (0, 8), (0, 16), (0, 64), (64, 0))
>>> L.get_bases("lane")
((1, 0), (2, 0), (4, 0), (8, 0), (16, 0), (0, 4))
>>> L.get_bases("warp")
((0, 32), (32, 0))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wgpsim.errors import LayoutError
from wgpsim.layout.distributed import (
    DistributedLayout,
    check_shape,
    fit_distributed,
    identity_standard_nd,
    require_pow2,
    standard_dims,
)
from wgpsim.layout.linear_layout import LinearLayout

__all__ = ["MFMA_MN", "MFMA_VERSIONS", "AMDMFMALayout"]

#: (M, N) of the MFMA tiles Triton's layout models here (its 4x4 and 64x4 forms are not).
MFMA_MN = ((32, 32), (16, 16))
#: MFMA versions: 3 for gfx942 (CDNA3), 4 for gfx950 (CDNA4); 1-2 are older chips.
MFMA_VERSIONS = (1, 2, 3, 4)

#: (register bases, lane bases) of one tile as (M step, N step), by its M.
_TILES = {
    32: (((1, 0), (2, 0), (8, 0), (16, 0)), ((0, 1), (0, 2), (0, 4), (0, 8), (0, 16), (4, 0))),
    16: (((1, 0), (2, 0)), ((0, 1), (0, 2), (0, 4), (0, 8), (4, 0), (8, 0))),
}


@dataclass(frozen=True)
class AMDMFMALayout(DistributedLayout):
    """``#ttg.amd_mfma<{version, warpsPerCTA, instrShape, isTransposed}>`` (one CTA)."""

    version: int
    warps_per_cta: tuple[int, ...]
    instr_shape: tuple[int, ...] = (32, 32, 8)
    transposed: bool = False

    def __post_init__(self) -> None:
        what = "amd_mfma"
        if self.version not in MFMA_VERSIONS:
            raise LayoutError(
                f"{what}: field 'version' must be one of {list(MFMA_VERSIONS)}, got {self.version}"
            )
        object.__setattr__(self, "warps_per_cta", tuple(int(w) for w in self.warps_per_cta))
        object.__setattr__(self, "instr_shape", tuple(int(v) for v in self.instr_shape))
        object.__setattr__(self, "transposed", bool(self.transposed))
        if len(self.warps_per_cta) not in (2, 3):
            raise LayoutError(
                f"{what}: field 'warpsPerCTA' {list(self.warps_per_cta)} must have 2 or 3 entries"
            )
        for w in self.warps_per_cta:
            require_pow2(what, "warpsPerCTA", w)
        if len(self.instr_shape) < 2 or tuple(self.instr_shape[:2]) not in MFMA_MN:
            raise LayoutError(
                f"{what}: field 'instrShape' {list(self.instr_shape)} must start with one of "
                f"{[list(mn) for mn in MFMA_MN]} (other MFMA tiles are not modelled)"
            )

    @property
    def rank(self) -> int:
        return len(self.warps_per_cta)

    @property
    def num_warps(self) -> int:
        n = 1
        for w in self.warps_per_cta:
            n *= w
        return n

    def tile_layout(self) -> LinearLayout:
        """One instruction on the last two dims (size 1 along a batch dim 0)."""
        regs, lanes = _TILES[self.instr_shape[0]]
        if self.transposed:
            regs, lanes = tuple(b[::-1] for b in regs), tuple(b[::-1] for b in lanes)
        batch = [0] * (self.rank - 2)
        return LinearLayout.from_bases(
            {"register": [batch + list(b) for b in regs], "lane": [batch + list(b) for b in lanes]},
            standard_dims(self.rank),
        )

    def dot_operand(self, op_idx: int, k_width: int, shape: Sequence[int]) -> LinearLayout:
        """``#ttg.dot_op<{opIdx, parent = this, kWidth}>`` (Triton's ``mfmaDotToLinearLayout``):
        a lane holds ``k_width`` consecutive K elements; lanes walk the non-K dim (32 or 16
        of them) and then step K by ``k_width`` (twice for a 16x16 tile); registers repeat
        along K, then warps (M, N grid; broadcast along K) and the non-K repeats.

        >>> a = AMDMFMALayout(3, (2, 2), (32, 32, 8), True).dot_operand(0, 4, (128, 64))
        >>> a.get_bases("register"), a.get_bases("warp")
        (((0, 1), (0, 2), (0, 8), (0, 16), (0, 32), (64, 0)), ((0, 0), (32, 0)))
        """
        shape = check_shape(shape, "dot_op", self.rank)
        dims = standard_dims(self.rank)
        k_dim, non_k = (dims[-1], dims[-2]) if op_idx == 0 else (dims[-2], dims[-1])
        ident = LinearLayout.identity_1d
        lanes_k = 2 if self.instr_shape[0] == 32 else 4
        tile = (
            ident(k_width, "register", k_dim)
            * ident(64 // lanes_k, "lane", non_k)
            * ident(lanes_k, "lane", k_dim)
            * ident(max(1, shape[dims.index(k_dim)] // (k_width * lanes_k)), "register", k_dim)
        )
        if self.rank == 3:
            tile = tile * ident(1, "register", dims[0])
        order = tuple(reversed(range(self.rank)))
        warps = identity_standard_nd("warp", self.warps_per_cta, order)
        ll = tile.transpose_outs(dims) * warps.transpose_outs(dims)
        return fit_distributed(ll.transpose_outs(dims[::-1]), shape, drop_registers=False)

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        shape = check_shape(shape, "amd_mfma", self.rank)
        order = tuple(reversed(range(self.rank)))
        warps = identity_standard_nd("warp", self.warps_per_cta, order)
        dims = standard_dims(self.rank)
        ll = self.tile_layout() * warps.transpose_outs(dims)
        ll = ll.transpose_outs(dims[::-1])  # repeats go N, then M, then batch
        return fit_distributed(ll, shape, drop_registers=False)
