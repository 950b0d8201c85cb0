"""Distributed encodings: which register of which lane of which warp holds each tensor element.

Each encoding is a frozen value whose ``to_linear_layout(shape)`` is Triton 3.9.0's linear layout,
in dims ``register, lane, warp, block`` -> out dims ``dim0..``. The layout is built for the
encoding's own tile, then fitted to the tensor (Triton's ``combineCtaCgaWithShape`` with one CTA):
a smaller tile is repeated by extra register bases (out dims in the layout's order), a larger one
is clamped (basis entries past the shape become 0, i.e. broadcast).

The seed's microbenchmark layout on its scaled-down ``[4, 256]`` tensor: 8 fp16 per lane along
dim 1, lanes continue along dim 1, and warp w owns row w.

>>> L = BlockedLayout([1, 8], [1, 32], [4, 1], [1, 0]).to_linear_layout((4, 256))
>>> L.get_bases("register"), L.get_bases("warp")
(((0, 1), (0, 2), (0, 4)), ((1, 0), (2, 0)))
>>> L.get_bases("lane")
((0, 8), (0, 16), (0, 32), (0, 64), (0, 128))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

from wgpsim.errors import LayoutError, LayoutRangeError, shown
from wgpsim.layout.bits import is_pow2
from wgpsim.layout.linear_layout import LinearLayout

#: Lanes per warp on gfx1250 (wave32; Triton ``TargetFeatures::getWarpSize``). The WMMA tiles
#: below are wave32 tiles, so this is a property of the encodings, not a tunable.
WARP_SIZE = 32
DISTRIBUTED_IN_DIMS = ("register", "lane", "warp", "block")
#: (M, N) of the gfx1250 WMMA (version 3) instructions Triton models.
WMMA_V3_MN = ((16, 16), (32, 16))
MAX_K_WIDTH = 64
"""The largest dot-operand ``kWidth`` taken: a bound against unbounded sizes (a ``kWidth`` of 2^32
would build 2^32 register bases), not a hardware limit. Triton 3.9.0 takes kWidths above the K a
lane holds per WMMA tile (kWidth 16 on a 16x16x4 tile converts in Gluon), so that is no bound;
64 elements is four times the widest 128-bit load of 8-bit elements."""
WMMA_TILE = 16  # lanes 0-15 walk one 16-wide side of every WMMA tile

Bases = tuple[tuple[int, ...], ...]


# ------------------------------------------------------------------ small shared helpers
def require_pow2(what: str, field: str, value: int, *, zero_ok: bool = False) -> None:
    """LayoutError unless ``value`` is a positive power of two (or 0 if ``zero_ok``)."""
    if not (is_pow2(value) or (zero_ok and value == 0)):
        raise LayoutError(f"{what}: field '{field}' must be a positive power of two, got {value}")


def standard_dims(rank: int) -> list[str]:
    return [f"dim{i}" for i in range(rank)]


def check_shape(shape: Sequence[int], what: str, rank: int | None = None) -> tuple[int, ...]:
    """The shape as a tuple, every dim a power of two (Triton asserts it), of ``rank`` dims."""
    shape = tuple(int(s) for s in shape)
    if rank is not None and len(shape) != rank:
        raise LayoutError(f"{what}: shape {list(shape)} has rank {len(shape)}, expected {rank}")
    if not shape or not all(is_pow2(s) for s in shape):
        raise LayoutError(f"{what}: shape {list(shape)}: every dim must be a power of two")
    return shape


def check_order(order: Sequence[int], rank: int, what: str) -> tuple[int, ...]:
    order = tuple(int(o) for o in order)
    if sorted(order) != list(range(rank)):
        raise LayoutError(
            f"{what}: field 'order' {list(order)} must be a permutation of 0..{rank - 1}"
        )
    return order


def as_bases(value: Sequence[Sequence[int]], what: str, field: str) -> Bases:
    """Bases as a tuple of int tuples, each entry non-negative."""
    try:
        bases = tuple(tuple(int(v) for v in b) for b in value)
    except TypeError:
        raise LayoutError(
            f"{what}: field '{field}' must be a list of bases, got {value!r}"
        ) from None
    for k, b in enumerate(bases):
        if any(v < 0 for v in b):
            raise LayoutError(f"{what}: {field} basis {k} {list(b)}: entries must be >= 0")
    return bases


def _lists(bases: Bases) -> list[list[int]]:
    return [list(b) for b in bases]


def identity_standard_nd(in_dim: str, sizes: Sequence[int], order: Sequence[int]) -> LinearLayout:
    """Triton ``identityStandardND``: ``in_dim`` walks the dims fastest-first (``order[0]``)."""
    ll = LinearLayout.empty()
    for d in order:
        ll = ll * LinearLayout.identity_1d(sizes[d], in_dim, f"dim{d}")
    return ll


def with_in_dims(ll: LinearLayout, names: Sequence[str]) -> LinearLayout:
    """``ll`` with exactly the in dims ``names`` in that order (missing ones have size 1)."""
    extra = [d for d in ll.in_dim_names if d not in names]
    if extra:
        raise LayoutError(f"layout has unexpected in dims {extra}; expected {list(names)}")
    bases = [(d, ll.get_bases(d) if ll.has_in_dim(d) else ()) for d in names]
    return LinearLayout(bases, ll.out_dims)


def fit_to_shape(
    ll: LinearLayout, shape: Sequence[int], in_dims: Sequence[str], *, drop_registers: bool
) -> LinearLayout:
    """Triton ``combineCtaCgaWithShape`` for one CTA: make ``ll``'s out sizes exactly ``shape``.

    Too small: repeat along the first in dim (``register`` / ``offset``), out dims in ``ll``'s
    order. Too large: every basis entry >= the wanted size becomes 0 (3.9.0, checked against the
    binary); with ``drop_registers`` (blocked and linear encodings) a register basis that this
    zeroes entirely is removed instead. Then out dims go back to ``dim0..`` order.
    """
    want = dict(zip(standard_dims(len(shape)), shape, strict=True))
    if sorted(ll.out_dim_names) != sorted(want):
        raise LayoutError(
            f"layout out dims {list(ll.out_dim_names)} do not match shape {list(shape)}"
        )
    first = ll.in_dim_names[0]
    for o in ll.out_dim_names:
        if want[o] > ll.out_dim_size(o):
            ll = ll * LinearLayout.identity_1d(want[o] // ll.out_dim_size(o), first, o)
    limit = [min(want[o], s) for o, s in ll.out_dims]
    bases = []
    for d, bs in ll.bases:
        kept = []
        for b in bs:
            clamped = tuple(v if v < lim else 0 for v, lim in zip(b, limit, strict=True))
            if drop_registers and d == "register" and any(b) and not any(clamped):
                continue
            kept.append(clamped)
        bases.append((d, kept))
    ll = LinearLayout(bases, list(zip(ll.out_dim_names, limit, strict=True)))
    return with_in_dims(ll, in_dims).transpose_outs(list(want))


def _distributed(ll: LinearLayout, shape: Sequence[int], drop_registers: bool) -> LinearLayout:
    return fit_to_shape(ll, shape, DISTRIBUTED_IN_DIMS, drop_registers=drop_registers)


# ------------------------------------------------------------------ encodings
@dataclass(frozen=True)
class BlockedLayout:
    """``#ttg.blocked``: per dim, ``size_per_thread`` elements per lane, ``threads_per_warp``
    lanes and ``warps_per_cta`` warps; ``order`` lists dims fastest first.

    >>> BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear_layout((64, 64)).get_bases("lane")
    ((0, 8), (0, 16), (0, 32), (1, 0), (2, 0))
    """

    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]

    def __post_init__(self) -> None:
        what = "blocked"
        fields = ("size_per_thread", "threads_per_warp", "warps_per_cta")
        for f in fields:
            object.__setattr__(self, f, tuple(int(v) for v in getattr(self, f)))
        rank = len(self.order)
        object.__setattr__(self, "order", check_order(self.order, rank, what))
        for f in fields:
            if len(getattr(self, f)) != rank:
                raise LayoutError(
                    f"{what}: field '{f}' {list(getattr(self, f))} must have rank {rank}"
                )
            for v in getattr(self, f):
                require_pow2(what, f, v)
        if prod(self.threads_per_warp) not in (WARP_SIZE, 2 * WARP_SIZE):  # wave32 or wave64
            raise LayoutError(
                f"{what}: field 'threads_per_warp' {list(self.threads_per_warp)} must multiply to "
                f"a warp size, {WARP_SIZE} or {2 * WARP_SIZE}"
            )

    @property
    def rank(self) -> int:
        return len(self.order)

    @property
    def num_warps(self) -> int:
        return prod(self.warps_per_cta)

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        shape = check_shape(shape, "blocked", self.rank)
        ll = (
            identity_standard_nd("register", self.size_per_thread, self.order)
            * identity_standard_nd("lane", self.threads_per_warp, self.order)
            * identity_standard_nd("warp", self.warps_per_cta, self.order)
        )
        return _distributed(ll, shape, drop_registers=True)


@dataclass(frozen=True)
class DistributedLinearLayout:
    """``#ttg.linear``: the bases given directly (one list per in dim, one int per tensor dim).

    Fitted to a shape like Triton's ``LinearEncodingAttr``: clamped if larger, and if smaller
    repeated by registers along the dims in the order the registers first move.

    >>> dst = DistributedLinearLayout([[0, 1], [0, 2], [0, 4]], [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]])
    >>> dst.to_linear_layout((32, 8)).apply({"register": 3, "lane": 5})
    {'dim0': 5, 'dim1': 3}
    """

    register: Bases
    lane: Bases
    warp: Bases = ()
    block: Bases = ()

    def __post_init__(self) -> None:
        ranks = set()
        for d in DISTRIBUTED_IN_DIMS:
            bases = as_bases(getattr(self, d), "linear", d)
            object.__setattr__(self, d, bases)
            ranks |= {len(b) for b in bases}
        if len(ranks) > 1:
            raise LayoutError(
                f"linear: bases have different lengths {sorted(ranks)}; use one per dim"
            )
        if not ranks or 0 in ranks:
            raise LayoutError("linear: at least one basis with one entry per tensor dim is needed")
        if self.block:
            raise LayoutError("linear: field 'block' must be empty (one CTA is modelled)")

    @property
    def rank(self) -> int:
        return len(next(b for d in DISTRIBUTED_IN_DIMS for b in getattr(self, d)))

    @property
    def num_warps(self) -> int:
        return 1 << len(self.warp)

    def _rep_order(self) -> list[int]:
        """Triton ``orderPerDim(register)``: dims as registers first move them, then the rest."""
        order: list[int] = []
        for b in self.register:
            first = next((i for i, v in enumerate(b) if v), None)
            if first is not None and first not in order:
                order.append(first)
        return order + [d for d in reversed(range(self.rank)) if d not in order]

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        shape = check_shape(shape, "linear", self.rank)
        names = standard_dims(self.rank)
        sizes = [1] * self.rank
        for d in DISTRIBUTED_IN_DIMS:
            for b in getattr(self, d):
                sizes = [max(s, 1 << v.bit_length()) for s, v in zip(sizes, b, strict=True)]
        ll = LinearLayout(
            [(d, getattr(self, d)) for d in DISTRIBUTED_IN_DIMS],
            list(zip(names, sizes, strict=True)),
        )
        ll = ll.transpose_outs([names[d] for d in self._rep_order()])
        return _distributed(ll, shape, drop_registers=True)


@dataclass(frozen=True)
class AMDWMMALayout:
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
                f"{what}: ctaLayout bases {_lists(self.warp_bases + self.reg_bases)} must all have "
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
                f"amd_wmma: ctaLayout {{register = {_lists(self.reg_bases)}, warp = "
                f"{_lists(self.warp_bases)}}} must reach every tile of the grid it spans (it is "
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
        return _distributed(ll, shape, drop_registers=False)


@dataclass(frozen=True)
class DotOperandLayout:
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
        # `wgpsim.layout.mfma`) or the WMMA one below
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
        return _distributed(ll, shape, drop_registers=False)


def _project_away(ll: LinearLayout, out_dim: str) -> LinearLayout:
    """Triton ``projectAwayOutDim``: ``ll`` without out dim ``out_dim`` (other sizes kept)."""
    keep = [o for o in ll.out_dim_names if o != out_dim]
    return ll.sublayout(ll.in_dim_names, keep)


@dataclass(frozen=True)
class SliceLayout:
    """``#ttg.slice``: ``parent`` with tensor dim ``dim`` removed (a reduction's result, or a
    1-D vector read from LDS). Triton: the parent's layout for the shape with a size-1 dim
    inserted at ``dim``, that out dim dropped, and the register bases it zeroes removed.

    >>> rows = SliceLayout(1, BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]))
    >>> L = rows.to_linear_layout((64,))
    >>> L.get_bases("register"), L.get_bases("lane")
    (((16,), (32,)), ((0,), (0,), (0,), (1,), (2,)))
    """

    dim: int
    parent: Any

    def __post_init__(self) -> None:
        if not is_distributed(self.parent):
            raise LayoutError(
                f"slice: field 'parent' must be a distributed layout, got {type(self.parent).__name__}"
            )
        rank = self.parent.rank
        if not isinstance(self.dim, int) or not 0 <= self.dim < (rank or 3):
            raise LayoutError(
                f"slice: field 'dim' {self.dim} must be a dim of the parent (0..{(rank or 3) - 1})"
            )

    @property
    def rank(self) -> int | None:
        rank = self.parent.rank
        return None if rank is None else rank - 1

    @property
    def num_warps(self) -> int:
        return self.parent.num_warps

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        shape = tuple(int(s) for s in shape)
        parent_shape = (*shape[: self.dim], 1, *shape[self.dim :])
        ll = self.parent.to_linear_layout(parent_shape)
        names = standard_dims(len(parent_shape))
        kept = [n for i, n in enumerate(names) if i != self.dim]
        ll = ll.sublayout(ll.in_dim_names, kept)
        for new, old in zip(standard_dims(len(shape)), kept, strict=True):
            ll = ll.rename_out_dim(old, new) if new != old else ll
        return ll.remove_zero_bases("register")


#: Every distributed encoding class (a slice's parent is one of them).
DISTRIBUTED_TYPES = (
    BlockedLayout, DistributedLinearLayout, AMDWMMALayout, DotOperandLayout, SliceLayout
)  # fmt: skip
DistributedLayout = (
    BlockedLayout | DistributedLinearLayout | AMDWMMALayout | DotOperandLayout | SliceLayout
)


def is_distributed(layout: Any) -> bool:
    """A distributed encoding: one of `DISTRIBUTED_TYPES`, or an MMA layout defined above this
    module that builds its own dot operands (``#ttg.amd_mfma``, `wgpsim.layout.mfma`)."""
    return isinstance(layout, DISTRIBUTED_TYPES) or hasattr(layout, "dot_operand")
