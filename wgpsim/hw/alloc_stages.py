"""The two stages of Triton's shared-memory allocator, with its partition rules.

This is the algorithm behind `wgpsim.hw.alloc.allocate` (Triton's `lib/Analysis/Allocation.cpp`,
after "Algorithms for Compile-Time Memory Optimization"). It works on plain sequences, in the
order Triton sorts its buffers (size descending, stable):

1. `calculate_starts` (stage 1): the triple map. Pop the free interval with the smallest offset;
   pick the first unplaced buffer whose liveness meets that interval and no other open interval;
   place it at the aligned offset and split the interval. With partitions (Triton 3.9.0), a
   buffer is only taken if its footprint misses the footprints of its already placed neighbours;
   if every eligible buffer collides, the interval is reopened at the next partition boundary.
2. `resolve_interference` (stage 2): build the interference graph (live at once and bytes
   overlap, or neighbours sharing a partition), colour it first-fit, bump every buffer of a
   non-zero colour past what it interferes with (past the neighbour's partition for a neighbour
   edge), and repeat until no edge is left.

Two partition rules exist (`VARIANTS`): Triton 3.9.0's (footprints: the partitions from the first
to the last byte) and the 2026-06 main source's (start offsets only, partition-blind stage 1).

>>> sizes, aligns = [2104, 2104], [16, 16]
>>> live, nbrs = [(0, 1), (0, 1)], [frozenset({1}), frozenset({0})]
>>> offsets = calculate_starts(sizes, aligns, live, nbrs, RULES["3.9.0"], 65536)
>>> offsets
[0, 65536]
>>> resolve_interference(offsets, sizes, aligns, live, nbrs, RULES["3.9.0"], 65536)
[0, 65536]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wgpsim.errors import AllocationError

#: Triton's `Interval<size_t>()` default end: an open-ended free interval.
SIZE_MAX = 2**64 - 1


def align_to(offset: int, alignment: int) -> int:
    """The smallest multiple of `alignment` that is >= `offset` (`llvm::alignTo`).

    >>> align_to(2104, 16), align_to(2112, 16)
    (2112, 2112)
    """
    return -(-offset // alignment) * alignment


def intersects(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Half-open intervals [start, end) overlap (`Interval::intersects`)."""
    return a[0] < b[1] and b[0] < a[1]


def footprint(offset: int, size: int, partition_size: int) -> tuple[int, int]:
    """First and last partition touched by bytes [offset, offset + size).

    >>> footprint(40000, 40000, 65536)
    (0, 1)
    """
    return offset // partition_size, (offset + max(size, 1) - 1) // partition_size


@dataclass(frozen=True)
class PartitionRule:
    """How one Triton version treats partition neighbours.

    `conflict(x, y)` says whether two placed neighbours `(offset, size)` share a partition;
    `bump(y)` is the offset past neighbour `y`'s partition; `stage1` says whether stage 1 checks
    neighbours at all.
    """

    name: str
    stage1: bool
    uses_footprint: bool

    def conflict(self, x: tuple[int, int], y: tuple[int, int], partition_size: int) -> bool:
        if self.uses_footprint:
            fx, fy = footprint(*x, partition_size), footprint(*y, partition_size)
            return fx[0] <= fy[1] and fy[0] <= fx[1]
        return x[0] // partition_size == y[0] // partition_size

    def bump(self, y: tuple[int, int], partition_size: int) -> int:
        last = footprint(*y, partition_size)[1] if self.uses_footprint else y[0] // partition_size
        return (last + 1) * partition_size


#: The rules by `allocate(variant=...)` name (notes 5.3 and 5.4).
RULES = {
    "3.9.0": PartitionRule("3.9.0", stage1=True, uses_footprint=True),
    "main-2026-06": PartitionRule("main-2026-06", stage1=False, uses_footprint=False),
}
VARIANTS = tuple(RULES)


