"""The WMMA layouts of gfx1250: ``#ttg.amd_wmma`` version 3 (the result of a WMMA instruction,
placed by its ctaLayout) and ``#ttg.dot_op`` (its A and B operands, ``kWidth`` consecutive K
elements per register group).

Both are distributed encodings (`wgpsim.layout.distributed`): ``to_linear_layout(shape)`` is
Triton 3.9.0's linear layout, in dims ``register, lane, warp, block`` -> ``dim0..``. The seed's
standard ``warpsPerCTA = [2, 2]`` on a 64x64 tile: each warp owns a 16x16 tile, and register
repeats fill the rest.

>>> L = AMDWMMALayout.from_warps_per_cta([2, 2], instr_shape=(16, 16, 32)).to_linear_layout((64, 64))
>>> L.get_bases("warp")
((0, 16), (16, 0))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wgpsim.errors import LayoutError, LayoutRangeError, shown
from wgpsim.layout.distributed import (
    WARP_SIZE,
    Bases,
    DistributedLayout,
    as_bases,
    as_lists,
    check_shape,
    fit_distributed,
    identity_standard_nd,
    require_pow2,
    standard_dims,
)
from wgpsim.layout.linear_layout import LinearLayout

#: (M, N) of the gfx1250 WMMA (version 3) instructions Triton models.
WMMA_V3_MN = ((16, 16), (32, 16))
MAX_K_WIDTH = 64
"""The largest dot-operand ``kWidth`` taken: a bound against unbounded sizes (a ``kWidth`` of 2^32
would build 2^32 register bases), not a hardware limit. Triton 3.9.0 takes kWidths above the K a
lane holds per WMMA tile (kWidth 16 on a 16x16x4 tile converts in Gluon), so that is no bound;
64 elements is four times the widest 128-bit load of 8-bit elements."""
WMMA_TILE = 16  # lanes 0-15 walk one 16-wide side of every WMMA tile


@dataclass(frozen=True)
class AMDWMMALayout(DistributedLayout):
    """``#ttg.amd_wmma`` version 3 (gfx1250): the WMMA result layout.

    One ``instr_shape[0] x instr_shape[1]`` tile per instruction (``N x M`` when ``transposed``);
    the ctaLayout (``warp_bases``, ``reg_bases``) places whole tiles, ``[tileRow, tileCol]``.
    The seed's standard ``warpsPerCTA = [2, 2]`` on 64x64 (register repeats fill the rest):

    >>> L = AMDWMMALayout(3, False, [[0, 1], [1, 0]], instr_shape=(16, 16, 32)).to_linear_layout((64, 64))
    >>> L.get_bases("register"), L.get_bases("warp")
    (((1, 0), (2, 0), (4, 0), (0, 32), (32, 0)), ((0, 16), (16, 0)))
    """

    version: int = 3
    transposed: bool = False
    warp_bases: Bases = ()
    reg_bases: Bases = ()
    instr_shape: tuple[int, int, int] = (16, 16, 16)

    def __post_init__(self) -> None:
        what = "amd_wmma"
        if self.version != 3:
            raise LayoutError(f"{what}: field 'version' must be 3 (gfx1250), got {self.version}")
        object.__setattr__(self, "transposed", bool(self.transposed))
        object.__setattr__(self, "warp_bases", as_bases(self.warp_bases, what, "warp"))
        object.__setattr__(self, "reg_bases", as_bases(self.reg_bases, what, "register"))
        shape = tuple(int(v) for v in self.instr_shape)
        object.__setattr__(self, "instr_shape", shape)
        if len(shape) != 3 or shape[:2] not in WMMA_V3_MN:
            raise LayoutError(
                f"{what}: field 'instrShape' {list(shape)} must be [M, N, K] with [M, N] one of "
                f"{[list(mn) for mn in WMMA_V3_MN]}"
            )
        require_pow2(what, "instrShape[2]", shape[2])
        ranks = {len(b) for b in (*self.warp_bases, *self.reg_bases)}
        if len(ranks) > 1 or ranks - {2, 3}:
            raise LayoutError(
                f"{what}: ctaLayout bases {as_lists(self.warp_bases + self.reg_bases)} must all have "
                "2 entries (or 3 for a batched rank-3 layout)"
            )
        self.cta_layout(self.rank or 2)  # checks surjectivity

    @classmethod
    def from_warps_per_cta(
        cls,
        warps_per_cta: Sequence[int],
        transposed: bool = False,
        instr_shape: Sequence[int] = (16, 16, 16),
    ) -> AMDWMMALayout:
        """The bespoke ``warpsPerCTA = [wm, wn]`` form: warps walk N (dim 1) first, then M.

        >>> AMDWMMALayout.from_warps_per_cta([2, 2]).warp_bases
        ((0, 1), (1, 0))
        """
        try:
            wpc = [int(w) for w in warps_per_cta]
        except (TypeError, ValueError):
            raise LayoutError(
                f"amd_wmma: field 'warpsPerCTA' must be 2 integers, got {shown(warps_per_cta)}"
            ) from None
        if len(wpc) != 2:
            raise LayoutError(f"amd_wmma: field 'warpsPerCTA' {wpc} must have 2 entries")
        for w in wpc:
            require_pow2("amd_wmma", "warpsPerCTA", w)
        warp = identity_standard_nd("warp", wpc, (1, 0)).transpose_outs(["dim0", "dim1"])
        return cls(3, transposed, warp.get_bases("warp"), (), tuple(instr_shape))

    @property
    def num_warps(self) -> int:
        return 1 << len(self.warp_bases)

    @property
    def rank(self) -> int | None:
        """2, or 3 for a batched layout (dim 0 the batch); None when no basis says (an empty
        ctaLayout fits a tensor of either rank)."""
        return next((len(b) for b in (*self.warp_bases, *self.reg_bases)), None)

    @property
    def tile_shape(self) -> tuple[int, int]:
        """(rows, cols) of one instruction's tile in tensor coordinates (the last two dims)."""
        m, n = self.instr_shape[:2]
        return (n, m) if self.transposed else (m, n)

    def cta_layout(self, rank: int = 2) -> LinearLayout:
        """The ctaLayout as a layout (register, warp) -> tiles (``dim0..``); must be surjective."""
        try:
            return LinearLayout.from_bases(
                {"register": self.reg_bases, "warp": self.warp_bases}, standard_dims(rank)
            )
        except LayoutError:
            raise LayoutError(
                f"amd_wmma: ctaLayout {{register = {as_lists(self.reg_bases)}, warp = "
                f"{as_lists(self.warp_bases)}}} must reach every tile of the grid it spans (it is "
                "not surjective); add register bases for the tiles no warp reaches"
            ) from None

    def tile_layout(self, rank: int = 2) -> LinearLayout:
        """One instruction (wave32) on the last two dims: lanes 0-15 along N, lane 16 -> +8
        along M, registers along M (a 32x16 instruction has one more register basis, +16 along
        M). A batched (rank 3) layout's tile has size 1 along the batch dim 0."""
        regs = [[1, 0], [2, 0], [4, 0]] + ([[16, 0]] if self.instr_shape[0] == 32 else [])
        lanes = [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]]
        if self.transposed:
            regs, lanes = ([b[::-1] for b in regs], [b[::-1] for b in lanes])
        batch = [0] * (rank - 2)
        return LinearLayout.from_bases(
            {"register": [batch + b for b in regs], "lane": [batch + b for b in lanes]},
            standard_dims(rank),
        )

    def _shape_rank(self, shape: Sequence[int]) -> int:
        rank = self.rank or len(shape)
        if rank not in (2, 3) or len(shape) != rank:
            raise LayoutError(
                f"amd_wmma: shape {list(shape)} has rank {len(shape)}, expected "
                f"{rank if self.rank else '2 or 3'} (the rank of the ctaLayout bases)"
            )
        return rank

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        rank = self._shape_rank(shape)
        shape = check_shape(shape, "amd_wmma", rank)
        ll = self.tile_layout(rank) * self.cta_layout(rank)
        ll = ll.transpose_outs(standard_dims(rank)[::-1])  # repeats go N, then M, then batch
        return fit_distributed(ll, shape, drop_registers=False)


