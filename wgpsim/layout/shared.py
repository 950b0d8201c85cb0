"""Shared (LDS) encodings: which tensor element each LDS element offset holds.

``to_linear_layout(shape)`` is Triton 3.9.0's layout, in dims ``offset, block`` (plus
``partition`` for partitioned layouts) -> ``dim0..``. ``alloc_bytes(shape, elem_bytes)`` is what
Triton's allocator reserves. The seed's toy: ``order = [0, 1]`` makes dim 0 (M) contiguous.

>>> L = SwizzledSharedLayout(1, 1, 1, [0, 1]).to_linear_layout((32, 8))
>>> L.get_bases("offset")
((1, 0), (2, 0), (4, 0), (8, 0), (16, 0), (0, 1), (0, 2), (0, 4))

Padding is not linear, so a padded layout keeps it outside the layout: ``to_linear_layout`` gives
the linear component (Triton's ``paddedLinearLayout``), and ``pad(offset)`` moves an element
offset past the padding inserted before it:

>>> PaddedSharedLayout([(512, 16)], order=[0, 1], shape=[128, 64]).pad(np.array([0, 511, 512, 1024]))
array([   0,  511,  528, 1056])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from math import prod
from typing import Any

import numpy as np

from wgpsim.errors import LayoutError
from wgpsim.layout.bits import is_pow2, log2
from wgpsim.layout.distributed import (
    Bases,
    as_bases,
    check_order,
    check_shape,
    fit_to_shape,
    identity_standard_nd,
    require_pow2,
    standard_dims,
    with_in_dims,
)
from wgpsim.layout.linear_layout import LinearLayout

SHARED_IN_DIMS = ("offset", "block")


@dataclass(frozen=True)
class SwizzledSharedLayout:
    """``#ttg.swizzled_shared``: rows of ``shape[order[0]]`` contiguous elements; row r's
    columns are XOR-ed with ``vec * ((r // per_phase) % max_phase)``.

    >>> L = SwizzledSharedLayout(8, 2, 4, [1, 0]).to_linear_layout((32, 64))
    >>> L.get_bases("offset")[6:]
    ((1, 0), (2, 8), (4, 16), (8, 0), (16, 0))
    """

    vec: int
    per_phase: int
    max_phase: int
    order: tuple[int, ...]

    def __post_init__(self) -> None:
        for field, name in (("vec", "vec"), ("per_phase", "perPhase"), ("max_phase", "maxPhase")):
            require_pow2("swizzled_shared", name, getattr(self, field))
        object.__setattr__(
            self, "order", check_order(self.order, len(self.order), "swizzled_shared")
        )

    @property
    def rank(self) -> int:
        return len(self.order)

    def row_xor(self, row: int) -> int:
        """What row ``row``'s columns are XOR-ed with (before wrapping to the row length)."""
        return self.vec * ((row // self.per_phase) % self.max_phase)

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        shape = check_shape(shape, "swizzled_shared", self.rank)
        names = standard_dims(self.rank)
        if self.rank == 1:
            ll = LinearLayout.identity_1d(shape[0], "offset", "dim0")
        else:
            col, row = self.order[0], self.order[1]
            num_cols, num_rows = shape[col], shape[row]
            bases = [[0, c] for c in _powers(num_cols)]
            bases += [[r, self.row_xor(r) % num_cols] for r in _powers(num_rows)]
            ll = LinearLayout.from_bases({"offset": bases}, [names[row], names[col]])
            for d in self.order[2:]:
                ll = ll * LinearLayout.identity_1d(shape[d], "offset", names[d])
        return fit_to_shape(ll, shape, SHARED_IN_DIMS, drop_registers=False)

    def alloc_bytes(self, shape: Sequence[int], elem_bytes: int) -> int:
        return prod(shape) * elem_bytes


@dataclass(frozen=True)
class PaddedSharedLayout:
    """``#ttg.padded_shared<[I:+P, ...] {...}>``: after every I elements, P padding elements.

    The linear component is either ``order``/``shape`` (identity, ``order[0]`` fastest) or the
    explicit ``offset_bases`` (then ``shape`` is what they cover).

    >>> lay = PaddedSharedLayout([(256, 8)], order=[1, 0], shape=[16, 32])
    >>> lay.alloc_bytes((64, 32), 2)  # Triton getPaddedSize: 2048 + 64 - 8 elements
    4208
    """

    interval_padding_pairs: tuple[tuple[int, int], ...]
    order: tuple[int, ...] | None = None
    shape: tuple[int, ...] | None = None
    offset_bases: Bases | None = None

    def __post_init__(self) -> None:
        what = "padded_shared"
        try:
            pairs = tuple((int(i), int(p)) for i, p in self.interval_padding_pairs)
        except (TypeError, ValueError):
            raise LayoutError(
                f"{what}: intervals must be [interval, padding] pairs, got {self.interval_padding_pairs!r}"
            ) from None
        if not pairs:
            raise LayoutError(f"{what}: at least one [interval:+padding] pair is needed")
        for i, p in pairs:
            require_pow2(what, "interval", i)
            require_pow2(what, "padding", p)
        if len({i for i, _ in pairs}) != len(pairs):
            raise LayoutError(f"{what}: intervals {[i for i, _ in pairs]} must be distinct")
        object.__setattr__(self, "interval_padding_pairs", pairs)
        if self.offset_bases is not None:
            if self.order is not None:
                raise LayoutError(
                    f"{what}: give either 'order'/'shape' or 'offset' bases, not both"
                )
            object.__setattr__(self, "offset_bases", as_bases(self.offset_bases, what, "offset"))
            self._check_bases()
            if self.shape is None:
                object.__setattr__(self, "shape", _covered_shape(self.offset_bases))
        if self.shape is None:
            raise LayoutError(f"{what}: field 'shape' is required with 'order'")
        object.__setattr__(self, "shape", check_shape(self.shape, what))
        if self.order is not None:
            object.__setattr__(self, "order", check_order(self.order, len(self.shape), what))
        elif self.offset_bases is None:
            raise LayoutError(f"{what}: give 'order' and 'shape', or 'offset' bases")

    def _check_bases(self) -> None:
        """Triton's verifier: each basis moves at most one dim, by 0 or a power of two."""
        for k, b in enumerate(self.offset_bases or ()):
            nonzero = [v for v in b if v]
            if len(nonzero) > 1 or not all(is_pow2(v) for v in nonzero):
                raise LayoutError(
                    f"padded_shared: offset basis {k} {list(b)} must be 0 or one power of two in one dim"
                )

    @classmethod
    def with_identity_for(
        cls, pairs: Sequence[Sequence[int]], shape: Sequence[int], order: Sequence[int]
    ) -> PaddedSharedLayout:
        """Gluon's ``PaddedSharedLayout.with_identity_for``; the pairs are checked as the
        constructor checks them (a malformed list is a LayoutError naming it, not a TypeError).

        >>> PaddedSharedLayout.with_identity_for([[128], 16], [64, 64], [1, 0])
        Traceback (most recent call last):
        ...
        wgpsim.errors.LayoutError: padded_shared: intervals must be [interval, padding] pairs, got [[128], 16]
        """
        return cls(pairs, order=tuple(order), shape=tuple(shape))

    @property
    def rank(self) -> int:
        return len(self.shape)

    def get_order(self) -> tuple[int, ...]:
        """Triton ``getOrder``: ``order`` when given, else the dims in the order the offset
        bases first move them, then the dims they never move, slowest first.

        >>> PaddedSharedLayout([(128, 8)], offset_bases=[[0, 1], [0, 2], [1, 0], [0, 4]]).get_order()
        (1, 0)
        """
        if self.order is not None:
            return self.order
        out: list[int] = []
        for b in self.offset_bases or ():
            dim = next((i for i, v in enumerate(b) if v), None)
            if dim is not None and dim not in out:
                out.append(dim)
        return tuple(out + [d for d in reversed(range(self.rank)) if d not in out])

    def linear_component(self) -> LinearLayout:
        """The (offset, block) -> dims layout before padding, for the layout's own shape."""
        names = standard_dims(self.rank)
        if self.offset_bases is None:
            ll = identity_standard_nd("offset", self.shape, self.order).transpose_outs(names)
        else:
            ll = LinearLayout.from_bases(
                {"offset": self.offset_bases}, names, list(self.shape), require_surjective=False
            )
        if not ll.is_injective():
            raise LayoutError("padded_shared: offset bases must be injective (no broadcasting)")
        return ll

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """The linear component, for the tensor ``shape``, which must be the layout's own shape
        (the padding intervals count elements of that shape: another shape would silently move
        every padded row)."""
        shape = check_shape(shape, "padded_shared", self.rank)
        if tuple(shape) != tuple(self.shape):
            raise LayoutError(
                f"padded_shared: its shape {list(self.shape)} does not match the tensor shape "
                f"{list(shape)}; write shape = {list(shape)}"
            )
        return fit_to_shape(self.linear_component(), shape, SHARED_IN_DIMS, drop_registers=False)

    def pad(self, offset: int | np.ndarray) -> int | np.ndarray:
        """Element offset -> padded element offset: ``off + sum((off >> log2 I) << log2 P)``."""
        return padded(offset, self.interval_padding_pairs)

    def padded_elems(self, num_elems: int) -> int:
        """Triton ``getPaddedSize``: padded elements of ``num_elems`` (none after the last)."""
        total = self.pad(num_elems)
        return total - sum(p for i, p in self.interval_padding_pairs if num_elems % i == 0)

    def alloc_bytes(self, shape: Sequence[int], elem_bytes: int) -> int:
        return self.padded_elems(prod(shape)) * elem_bytes


@dataclass(frozen=True)
class SharedLinearLayout:
    """``#ttg.shared_linear<{offset = [...]}, alignment = A>`` (Gluon's ``SharedLinearLayout``):
    the offset bases given directly, one per offset bit, each a tensor coordinate. The layout
    covers exactly the shape its bases span (Triton asserts the tensor has that shape) and must
    reach every element. Here the 16-column rows of a [4, 16] tile are XOR-swizzled by 4:

    >>> lay = SharedLinearLayout([[0, 1], [0, 2], [0, 4], [0, 8], [1, 4], [2, 8]])
    >>> lay.shape, lay.to_linear_layout((4, 16)).apply({"offset": 16 + 3})
    ((4, 16), {'dim0': 1, 'dim1': 7})
    """

    offset_bases: Bases
    alignment: int = 16

    def __post_init__(self) -> None:
        what = "shared_linear"
        object.__setattr__(self, "offset_bases", as_bases(self.offset_bases, what, "offset"))
        if not self.offset_bases or len({len(b) for b in self.offset_bases}) != 1:
            raise LayoutError(
                f"{what}: field 'offset' needs at least one basis, all of one length (the rank)"
            )
        if len(self.offset_bases[0]) == 0:
            raise LayoutError(f"{what}: offset bases need one entry per tensor dim")
        require_pow2(what, "alignment", self.alignment)
        self._layout()

    @property
    def rank(self) -> int:
        return len(self.offset_bases[0])

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape the bases cover (per dim, the least power of two above every entry)."""
        return _covered_shape(self.offset_bases)

    def _layout(self) -> LinearLayout:
        try:
            return LinearLayout.from_bases(
                {"offset": self.offset_bases, "block": ()}, standard_dims(self.rank)
            )
        except LayoutError:
            raise LayoutError(
                f"shared_linear: offset bases {[list(b) for b in self.offset_bases]} must reach "
                f"every element of the shape {list(self.shape)} they span (Triton requires a "
                "surjective layout)"
            ) from None

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        shape = check_shape(shape, "shared_linear", self.rank)
        if tuple(shape) != self.shape:
            raise LayoutError(
                f"shared_linear: its bases cover shape {list(self.shape)}, not the tensor shape "
                f"{list(shape)} (Triton requires the two to be equal)"
            )
        return self._layout()

    def alloc_bytes(self, shape: Sequence[int], elem_bytes: int) -> int:
        return prod(shape) * elem_bytes


InnerShared = SwizzledSharedLayout | PaddedSharedLayout | SharedLinearLayout


@dataclass(frozen=True)
class PartitionedSharedLayout:
    """``#ttg.partitioned_shared``: the tensor is cut along ``partition_dim`` into
    ``num_partitions * num_groups`` pieces; piece j lives in buffer ``j % num_partitions``
    (one buffer per LDS partition) as its group ``j // num_partitions``. The layout's
    ``partition`` in dim selects the buffer. The seed's microbenchmark on [4, 256]:

    >>> L = PartitionedSharedLayout(2, 2, 0, SwizzledSharedLayout(1, 1, 1, [1, 0])).to_linear_layout((4, 256))
    >>> L.get_bases("offset")[-1], L.get_bases("partition")
    ((2, 0), ((1, 0),))
    """

    num_partitions: int
    num_groups: int
    partition_dim: int
    partition_layout: InnerShared

    def __post_init__(self) -> None:
        what = "partitioned_shared"
        require_pow2(what, "numPartitions", self.num_partitions)
        if self.num_partitions < 2:
            raise LayoutError(
                f"{what}: field 'numPartitions' must be >= 2, got {self.num_partitions}"
            )
        require_pow2(what, "numGroups", self.num_groups)
        if not isinstance(self.partition_layout, InnerShared):
            raise LayoutError(
                f"{what}: field 'partitionLayout' must be a swizzled_shared, padded_shared or "
                f"shared_linear layout, got {type(self.partition_layout).__name__}"
            )
        if not 0 <= self.partition_dim < self.partition_layout.rank:
            raise LayoutError(
                f"{what}: field 'partitionDim' {self.partition_dim} must be < the rank "
                f"{self.partition_layout.rank} of the partition layout"
            )

    @property
    def num_logical_pieces(self) -> int:
        return self.num_partitions * self.num_groups

    def piece_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        shape = check_shape(shape, "partitioned_shared", self.partition_layout.rank)
        extent = shape[self.partition_dim]
        if extent % self.num_logical_pieces:
            raise LayoutError(
                f"partitioned_shared: shape[{self.partition_dim}] = {extent} must be a multiple of "
                f"numPartitions * numGroups = {self.num_logical_pieces}"
            )
        piece = list(shape)
        piece[self.partition_dim] = extent // self.num_logical_pieces
        return tuple(piece)

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        piece = self.piece_shape(shape)
        inner = self.partition_layout
        dim = f"dim{self.partition_dim}"

        def split(base: LinearLayout) -> LinearLayout:  # Triton: base * partitions * groups
            base = base * LinearLayout.identity_1d(self.num_partitions, "partition", dim)
            return base * LinearLayout.identity_1d(self.num_groups, "offset", dim)

        if not isinstance(inner, PaddedSharedLayout) or inner.shape == piece:
            return split(inner.to_linear_layout(piece))
        # A padded inner layout of another shape than the piece: Triton 3.9.0 builds its linear
        # component for its own shape, splits that, and clamps the product to the tensor, so a
        # larger inner shape pushes the partition bits past the tensor: everything lands in
        # buffer 0 (checked lane by lane against its lowering).
        ll = split(with_in_dims(inner.linear_component(), ("offset", "block")))
        return fit_to_shape(ll, shape, ("offset", "block", "partition"), drop_registers=False)

    def pad(self, offset: int | np.ndarray) -> int | np.ndarray:
        """Padding of the inner layout (identity for a swizzled one), within one buffer."""
        inner = self.partition_layout
        return inner.pad(offset) if isinstance(inner, PaddedSharedLayout) else offset

    def alloc_bytes(self, shape: Sequence[int], elem_bytes: int) -> int:
        """Bytes of all ``num_partitions`` buffers together."""
        return self.num_partitions * self.buffer_bytes(shape, elem_bytes)

    def total_bytes(self, shape: Sequence[int], elem_bytes: int) -> int:
        """The size Triton's allocator gives the whole tensor before splitting it: the inner
        layout's size for the tensor, except that a padded inner layout is sized from its
        *own* shape, ``getPaddedSize(prod(inner shape) * num_partitions * num_groups * B)``, B the
        leading (multi-buffer) dims of ``shape`` (3.9.0, checked against its allocation pass;
        equal to the tensor's when the inner shape is the piece shape, as it must be for a load).

        >>> inner = PaddedSharedLayout([(512, 16)], order=[1, 0], shape=[128, 64])
        >>> PartitionedSharedLayout(2, 1, 0, inner).total_bytes((128, 64), 2)  # not 16864
        33760
        """
        inner = self.partition_layout
        if isinstance(inner, PaddedSharedLayout):
            # leading dims of a local_alloc count buffers (num_stages): the real compile of a
            # two-buffer Gluon GEMM pads all of them together (tests/test_search.py)
            buffers = prod(tuple(shape)[: len(shape) - inner.rank])
            elems = inner.padded_elems(prod(inner.shape) * self.num_logical_pieces * buffers)
            return elems * elem_bytes
        return inner.alloc_bytes(tuple(shape), elem_bytes)

    def buffer_bytes(self, shape: Sequence[int], elem_bytes: int) -> int:
        """One partition buffer (Triton): ``(total bytes // pieces) * num_groups``.

        >>> inner = PaddedSharedLayout([(256, 8)], order=[1, 0], shape=[16, 32])
        >>> PartitionedSharedLayout(2, 2, 0, inner).buffer_bytes((64, 32), 2)
        2104
        """
        return (self.total_bytes(shape, elem_bytes) // self.num_logical_pieces) * self.num_groups


def require_alloc_shape(layout: Any, shape: Sequence[int]) -> tuple[int, ...]:
    """``shape`` of a ``ttg.local_alloc`` in ``layout``, checked as Triton's verifier does: the
    dims the layout covers (the trailing ``rank`` ones; leading ones count buffers) must be
    powers of two.

    >>> require_alloc_shape(SwizzledSharedLayout(1, 1, 1, [1, 0]), (625, 64))
    Traceback (most recent call last):
    ...
    wgpsim.errors.LayoutError: shape [625, 64]: Triton 3.9.0 rejects a swizzled_shared memdesc whose trailing 2 dims are not each a power of two (625 is not)
    """
    shape = tuple(int(s) for s in shape)
    rank = getattr(getattr(layout, "partition_layout", layout), "rank", None) or len(shape)
    if any(s < 1 for s in shape) or len(shape) < rank:
        raise LayoutError(f"shape {list(shape)}: needs {rank} positive dims")
    bad = [s for s in shape[len(shape) - rank :] if not is_pow2(s)]
    if bad:
        kind = {
            SwizzledSharedLayout: "swizzled_shared", PaddedSharedLayout: "padded_shared",
            PartitionedSharedLayout: "partitioned_shared", SharedLinearLayout: "shared_linear",
        }.get(type(layout), type(layout).__name__)  # fmt: skip
        raise LayoutError(
            f"shape {list(shape)}: Triton 3.9.0 rejects a {kind} memdesc whose trailing {rank} "
            f"dims are not each a power of two ({bad[0]} is not)"
        )
    return shape


SharedLayout = (
    SwizzledSharedLayout | PaddedSharedLayout | PartitionedSharedLayout | SharedLinearLayout
)
#: Every shared encoding class.
SHARED_TYPES = (
    SwizzledSharedLayout, PaddedSharedLayout, PartitionedSharedLayout, SharedLinearLayout
)  # fmt: skip


def _powers(n: int) -> list[int]:
    """1, 2, 4, ... below n."""
    return [1 << k for k in range(log2(n))]


def _covered_shape(bases: Bases) -> tuple[int, ...]:
    """Per dim, the least power of two above every basis entry."""
    if not bases:
        raise LayoutError("padded_shared: 'offset' needs at least one basis (or give 'shape')")
    rank = len(bases[0])
    return tuple(max(1 << b[d].bit_length() for b in bases) for d in range(rank))


def for_shape(layout: Any, shape: Sequence[int]) -> Any:
    """``layout`` for a tensor of ``shape``: a padded layout written with ``order`` takes the
    shape (its piece shape inside a partitioned layout); every other layout is returned as is.

    Sweeps that grow a tensor (the microbenchmark's burst lengths) name a padded candidate once
    and get the right shape at every size.

    >>> pad = PaddedSharedLayout([(256, 8)], order=[1, 0], shape=[4, 256])
    >>> for_shape(pad, (4, 8192)).shape
    (4, 8192)
    """
    if isinstance(layout, PaddedSharedLayout) and layout.offset_bases is None:
        return replace(layout, shape=tuple(shape))
    if isinstance(layout, PartitionedSharedLayout) and isinstance(
        layout.partition_layout, PaddedSharedLayout
    ):
        inner = for_shape(layout.partition_layout, layout.piece_shape(shape))
        return replace(layout, partition_layout=inner)
    return layout


def padded(offset: int | np.ndarray, pairs: Sequence[tuple[int, int]]) -> int | np.ndarray:
    """``offset`` plus ``(offset // interval) * padding`` for each pair: the padded element
    offset (a new array; ``offset`` is left as it is).

    >>> padded(np.array([0, 255, 256]), ((256, 8),)).tolist(), padded(512, ((256, 8), (128, 4)))
    ([0, 255, 264], 544)
    """
    out = offset
    for interval, padding in pairs:
        step = offset // interval
        step *= padding
        step += out
        out = step
    return out
