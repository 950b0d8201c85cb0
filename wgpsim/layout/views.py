"""Views into a larger buffer: the memdesc a ``local_load`` reads when it is not a whole alloc.

``ttg.memdesc_index``, ``memdesc_subslice``, ``memdesc_trans`` and ``memdesc_reshape`` do not
move data: they give another name to a region of a parent allocation, and Triton 3.9.0's
lowering addresses that region with the *parent's* shape and padding:

- the view's memdesc keeps the allocation shape of its parent (``!ttg.memdesc<16x32xf16,
  #shared, #smem, mutable, 16x128>``), and the shared layout is built for that shape, so a
  16x32 subslice of a 16x128 fp16 buffer has 256-byte rows, not 64-byte ones;
- element x of a subslice at ``offsets`` o lives at offset ``L⁻¹(x) ^ L⁻¹(o)`` of the layout L
  (the two are bitwise disjoint: the verifier makes o a multiple of the view's shape), and the
  padding is applied to that sum; for a partitioned layout the partition part of ``L⁻¹(o)``
  rotates the buffer bases (``bases[i ^ S]``);
- ``memdesc_index`` i of a multi-buffered alloc moves the base by ``pad(i * N)`` elements, N the
  elements of one buffer (per partition buffer for a partitioned layout);
- ``memdesc_trans`` and ``memdesc_reshape`` reinterpret the same bytes: the layout's out dims
  are permuted (trans) or re-split in row-major order (reshape), and so are the offsets.

A ``SharedView`` holds that: the layout (an encoding, or a ``LinearLayout`` after a trans or
reshape), the allocation shape it is built for, the view's shape and offsets, and the base.
``local_load_addresses`` and ``lower`` take one wherever they take a shared layout. A 16x32
subslice at column 64 of a 16x128 fp16 swizzle-free buffer: row 1 starts 256 bytes in.

>>> from wgpsim.layout import local_load_addresses, parse
>>> buf = SharedView.of(parse("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, "
...                           "order = [1, 0]}>"), (16, 128))
>>> view = buf.subslice((0, 64), (16, 32))
>>> dst = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]}>"
>>> local_load_addresses(dst, view, (16, 32), 2)[0, :5, 0].tolist()
[128, 144, 160, 176, 384]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from math import prod
from typing import Any

import numpy as np

from wgpsim.errors import LayoutError
from wgpsim.layout.distributed import standard_dims
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.layout.shared import PaddedSharedLayout, PartitionedSharedLayout, padded


def _padding_of(layout: Any) -> tuple[tuple[int, int], ...]:
    inner = getattr(layout, "partition_layout", layout)
    if isinstance(inner, PaddedSharedLayout):
        return inner.interval_padding_pairs
    return ()


def _shape(value: Sequence[int], what: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise LayoutError(f"shared view: {what} {value!r} must be a list of integers") from None
    return shape


@dataclass(frozen=True)
class SharedView:
    """A region of an LDS allocation that a load reads (see the module doc).

    ``layout``: the shared encoding the allocation's memdesc type carries (or, after
    ``trans``/``reshape``, a ``LinearLayout`` offset[, partition] -> dims); ``alloc_shape``:
    the shape that layout is built for (the memdesc's allocation shape); ``shape``: the view's
    (the loaded tensor's; default ``alloc_shape``); ``offsets``: where the view starts, in
    ``alloc_shape`` coordinates; ``base``: element offset of the buffer in the allocation,
    padding included (``memdesc_index``); ``padding``: the interval/padding pairs when
    ``layout`` is a ``LinearLayout`` (a padded parent's; else taken from the encoding).
    """

    layout: Any
    alloc_shape: tuple[int, ...]
    shape: tuple[int, ...] | None = None
    offsets: tuple[int, ...] | None = None
    base: int = 0
    padding: tuple[tuple[int, int], ...] | None = field(default=None)

    def __post_init__(self) -> None:
        alloc = _shape(self.alloc_shape, "alloc_shape")
        shape = alloc if self.shape is None else _shape(self.shape, "shape")
        offsets = (0,) * len(shape) if self.offsets is None else _shape(self.offsets, "offsets")
        object.__setattr__(self, "alloc_shape", alloc)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "offsets", offsets)
        if self.padding is None:
            object.__setattr__(self, "padding", _padding_of(self.layout))
        if len(alloc) < len(shape) or len(offsets) != len(shape):
            raise LayoutError(
                f"shared view: shape {list(shape)}, offsets {list(offsets)} and alloc_shape "
                f"{list(alloc)} must have one entry per dim (alloc_shape may have leading buffers)"
            )
        for d, (s, o, a) in enumerate(zip(shape, offsets, alloc[-len(shape) :], strict=True)):
            if not (s >= 1 and o >= 0 and o % s == 0 and o + s <= a):
                raise LayoutError(
                    f"shared view: dim {d}: a view of {s} elements at offset {o} must lie inside "
                    f"the allocation's {a} at a multiple of its size"
                )

    def __getattr__(self, name: str) -> Any:
        # The encoding's own attributes (num_partitions, interval_padding_pairs, ...).
        if name in ("layout", "__setstate__") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.layout, name)

    # ------------------------------------------------------------ building views
    @classmethod
    def of(cls, layout: Any, alloc_shape: Sequence[int]) -> SharedView:
        """A whole ``ttg.local_alloc`` of ``alloc_shape`` in ``layout``."""
        return cls(layout, tuple(alloc_shape))

    def index(self, i: int) -> SharedView:
        """``ttg.memdesc_index`` i: buffer i of a multi-buffered allocation (drops dim 0).

        >>> from wgpsim.layout import parse
        >>> bufs = SharedView.of(parse("#ttg.padded_shared<[128:+8] {order = [1, 0], "
        ...                            "shape = [16, 128]}>"), (2, 16, 128))
        >>> bufs.index(1).base   # 2048 elements and 16 paddings of 8
        2176
        """
        if len(self.shape) < 2:
            raise LayoutError("shared view: memdesc_index needs a leading buffer dim")
        if not 0 <= i < self.shape[0]:
            raise LayoutError(f"shared view: index {i} outside the {self.shape[0]} buffers")
        alloc = self.alloc_shape[1:]
        stride = prod(alloc)
        if isinstance(self.layout, PartitionedSharedLayout):
            stride //= self.layout.num_partitions
        step = i * stride
        return SharedView(
            self.layout,
            alloc,
            self.shape[1:],
            self.offsets[1:],
            self.base + int(self._pad(step)),
            self.padding,
        )

    def subslice(self, offsets: Sequence[int], shape: Sequence[int]) -> SharedView:
        """``ttg.memdesc_subslice`` at ``offsets`` (this view's coordinates) of ``shape``."""
        offsets, shape = _shape(offsets, "offsets"), _shape(shape, "shape")
        if len(offsets) != len(self.shape) or len(shape) != len(self.shape):
            raise LayoutError(
                f"shared view: subslice offsets {list(offsets)} and shape {list(shape)} need "
                f"{len(self.shape)} entries"
            )
        for d, (o, s, n) in enumerate(zip(offsets, shape, self.shape, strict=True)):
            if o + s > n:
                raise LayoutError(
                    f"shared view: subslice dim {d}: {s} elements at {o} exceed the view's {n}"
                )
        total = tuple(a + b for a, b in zip(self.offsets, offsets, strict=True))
        return SharedView(self.layout, self.alloc_shape, shape, total, self.base, self.padding)

    def trans(self, order: Sequence[int]) -> SharedView:
        """``ttg.memdesc_trans`` with ``order``: view dim i is this view's dim ``order[i]``."""
        order = tuple(int(o) for o in order)
        rank = len(self.shape)
        if sorted(order) != list(range(rank)):
            raise LayoutError(f"shared view: trans order {list(order)} is not a permutation")
        names = standard_dims(rank)
        ll = self.linear_layout()
        for i, o in enumerate(order):  # rename through temporary names to avoid clashes
            ll = ll.rename_out_dim(names[o], f"t{i}")
        for i in range(rank):
            ll = ll.rename_out_dim(f"t{i}", names[i])
        ll = ll.transpose_outs(names)
        alloc = self.alloc_shape[-rank:]
        return SharedView(
            ll,
            tuple(alloc[o] for o in order),
            tuple(self.shape[o] for o in order),
            tuple(self.offsets[o] for o in order),
            self.base,
            self.padding,
        )

    def reshape(self, shape: Sequence[int]) -> SharedView:
        """``ttg.memdesc_reshape`` of a whole buffer to ``shape`` (row-major, same elements)."""
        shape = _shape(shape, "shape")
        rank = len(self.shape)
        if self.shape != self.alloc_shape[-rank:] or any(self.offsets):
            raise LayoutError("shared view: memdesc_reshape of a subslice is not modelled")
        if prod(shape) != prod(self.shape):
            raise LayoutError(
                f"shared view: reshape {list(self.shape)} -> {list(shape)} changes the size"
            )
        # Triton's reshapeOuts is minor-to-major: reverse the dims around it for row-major.
        ll = self.linear_layout()
        ll = ll.transpose_outs(standard_dims(rank)[::-1])
        new = standard_dims(len(shape))
        ll = ll.reshape_outs([(n, s) for n, s in zip(new[::-1], shape[::-1], strict=True)])
        return SharedView(ll.transpose_outs(new), shape, shape, None, self.base, self.padding)

    # ------------------------------------------------------------ addressing
    def linear_layout(self) -> LinearLayout:
        """The layout over the allocation shape (offset[, block, partition] -> dims)."""
        alloc = self.alloc_shape[-len(self.shape) :]
        if isinstance(self.layout, LinearLayout):
            return self.layout
        if not _hashable(self.layout):
            return self.layout.to_linear_layout(list(alloc))
        return _built(self.layout, alloc)

    def to_linear_layout(self, shape: Sequence[int]) -> LinearLayout:
        """``linear_layout()``, for the view's own ``shape`` (what a load of it reads)."""
        if tuple(int(s) for s in shape) != self.shape:
            raise LayoutError(
                f"shared view: the view has shape {list(self.shape)}, not {list(shape)}"
            )
        return self.linear_layout()

    def affine(self) -> dict[str, int]:
        """``L⁻¹(offsets)``: the offset (and partition) the view's first element adds by XOR
        (kept per view: the loads of a loop's prologue and body read equal views)."""
        return dict(_affine(self)) if _hashable(self.layout) else self._affine()

    def _affine(self) -> dict[str, int]:
        ll = self.linear_layout()
        names = standard_dims(len(self.shape))
        out = ll.pseudoinvert().apply(dict(zip(names, self.offsets, strict=True)))
        return {k: int(v) for k, v in out.items() if k in ("offset", "partition")}

    def _pad(self, offset: Any) -> Any:
        return padded(offset, self.padding or ())

    def pad(self, offset: int | np.ndarray) -> int | np.ndarray:
        """Padded element offset within the allocation (the view's base included)."""
        out = self._pad(offset)
        if out is offset:
            return self.base + out
        out += self.base
        return out

    def alloc_bytes(self, shape: Sequence[int], elem_bytes: int) -> int:
        """The parent allocation's bytes (a view allocates nothing of its own; ``shape`` is
        ignored); size the ``local_alloc`` itself, before any trans or reshape."""
        if isinstance(self.layout, LinearLayout):
            raise LayoutError("shared view: size the local_alloc, not a transposed/reshaped view")
        return self.layout.alloc_bytes(self.alloc_shape, elem_bytes)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:  # a mutable layout: built every time
        return False
    return True


@lru_cache(maxsize=256)
def _built(layout: Any, alloc: tuple[int, ...]) -> LinearLayout:
    """``layout.to_linear_layout(alloc)``, kept per (frozen) encoding and shape."""
    return layout.to_linear_layout(list(alloc))


@lru_cache(maxsize=256)
def _affine(view: SharedView) -> tuple[tuple[str, int], ...]:
    """``view._affine()`` as items, kept per (frozen) view."""
    return tuple(view._affine().items())