@dataclass(frozen=True)
class DotOperandLayout(DistributedLayout):
    """``#ttg.dot_op``: the A (``op_idx`` 0, [M, K]) or B (1, [K, N]) operand of a WMMA parent,
    ``k_width`` consecutive K elements per register group.

    >>> mma = AMDWMMALayout(3, False, [[0, 1], [1, 0]], instr_shape=(16, 16, 32))
    >>> L = DotOperandLayout(0, mma, 8).to_linear_layout((128, 64))
    >>> L.get_bases("register")
    ((0, 1), (0, 2), (0, 4), (0, 16), (0, 32), (32, 0), (64, 0))
    >>> L.get_bases("warp")
    ((0, 0), (16, 0))
    """

    op_idx: int
    parent: AMDWMMALayout
    k_width: int

    def __post_init__(self) -> None:
        what = "dot_op"
        if self.op_idx not in (0, 1):
            raise LayoutError(f"{what}: field 'opIdx' must be 0 or 1, got {self.op_idx}")
        # an MMA parent that builds its own operand layouts (``#ttg.amd_mfma``:
        # `wgpsim.layout.mma.mfma`) or the WMMA one above
        if not isinstance(self.parent, AMDWMMALayout) and not hasattr(self.parent, "dot_operand"):
            raise LayoutError(
                f"{what}: field 'parent' must be an amd_wmma or amd_mfma layout, got "
                f"{type(self.parent).__name__}"
            )
        require_pow2(what, "kWidth", self.k_width)
        if self.k_width > MAX_K_WIDTH:
            raise LayoutRangeError(
                f"{what}: field 'kWidth' {shown(self.k_width)} is out of range (valid: "
                f"1..{MAX_K_WIDTH}, a power of two)"
            )

    @property
    def num_warps(self) -> int:
        return self.parent.num_warps

    @property
    def rank(self) -> int | None:
        return self.parent.rank

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        if hasattr(self.parent, "dot_operand"):
            return self.parent.dot_operand(self.op_idx, self.k_width, shape)
        rank = self.parent._shape_rank(shape)
        shape = check_shape(shape, "dot_op", rank)
        dims = standard_dims(rank)
        k_dim, non_k = (dims[-1], dims[-2]) if self.op_idx == 0 else (dims[-2], dims[-1])
        instr_k = self.parent.instr_shape[2]
        tile_non_k = self.parent.tile_shape[self.op_idx]
        k_depth = WARP_SIZE // WMMA_TILE
        ident = LinearLayout.identity_1d
        tile = (
            ident(self.k_width, "register", k_dim)
            * ident(WMMA_TILE, "lane", non_k)
            * ident(k_depth, "lane", k_dim)
            * ident(instr_k // (k_depth * self.k_width), "register", k_dim)
        )
        if tile_non_k > WMMA_TILE:
            tile = tile * ident(tile_non_k // WMMA_TILE, "register", non_k)
        cta = _project_away(self.parent.cta_layout(rank), k_dim).remove_zero_bases("register")
        ll = (tile * cta).transpose_outs([k_dim, non_k, *dims[:-2]])
        return fit_distributed(ll, shape, drop_registers=False)


def _project_away(ll: LinearLayout, out_dim: str) -> LinearLayout:
    """Triton ``projectAwayOutDim``: ``ll`` without out dim ``out_dim`` (other sizes kept)."""
    keep = [o for o in ll.out_dim_names if o != out_dim]
    return ll.sublayout(ll.in_dim_names, keep)


__all__ = ["MAX_K_WIDTH", "WMMA_TILE", "WMMA_V3_MN", "AMDWMMALayout", "DotOperandLayout"]
