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

from wgpsim.errors import LayoutError
from wgpsim.layout.bits import is_pow2
from wgpsim.layout.linear_layout import LinearLayout

#: Lanes per warp on gfx1250 (wave32; Triton ``TargetFeatures::getWarpSize``). The WMMA tiles
#: below are wave32 tiles, so this is a property of the encodings, not a tunable.
WARP_SIZE = 32
DISTRIBUTED_IN_DIMS = ("register", "lane", "warp", "block")

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


def as_lists(bases: Sequence[Sequence[int]]) -> list[list[int]]:
    """Bases as lists, as Triton's text and Gluon print them: ``((0, 1), (1, 0))`` ->
    ``[[0, 1], [1, 0]]``."""
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


def fit_distributed(ll: LinearLayout, shape: Sequence[int], drop_registers: bool) -> LinearLayout:
    """:func:`fit_to_shape` with the distributed in dims ``register, lane, warp, block``."""
    return fit_to_shape(ll, shape, DISTRIBUTED_IN_DIMS, drop_registers=drop_registers)


# ------------------------------------------------------------------ encodings
class DistributedLayout:
    """What every distributed encoding is (blocked, linear, slice, and `wgpsim.layout.mma.wmma`'s
    WMMA result and dot operand): a frozen value with ``rank``, ``num_warps`` and
    ``to_linear_layout(shape)`` in dims ``register, lane, warp, block``.

    >>> isinstance(BlockedLayout([1], [32], [4], [0]), DistributedLayout)
    True
    """

    __slots__ = ()


@dataclass(frozen=True)
class BlockedLayout(DistributedLayout):
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
        return fit_distributed(ll, shape, drop_registers=True)


@dataclass(frozen=True)
class DistributedLinearLayout(DistributedLayout):
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
        return fit_distributed(ll, shape, drop_registers=True)


@dataclass(frozen=True)
class SliceLayout(DistributedLayout):
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


#: The distributed encoding classes, for ``isinstance`` (a slice's parent is one of them).
DISTRIBUTED_TYPES = (DistributedLayout,)


def is_distributed(layout: Any) -> bool:
    """A distributed encoding: an instance of `DistributedLayout` (the MMA layouts of
    `wgpsim.layout.mma` derive from it too)."""
    return isinstance(layout, DISTRIBUTED_TYPES)