def calculate_starts(
    sizes: Sequence[int],
    aligns: Sequence[int],
    live: Sequence[tuple[int, int]],
    neighbours: Sequence[frozenset[int]],
    rule: PartitionRule,
    partition_size: int,
) -> list[int]:
    """Stage 1: initial offsets of buffers given in Triton's order (size descending, stable)."""
    offsets: list[int | None] = [None] * len(sizes)
    unplaced = list(range(len(sizes)))
    # The triple map: (offset, insertion number, free live interval); equal offsets pop in
    # insertion order, like std::multimap.
    triples: list[tuple[int, int, tuple[int, int]]] = [(0, 0, (0, SIZE_MAX))]
    inserted = 1

    def insert(offset: int, rng: tuple[int, int]) -> None:
        nonlocal inserted
        triples.append((offset, inserted, rng))
        inserted += 1

    partitioned = partition_size > 0 and rule.stage1
    while unplaced:
        if not triples:
            raise AllocationError(
                f"stage 1 ran out of free intervals with {len(unplaced)} buffers unplaced"
            )
        triples.sort()
        offset, _, rng = triples.pop(0)
        eligible = [
            i
            for i in unplaced
            if intersects(live[i], rng) and not any(intersects(t[2], live[i]) for t in triples)
        ]
        if not eligible:
            continue
        if partitioned:
            fits = [
                i
                for i in eligible
                if not _collides(
                    i, offset, offsets, sizes, aligns, neighbours, rule, partition_size
                )
            ]
            if not fits:
                insert((offset // partition_size + 1) * partition_size, rng)
                continue
            chosen = fits[0]
        else:
            chosen = eligible[0]
        start = align_to(offset, aligns[chosen])
        offsets[chosen] = start
        x_live = live[chosen]
        insert(start + sizes[chosen], (max(rng[0], x_live[0]), min(rng[1], x_live[1])))
        if rng[0] < x_live[0]:
            insert(offset, (rng[0], x_live[1]))
        if x_live[1] < rng[1]:
            insert(offset, (x_live[0], rng[1]))
        unplaced.remove(chosen)
    return [o for o in offsets if o is not None]


def _collides(
    i: int,
    offset: int,
    offsets: Sequence[int | None],
    sizes: Sequence[int],
    aligns: Sequence[int],
    neighbours: Sequence[frozenset[int]],
    rule: PartitionRule,
    partition_size: int,
) -> bool:
    """Would buffer i at `offset` (aligned) share a partition with a placed neighbour?"""
    here = (align_to(offset, aligns[i]), sizes[i])
    return any(
        offsets[j] is not None and rule.conflict(here, (offsets[j], sizes[j]), partition_size)
        for j in neighbours[i]
    )


def interference_graph(
    offsets: Sequence[int],
    sizes: Sequence[int],
    live: Sequence[tuple[int, int]],
    neighbours: Sequence[frozenset[int]],
    rule: PartitionRule,
    partition_size: int,
) -> list[set[int]]:
    """Edges x-y: live at once with overlapping bytes, or neighbours sharing a partition."""
    n = len(offsets)
    graph: list[set[int]] = [set() for _ in range(n)]
    for x in range(n):
        bytes_x = (offsets[x], offsets[x] + sizes[x])
        for y in range(n):
            bytes_y = (offsets[y], offsets[y] + sizes[y])
            if x != y and intersects(live[x], live[y]) and intersects(bytes_x, bytes_y):
                graph[x].add(y)
        if partition_size > 0:
            for y in neighbours[x]:
                if rule.conflict((offsets[x], sizes[x]), (offsets[y], sizes[y]), partition_size):
                    graph[x].add(y)
    return graph


def resolve_interference(
    offsets: Sequence[int],
    sizes: Sequence[int],
    aligns: Sequence[int],
    live: Sequence[tuple[int, int]],
    neighbours: Sequence[frozenset[int]],
    rule: PartitionRule,
    partition_size: int,
    max_rounds: int | None = None,
) -> list[int]:
    """Stage 2: colour and bump until the interference graph has no edge."""
    offsets = list(offsets)
    n = len(offsets)
    rounds = max_rounds if max_rounds is not None else 4 * n + 16
    graph = interference_graph(offsets, sizes, live, neighbours, rule, partition_size)
    for _ in range(rounds):
        colours = _first_fit_colours(graph)
        for x in range(n):
            new_offset = 0
            for y in graph[x]:
                if partition_size > 0 and y in neighbours[x]:
                    past = rule.bump((offsets[y], sizes[y]), partition_size)
                else:
                    past = offsets[y] + sizes[y]
                new_offset = max(new_offset, past)
            if colours[x] != 0:
                offsets[x] = align_to(new_offset, aligns[x])
        graph = interference_graph(offsets, sizes, live, neighbours, rule, partition_size)
        if not any(graph):
            return offsets
    raise AllocationError(
        f"stage 2 of the {rule.name} allocator did not converge in {rounds} rounds "
        f"(offsets {offsets}); this variant cannot place these buffers"
    )


def _first_fit_colours(graph: Sequence[set[int]]) -> list[int]:
    """First-fit colouring in buffer order, buffer 0 pre-coloured 0 (Triton's `allocate`)."""
    colours = [0] + [-1] * (len(graph) - 1)
    for x in range(len(graph)):
        used = {colours[y] for y in graph[x] if colours[y] >= 0}
        colours[x] = next(c for c in range(len(graph) + 1) if c not in used)
    return colours
