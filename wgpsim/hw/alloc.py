"""Triton 3.9.0's partition-aware LDS allocator: where each buffer of a kernel lives.

A buffer is a rectangle in (time x bytes): its live range of op ids and its size. A partitioned
tensor (`PartitionedSharedLayout`) becomes `num_partitions` buffers, one per partition, each
holding that partition's pieces of every group, and all mutual *neighbours*: neighbours must
lie in different 64 KiB LDS partitions. `allocate` places them the way Triton 3.9.0 does
(`wgpsim.hw.alloc_stages` holds the two stages).

The seed's microbenchmark: a 64 KiB tensor takes one buffer at offset 0, while the partitioned
version takes two 32 KiB buffers and pushes the second to the 64 KiB boundary, 96 KiB in all.

>>> plain = allocate([Buffer("A", 65536)])
>>> plain.offsets_of("A"), plain.size
([0], 65536)
>>> split = allocate(partitioned_buffers("A", 65536, num_partitions=2, num_groups=1))
>>> split.offsets_of("A"), split.size
([0, 65536], 98304)
>>> print(split)
buffer     offset      end   size  partitions  live
A[p0]           0    32768  32768  0           [0, 1)
A[p1]       65536    98304  32768  1           [0, 1)
total 98304 B of 327680 (partition size 65536, Triton 3.9.0)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wgpsim.errors import AllocationError
from wgpsim.hw.alloc_stages import (
    RULES,
    VARIANTS,
    calculate_starts,
    footprint,
    resolve_interference,
)
from wgpsim.layout.bits import is_pow2
from wgpsim.layout.shared import PartitionedSharedLayout, require_alloc_shape
from wgpsim.packaged import hardware_fact
from wgpsim.trace.validate import DEFAULT_LDS_BYTES

if TYPE_CHECKING:
    import pandas as pd

    from wgpsim.hw.config import HardwareConfig

#: Triton's `getSharedMemoryPartitionSize()` for GFX1250, the hardware's partition size (64 KiB),
#: read from the packaged hardware file (`partitions.size`); `allocate_on` takes the loaded one.
TRITON_GFX1250_PARTITION_SIZE = hardware_fact("partitions", "size")
#: `getAlignment()` of swizzled, padded and partitioned shared encodings.
DEFAULT_ALIGNMENT = 16

#: Columns of `Allocation.to_frame()`.
FRAME_COLUMNS = ("name", "offset", "size", "end", "partitions", "live_start", "live_end")

_PIECE = re.compile(r"^(?P<tensor>.*)\[p(?P<index>\d+)\]$")


@dataclass(frozen=True)
class Buffer:
    """One LDS buffer: `size` bytes, live over op ids [start, end), with partition neighbours.

    >>> Buffer("B", 1024, live=(0, 3))
    Buffer(name='B', size=1024, alignment=16, live=(0, 3), neighbours=())
    """

    name: str
    size: int
    alignment: int = DEFAULT_ALIGNMENT
    live: tuple[int, int] = (0, 1)
    neighbours: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.size <= 0:
            raise AllocationError(f"buffer {self.name}: size {self.size} must be > 0 bytes")
        if not is_pow2(self.alignment):
            raise AllocationError(
                f"buffer {self.name}: alignment {self.alignment} must be a power of two"
            )
        start, end = self.live
        if not 0 <= start < end:
            raise AllocationError(
                f"buffer {self.name}: live range {self.live} must be (start, end) with 0 <= start < end"
            )
        if self.name in self.neighbours:
            raise AllocationError(f"buffer {self.name}: cannot be its own neighbour")


def piece_name(tensor: str, partition: int) -> str:
    """Name of partition buffer `partition` of a partitioned tensor: `A[p1]`."""
    return f"{tensor}[p{partition}]"


def partitioned_buffers(
    name: str,
    total_bytes: int,
    num_partitions: int,
    num_groups: int,
    live: tuple[int, int] = (0, 1),
    alignment: int = DEFAULT_ALIGNMENT,
) -> tuple[Buffer, ...]:
    """The buffers of one partitioned local_alloc (Triton `addPartitionBuffers`).

    `pieceSize = total_bytes // (num_partitions * num_groups)` (integer division, as Triton);
    each partition buffer holds `num_groups` pieces. The 64x32 f16 `[256:+8]` tensor, 2x2:

    >>> [(b.name, b.size, b.neighbours) for b in partitioned_buffers("A", 4208, 2, 2)]
    [('A[p0]', 2104, ('A[p1]',)), ('A[p1]', 2104, ('A[p0]',))]
    """
    for what, value, low in (("num_partitions", num_partitions, 2), ("num_groups", num_groups, 1)):
        if value < low or not is_pow2(value):
            raise AllocationError(f"tensor {name}: {what} {value} must be a power of two >= {low}")
    piece = total_bytes // (num_partitions * num_groups)
    names = [piece_name(name, p) for p in range(num_partitions)]
    return tuple(
        Buffer(n, piece * num_groups, alignment, live, tuple(m for m in names if m != n))
        for n in names
    )


def tensor_buffers(
    name: str,
    shared_layout: Any,
    shape: Sequence[int],
    elem_bytes: int,
    live: tuple[int, int] = (0, 1),
    alignment: int | None = None,
) -> tuple[Buffer, ...]:
    """The buffers of one `ttg.local_alloc` of `shape` in `shared_layout` (a `wgpsim.layout`
    shared encoding, or a Gluon one, converted with `wgpsim.layout.gluon.from_gluon`).

    A `PartitionedSharedLayout` gives `partitioned_buffers` of its `total_bytes` (the inner
    layout's size for the whole shape, padding included; a padded inner layout sized from its
    own shape, as Triton does); any other layout one buffer of its `alloc_bytes`. A shape
    Triton's verifier rejects (a dim the layout covers that is not a power of two) is a
    `LayoutError`.
    Alignment: `alignment`, else the layout's `alignment` attribute, else 16.

    >>> from wgpsim.layout import parse
    >>> padded = parse("#ttg.padded_shared<[256:+8] {order = [1, 0], shape = [16, 32]}>")
    >>> [b.size for b in tensor_buffers("a", padded, (64, 32), 2)]   # getPaddedSize: 2104 elems
    [4208]
    """
    if alignment is None:
        alignment = getattr(shared_layout, "alignment", None) or DEFAULT_ALIGNMENT
    layout = shared_layout
    if not hasattr(layout, "alloc_bytes"):
        from wgpsim.layout.gluon import from_gluon

        layout = from_gluon(layout)
    shape = require_alloc_shape(layout, shape)
    if isinstance(layout, PartitionedSharedLayout):
        return partitioned_buffers(
            name,
            layout.total_bytes(shape, elem_bytes),
            layout.num_partitions,
            layout.num_groups,
            live=live,
            alignment=alignment,
        )
    return (Buffer(name, layout.alloc_bytes(shape, elem_bytes), alignment, live),)


@dataclass(frozen=True)
class Allocation:
    """Where `allocate` put each buffer; `size` = max(offset + size), the kernel's LDS bytes."""

    buffers: tuple[Buffer, ...]
    offsets: dict[str, int] = field(hash=False)
    size: int
    partition_size: int
    capacity: int | None
    variant: str

    def partition_of(self, name: str) -> int:
        """LDS partition of the buffer's first byte (0 when partition_size is 0, as Triton)."""
        return self.offsets[name] // self.partition_size if self.partition_size else 0

    def partitions_of(self, name: str) -> tuple[int, ...]:
        """Every partition the buffer's bytes touch."""
        if not self.partition_size:
            return (0,)
        first, last = footprint(self.offsets[name], self._sizes[name], self.partition_size)
        return tuple(range(first, last + 1))

    def offsets_of(self, tensor: str) -> list[int]:
        """Offsets of a tensor's buffers in partition order (`[offset]` for a plain buffer).

        This is the `bases` argument of `wgpsim.layout.addresses.local_load_addresses`.
        """
        pieces = sorted(
            (int(m["index"]), offset)
            for n, offset in self.offsets.items()
            if (m := _PIECE.match(n)) and m["tensor"] == tensor
        )
        if pieces:
            return [offset for _, offset in pieces]
        if tensor in self.offsets:
            return [self.offsets[tensor]]
        tensors = sorted({(m["tensor"] if (m := _PIECE.match(n)) else n) for n in self.offsets})
        raise AllocationError(f"no tensor {tensor!r} in this allocation; tensors: {tensors}")

    @property
    def _sizes(self) -> dict[str, int]:
        return {b.name: b.size for b in self.buffers}

    def rows(self) -> list[dict[str, Any]]:
        """``to_frame``'s rows as dicts, by offset (then name), without pandas."""
        rows = [
            {
                "name": b.name,
                "offset": self.offsets[b.name],
                "size": b.size,
                "end": self.offsets[b.name] + b.size,
                "partitions": self.partitions_of(b.name),
                "live_start": b.live[0],
                "live_end": b.live[1],
            }
            for b in self.buffers
        ]
        return sorted(rows, key=lambda r: (r["offset"], r["name"]))

    def to_frame(self) -> pd.DataFrame:
        """One row per buffer, by offset: name, offset, size, end, partitions, live_start/end."""
        import pandas as pd

        return pd.DataFrame(self.rows(), columns=list(FRAME_COLUMNS))

    def __str__(self) -> str:
        lines = [f"{'buffer':<10} {'offset':>6} {'end':>8} {'size':>6}  {'partitions':<10}  live"]
        for row in self.to_frame().itertuples():
            parts = "-".join(str(p) for p in (row.partitions[0], row.partitions[-1]))
            parts = str(row.partitions[0]) if len(row.partitions) == 1 else parts
            lines.append(
                f"{row.name:<10} {row.offset:>6} {row.end:>8} {row.size:>6}  {parts:<10}"
                f"  [{row.live_start}, {row.live_end})"
            )
        cap = f" of {self.capacity}" if self.capacity is not None else ""
        lines.append(
            f"total {self.size} B{cap} (partition size {self.partition_size}, Triton {self.variant})"
        )
        return "\n".join(lines)


