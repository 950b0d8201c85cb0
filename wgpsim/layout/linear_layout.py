"""`LinearLayout`: a map that is linear over GF(2), with Triton 3.9.0's exact semantics.

Each input (register, lane, warp, ...) is written in binary; the layout names the image of each
power of two, one *basis* per input bit, and linearity fixes the rest: the image of any input is
the XOR of the images of its bits, taken per output dim. The seed's example, ``warp = [[2, 1],
[1, 0]]``: warp 1 -> [2, 1], warp 2 -> [1, 0], so warp 3 = 1 ^ 2 -> [2 ^ 1, 1 ^ 0] = [3, 1].

>>> L = LinearLayout(warp=[[2, 1], [1, 0]], out_dims={"dim0": 4, "dim1": 2})
>>> L.apply({"warp": 3})
{'dim0': 3, 'dim1': 1}
>>> print(L.table())
warp=1 -> (2, 1)
warp=2 -> (1, 0)
where out dims are: [dim0 (size 4), dim1 (size 2)]

Dims are ordered minor-to-major, as in Triton; the order matters for `*`, reshapes, and for
which of several equivalent inputs `invert_and_compose` picks. The value is frozen: ``bases`` is
a tuple of ``(in_dim, bases)`` pairs, ``out_dims`` a tuple of ``(name, size)`` pairs, and ``==``
is Triton's (in-dim order, bases, out-dim order and sizes). The operations that build new
layouts from old ones (product, compose, inversion, division, reshapes) are the free functions
of `wgpsim.layout.ll_algebra`; each is also a one-line method here (``a * b``, ``a.compose(b)``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from wgpsim.errors import LayoutError
from wgpsim.layout import gf2, ll_text
from wgpsim.layout import ll_algebra as alg
from wgpsim.layout.bits import is_pow2, log2

#: apply looks values up in a table of an in dim's images when the dim has at most this many
#: values (or at most 4 per value looked up); larger dims go bit by bit.
_TABLE_MIN = 1 << 12

Basis = tuple[int, ...]
BasesT = tuple[tuple[str, tuple[Basis, ...]], ...]
Value = int | np.ndarray


def _pairs(items: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return list(items.items()) if isinstance(items, Mapping) else [tuple(p) for p in items]


@dataclass(frozen=True, init=False, repr=False)
class LinearLayout:
    """A GF(2)-linear map from named input dims to named output dims (see the module doc)."""

    bases: BasesT
    out_dims: tuple[tuple[str, int], ...]

    def __init__(
        self,
        bases: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
        out_dims: Mapping[str, int] | Iterable[tuple[str, int]] = (),
        *,
        require_surjective: bool = False,
        **in_dims: Sequence[Sequence[int]],
    ) -> None:
        """Build from ``bases``/``out_dims``, or in the repr's keyword form (sizes explicit).
        With ``require_surjective=True`` a layout that misses some output is an error.

        >>> LinearLayout(lane=[[1], [2]], out_dims={"offset": 4}) == LinearLayout(
        ...     [("lane", [[1], [2]])], [("offset", 4)])
        True
        >>> LinearLayout(lane=[[1], [2]])
        Traceback (most recent call last):
        ...
        wgpsim.errors.LayoutError: LinearLayout: give out_dims with the in dims, e.g. LinearLayout(lane=[[1], [2]], out_dims={"dim0": 4})
        """
        if in_dims:
            if bases:
                raise LayoutError("LinearLayout: give in dims either as `bases` or as keywords")
            bases = in_dims
            if not out_dims and any(len(bs) for bs in in_dims.values()):
                first, bs = next(iter(in_dims.items()))
                raise LayoutError(
                    f"LinearLayout: give out_dims with the in dims, e.g. LinearLayout("
                    f'{first}={[list(b) for b in bs]}, out_dims={{"dim0": {1 << len(bs)}}})'
                )
        norm_bases = tuple(
            (str(d), tuple([tuple(map(int, b)) for b in bs])) for d, bs in _pairs(bases)
        )
        norm_outs = tuple((str(o), int(s)) for o, s in _pairs(out_dims))
        object.__setattr__(self, "bases", norm_bases)
        object.__setattr__(self, "out_dims", norm_outs)
        self._check()
        if require_surjective and not self.is_surjective():
            raise LayoutError(
                f"layout is not surjective (rank {self.rank} < {self.total_out_bits} out bits): "
                f"{self!r}; pass require_surjective=False if that is intended"
            )

    def _check(self) -> None:
        if self._valid():
            return  # the loop below names what is not
        ins = [d for d, _ in self.bases]
        if len(set(ins)) != len(ins):
            raise LayoutError(f"in dims {ins}: names must be distinct")
        outs = self.out_dim_names
        if len(set(outs)) != len(outs):
            raise LayoutError(f"out dims {list(outs)}: names must be distinct")
        for o, size in self.out_dims:
            if not is_pow2(size):
                raise LayoutError(f"out dim {o} size {size}: must be a power of two >= 1")
        for d, bs in self.bases:
            for k, b in enumerate(bs):
                if len(b) != len(outs):
                    raise LayoutError(
                        f"{d} basis {k} {list(b)}: has {len(b)} entries, expected "
                        f"{len(outs)} (one per out dim {', '.join(outs) or '(none)'})"
                    )
                for v, (o, size) in zip(b, self.out_dims, strict=True):
                    if not 0 <= v < size:
                        raise LayoutError(
                            f"{d} basis {k} {list(b)}: out of range for {o} of size {size}"
                        )

    def _valid(self) -> bool:
        """What ``_check`` checks, in C loops (one per out dim): layouts are built often."""
        sizes = [size for _, size in self.out_dims]
        flat = [b for _, bs in self.bases for b in bs]
        columns = zip(zip(*flat, strict=True), sizes, strict=False)  # none without bases
        return (
            len(dict(self.bases)) == len(self.bases)
            and len(dict(self.out_dims)) == len(sizes)
            and all(map(is_pow2, sizes))
            and not set(map(len, flat)) - {len(sizes)}
            and all(min(c) >= 0 and max(c) < s for c, s in columns)
        )

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_bases(
        cls,
        bases: Mapping[str, Any] | Iterable[tuple[str, Any]],
        out_dim_names: Sequence[str],
        out_dim_sizes: Sequence[int] | None = None,
        require_surjective: bool = True,
    ) -> LinearLayout:
        """Triton's constructor; without sizes, each is the least power of two above every basis.

        >>> LinearLayout.from_bases({"lane": [[1, 0], [0, 1], [0, 2]]}, ["dim0", "dim1"]).out_dims
        (('dim0', 2), ('dim1', 4))
        """
        pairs = _pairs(bases)
        names = list(out_dim_names)
        if out_dim_sizes is None:
            if not require_surjective:
                raise LayoutError(
                    "from_bases: out_dim_sizes must be given when require_surjective=False"
                )
            sizes = [1] * len(names)
            for d, bs in pairs:
                for k, b in enumerate(bs):
                    if len(b) != len(names):
                        raise LayoutError(
                            f"{d} basis {k} {list(b)}: has {len(b)} entries, expected "
                            f"{len(names)} (one per out dim {', '.join(names) or '(none)'})"
                        )
                    for i, v in enumerate(b):
                        sizes[i] = max(sizes[i], 1 << int(v).bit_length() if v >= 0 else 1)
        else:
            sizes = list(out_dim_sizes)
            if len(sizes) != len(names):
                raise LayoutError(
                    f"from_bases: {len(sizes)} out dim sizes for {len(names)} out dims {names}"
                )
        return cls(
            pairs, list(zip(names, sizes, strict=True)), require_surjective=require_surjective
        )

    @classmethod
    def strided_1d(cls, size: int, stride: int, in_dim: str, out_dim: str) -> LinearLayout:
        """in_dim i -> out_dim i * stride, out size size * stride.

        >>> LinearLayout.strided_1d(4, 8, "i", "o")
        LinearLayout(i=[[8], [16]], out_dims={"o": 32})
        """
        if size == 0:
            return cls.empty()
        if not is_pow2(size) or not is_pow2(stride):
            raise LayoutError(f"strided_1d: size {size} and stride {stride} must be powers of two")
        return cls({in_dim: [[stride << k] for k in range(log2(size))]}, {out_dim: size * stride})

    @classmethod
    def identity_1d(cls, size: int, in_dim: str, out_dim: str) -> LinearLayout:
        """in_dim i -> out_dim i.

        >>> LinearLayout.identity_1d(4, "lane", "offset")
        LinearLayout(lane=[[1], [2]], out_dims={"offset": 4})
        """
        if size and not is_pow2(size):
            raise LayoutError(f"identity_1d: size {size} must be a power of two")
        return cls.strided_1d(size, 1, in_dim, out_dim)

    @classmethod
    def zeros_1d(cls, size: int, in_dim: str, out_dim: str, out_dim_size: int = 1) -> LinearLayout:
        """Every in_dim value -> 0 (a broadcast).

        >>> LinearLayout.zeros_1d(4, "warp", "dim0")
        LinearLayout(warp=[[0], [0]], out_dims={"dim0": 1})
        """
        if size == 0:
            return cls.empty()
        if not is_pow2(size):
            raise LayoutError(f"zeros_1d: size {size} must be a power of two")
        return cls({in_dim: [[0]] * log2(size)}, {out_dim: out_dim_size})

    @classmethod
    def empty(cls) -> LinearLayout:
        """No dims at all: the identity of ``*``.

        >>> LinearLayout.empty() * LinearLayout.identity_1d(2, "i", "o") == LinearLayout.identity_1d(2, "i", "o")
        True
        """
        return cls()

    @classmethod
    def from_repr(cls, text: str) -> LinearLayout:
        """Parse the text that ``repr`` prints (literal values only; nothing is executed).

        >>> L = LinearLayout.identity_1d(8, "lane", "offset")
        >>> LinearLayout.from_repr(repr(L)) == L
        True
        """
        return ll_text.from_repr(text, cls)

    # ---------------------------------------------------------------- queries
    @cached_property
    def _index(self) -> dict[str, tuple[Basis, ...]]:
        return dict(self.bases)

    @cached_property
    def _tables(self) -> dict[str, list[np.ndarray]]:
        return {}  # apply's per-in-dim images (``_images``), filled when first used

    @cached_property
    def in_dim_names(self) -> tuple[str, ...]:
        return tuple(d for d, _ in self.bases)

    @cached_property
    def out_dim_names(self) -> tuple[str, ...]:
        return tuple(o for o, _ in self.out_dims)

    def has_in_dim(self, d: str) -> bool:
        return d in self._index

    def has_out_dim(self, d: str) -> bool:
        return d in self.out_dim_names

    def get_bases(self, d: str) -> tuple[Basis, ...]:
        """The bases of in dim ``d`` (one per input bit)."""
        if d not in self._index:
            raise LayoutError(f"no in dim {d!r}; in dims are {list(self.in_dim_names)}")
        return self._index[d]

    def num_bases(self, d: str) -> int:
        """log2 of in_dim_size(d)."""
        return len(self.get_bases(d))

    def in_dim_size(self, d: str) -> int:
        return 1 << self.num_bases(d)

    def out_dim_size(self, d: str) -> int:
        for o, size in self.out_dims:
            if o == d:
                return size
        raise LayoutError(f"no out dim {d!r}; out dims are {list(self.out_dim_names)}")

    def out_dim_bits(self, d: str) -> int:
        return log2(self.out_dim_size(d))

    @property
    def total_in_bits(self) -> int:
        return sum(len(bs) for _, bs in self.bases)

    @property
    def total_out_bits(self) -> int:
        return sum(log2(s) for _, s in self.out_dims)

    @property
    def total_in_size(self) -> int:
        return 1 << self.total_in_bits

    @property
    def total_out_size(self) -> int:
        return 1 << self.total_out_bits

    def matrix_rows(self) -> list[int]:
        """The GF(2) matrix as int rows (out bits, out dims in order); bit c = input bit c."""
        rows = []
        for j, (_, size) in enumerate(self.out_dims):
            for r in range(log2(size)):
                row, c = 0, 0
                for _, bs in self.bases:
                    for b in bs:
                        row |= ((b[j] >> r) & 1) << c
                        c += 1
                rows.append(row)
        return rows

    def get_matrix(self) -> np.ndarray:
        """Triton's getMatrix: uint8, rows = out bits, columns = in bits (low bits first).

        >>> LinearLayout(warp=[[2, 1], [1, 0]], out_dims={"dim0": 4, "dim1": 2}).get_matrix().tolist()
        [[0, 1], [1, 0], [1, 0]]
        """
        return gf2.to_numpy(self.matrix_rows(), self.total_in_bits)

    @cached_property
    def rank(self) -> int:
        """GF(2) rank of the basis matrix."""
        return gf2.rank(self.matrix_rows(), self.total_in_bits)

    def is_surjective(self) -> bool:
        """Every output is reached: rank == total out bits."""
        return self.rank == self.total_out_bits

    def is_injective(self) -> bool:
        """No two inputs collide: rank == total in bits."""
        return self.rank == self.total_in_bits

    def is_invertible(self) -> bool:
        """Surjective and square (total in size == total out size)."""
        return self.is_surjective() and self.total_in_bits == self.total_out_bits

    def free_variable_masks(self) -> dict[str, int]:
        """Per in dim, the bits that are free (not a pivot of the RREF): they add nothing new.

        >>> LinearLayout({"r": [[1], [1], [2]]}, {"o": 4}).free_variable_masks()
        {'r': 2}
        """
        pivots = set(gf2.rref(self.matrix_rows(), self.total_in_bits)[1])
        masks, c = {}, 0
        for d, bs in self.bases:
            masks[d] = sum(1 << i for i in range(len(bs)) if c + i not in pivots)
            c += len(bs)
        return masks

    # ---------------------------------------------------------------- apply
    def apply(self, inputs: Mapping[str, Value]) -> dict[str, Value]:
        """L(x) = XOR of the bases of the set bits of x, per out dim; missing in dims are 0.

        Each value must lie in [0, in_dim_size) (Triton would silently drop the high bits).

        Arrays broadcast together and give int64 arrays (vectorised over elements).

        >>> L = LinearLayout(warp=[[2, 1], [1, 0]], out_dims={"dim0": 4, "dim1": 2})
        >>> L.apply({"warp": np.arange(4)})["dim0"].tolist()
        [0, 2, 1, 3]
        """
        for d in inputs:
            if d not in self._index:
                raise LayoutError(f"apply: no in dim {d!r}; in dims are {list(self.in_dim_names)}")
        if not any(isinstance(v, np.ndarray) for v in inputs.values()):
            out = [0] * len(self.out_dims)
            for d, x in inputs.items():
                x = int(x)
                self._check_range(d, x, x)
                for k, b in enumerate(self._index[d]):
                    if (x >> k) & 1:
                        out = [o ^ v for o, v in zip(out, b, strict=True)]
            return dict(zip(self.out_dim_names, out, strict=True))
        names = list(inputs)
        arrays = np.broadcast_arrays(*[np.asarray(inputs[d], dtype=np.int64) for d in names])
        res = [np.zeros(arrays[0].shape, dtype=np.int64) for _ in self.out_dims]
        for d, x in zip(names, arrays, strict=True):
            source = np.asarray(inputs[d], dtype=np.int64)  # before broadcasting: fewer values
            if x.size:
                self._check_range(d, int(source.min()), int(source.max()))
            if self.in_dim_size(d) <= max(_TABLE_MIN, 4 * source.size):
                for j, table in enumerate(self._images(d)):
                    res[j] ^= table[source]  # broadcasts like the inputs
                continue
            for k, b in enumerate(self._index[d]):
                bit = (x >> k) & 1
                for j, v in enumerate(b):
                    if v:
                        res[j] ^= bit * v
        return dict(zip(self.out_dim_names, res, strict=True))

    def _images(self, d: str) -> list[np.ndarray]:
        """Per out dim, L(d = x) for every x in [0, size of d): the XOR of the bases of x's bits,
        built by doubling (the first 2^k values, then each XOR-ed with basis k)."""
        cached = self._tables.get(d)
        if cached is None:
            cached = []
            for j in range(len(self.out_dims)):
                table = np.zeros(1, dtype=np.int64)
                for b in self._index[d]:
                    table = np.concatenate([table, table ^ b[j]])
                cached.append(table)
            self._tables[d] = cached
        return cached

    def _check_range(self, d: str, lo: int, hi: int) -> None:
        size = self.in_dim_size(d)
        if lo < 0 or hi >= size:
            bad = lo if lo < 0 else hi
            raise LayoutError(f"apply: {d} = {bad} is out of range [0, {size})")

    def apply_flat(self, index: Value) -> Value:
        """Flat in index (in dims minor-to-major) -> flat out index (out dims minor-to-major).

        >>> LinearLayout(warp=[[2, 1], [1, 0]], out_dims={"dim0": 4, "dim1": 2}).apply_flat(3)
        7
        """
        flat = self.flatten_ins().flatten_outs()
        if not flat.bases or not flat.out_dims:
            return index * 0
        return flat.apply({flat.in_dim_names[0]: index})[flat.out_dim_names[0]]

    # ---------------------------------------------------------------- the algebra (ll_algebra)
    def __mul__(self, outer: LinearLayout) -> LinearLayout:
        return alg.product(self, outer)

    def compose(self, outer: LinearLayout) -> LinearLayout:
        return alg.compose(self, outer)

    def invert_and_compose(self, outer: LinearLayout) -> LinearLayout:
        return alg.invert_and_compose(self, outer)

    def pseudoinvert(self) -> LinearLayout:
        return alg.pseudoinvert(self)

    def invert(self) -> LinearLayout:
        return alg.invert(self)

    def divide_left(self, tile: LinearLayout) -> LinearLayout | None:
        return alg.divide_left(self, tile)

    def divide_right(self, tile: LinearLayout) -> LinearLayout | None:
        return alg.divide_right(self, tile)

    def zeros_like(self) -> LinearLayout:
        return alg.zeros_like(self)

    def sublayout(self, in_dims: Iterable[str], out_dims: Iterable[str]) -> LinearLayout:
        return alg.sublayout(self, in_dims, out_dims)

    def is_trivial_over(self, dims: Iterable[str]) -> bool:
        return alg.is_trivial_over(self, dims)

    def quotient(self, dims: Iterable[str]) -> LinearLayout | None:
        return alg.quotient(self, dims)

    def remove_zero_bases(self, dim: str) -> LinearLayout:
        return alg.remove_zero_bases(self, dim)

    def reshape_ins(self, new_ins: alg.Dims) -> LinearLayout:
        return alg.reshape_ins(self, new_ins)

    def reshape_outs(self, new_outs: alg.Dims) -> LinearLayout:
        return alg.reshape_outs(self, new_outs)

    def flatten_ins(self) -> LinearLayout:
        return alg.flatten_ins(self)

    def flatten_outs(self) -> LinearLayout:
        return alg.flatten_outs(self)

    def transpose_ins(self, order: Sequence[str]) -> LinearLayout:
        return alg.transpose_ins(self, order)

    def transpose_outs(self, order: Sequence[str]) -> LinearLayout:
        return alg.transpose_outs(self, order)

    def rename_in_dim(self, old: str, new: str) -> LinearLayout:
        return alg.rename_in_dim(self, old, new)

    def rename_out_dim(self, old: str, new: str) -> LinearLayout:
        return alg.rename_out_dim(self, old, new)

    def concat_ins(self, other: LinearLayout) -> LinearLayout:
        return alg.concat_ins(self, other)

    def concat_outs(self, other: LinearLayout) -> LinearLayout:
        return alg.concat_outs(self, other)

    # ---------------------------------------------------------------- printing
    def __repr__(self) -> str:
        """Triton's basis notation, which :meth:`from_repr` reads back (`ll_text.to_repr`)."""
        return ll_text.to_repr(self)

    def table(self) -> str:
        """One line per basis, Triton's toString style.

        >>> print(LinearLayout(warp=[[2, 1], [1, 0]], out_dims={"dim0": 4, "dim1": 2}).table())
        warp=1 -> (2, 1)
        warp=2 -> (1, 0)
        where out dims are: [dim0 (size 4), dim1 (size 2)]
        """
        return ll_text.to_table(self)