def allocate(
    buffers: Iterable[Buffer],
    *,
    partition_size: int = TRITON_GFX1250_PARTITION_SIZE,
    capacity: int | None = DEFAULT_LDS_BYTES,
    variant: str = "3.9.0",
) -> Allocation:
    """Place `buffers` as Triton's allocator does (`variant` "3.9.0" or "main-2026-06").

    `partition_size=0` turns partitions off (neighbours become ordinary buffers);
    `capacity=None` skips the LDS size check (Triton itself does not check it).

    >>> allocate([Buffer("R", 1024, live=(0, 3)),
    ...           *partitioned_buffers("P", 4208, 2, 2, live=(1, 4))]).offsets
    {'R': 2112, 'P[p0]': 0, 'P[p1]': 65536}
    """
    buffers = tuple(buffers)
    if variant not in RULES:
        raise AllocationError(f"variant {variant!r} is unknown; valid: {list(VARIANTS)}")
    if partition_size < 0:
        raise AllocationError(f"partition_size {partition_size} must be >= 0 (0: no partitions)")
    index = {b.name: i for i, b in enumerate(buffers)}
    if len(index) != len(buffers):
        dup = sorted({b.name for b in buffers if sum(c.name == b.name for c in buffers) > 1})
        raise AllocationError(f"buffer names must be unique; repeated: {dup}")
    for b in buffers:
        for n in b.neighbours:
            if n not in index:
                raise AllocationError(f"buffer {b.name}: neighbour {n!r} is not among the buffers")

    # Triton sorts by size, descending and stable; the stages work in that order.
    order = sorted(range(len(buffers)), key=lambda i: -buffers[i].size)
    rank = {i: r for r, i in enumerate(order)}
    sizes = [buffers[i].size for i in order]
    aligns = [buffers[i].alignment for i in order]
    live = [buffers[i].live for i in order]
    nbrs = [frozenset(rank[index[n]] for n in buffers[i].neighbours) for i in order]
    rule = RULES[variant]

    starts = calculate_starts(sizes, aligns, live, nbrs, rule, partition_size)
    final = resolve_interference(starts, sizes, aligns, live, nbrs, rule, partition_size)
    offsets = {buffers[i].name: final[rank[i]] for i in range(len(buffers))}
    total = max((offsets[b.name] + b.size for b in buffers), default=0)
    if capacity is not None and total > capacity:
        placed = ", ".join(
            f"{b.name} at {offsets[b.name]}..{offsets[b.name] + b.size}"
            for b in sorted(buffers, key=lambda b: offsets[b.name])
        )
        raise AllocationError(
            f"LDS allocation needs {total} bytes ({placed}), more than the {capacity} bytes of LDS"
        )
    return Allocation(buffers, offsets, total, partition_size, capacity, variant)


def allocate_on(
    hw: HardwareConfig, buffers: Iterable[Buffer], variant: str = "3.9.0"
) -> Allocation:
    """`allocate` with the partition size and LDS capacity of a hardware config.

    >>> from wgpsim.hw.config import load_hardware
    >>> allocate_on(load_hardware(), partitioned_buffers("A", 65536, 2, 1)).size
    98304
    """
    return allocate(
        buffers,
        partition_size=hw.partitions.size,
        capacity=hw.partitions.lds_bytes,
        variant=variant,
    )
