"""The partition-aware allocator against Triton's own test cases, the seed, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.errors import AllocationError
from wgpsim.hw.alloc import (
    FRAME_COLUMNS,
    Allocation,
    Buffer,
    allocate,
    allocate_on,
    partitioned_buffers,
    tensor_buffers,
)
from wgpsim.layout.shared import PaddedSharedLayout, PartitionedSharedLayout, SwizzledSharedLayout

F16 = 2


Swizzled, Padded, Partitioned = SwizzledSharedLayout, PaddedSharedLayout, PartitionedSharedLayout
A = Swizzled(2, 2, 4, (1, 0))  # #A_SHARED of the upstream test
PADDED = Padded([(256, 8)], order=[1, 0], shape=[16, 32])
P2G2 = Partitioned(2, 2, 0, PADDED)
P4G1 = Partitioned(4, 1, 0, PADDED)
P2G4 = Partitioned(2, 4, 0, A)
P4G2 = Partitioned(4, 2, 0, A)
P2G1_SW = Partitioned(2, 1, 0, A)
P4G1_SW = Partitioned(4, 1, 0, A)


def tensors(*allocs):
    """Buffers of (name, layout, shape, live) local_allocs, in program order."""
    return [
        b for name, lay, shape, live in allocs for b in tensor_buffers(name, lay, shape, F16, live)
    ]


# test/Analysis/test-allocation-partitioned.mlir (the newer text Triton 3.9.0 satisfies). Live
# ranges are Triton's op numbering of each function: [def, last use + 1).
UPSTREAM = {
    "partitioned_2p_2g": (
        [("a", P2G2, (64, 32), (0, 1))],
        {"a": [0, 65536]},
        67640,
    ),
    "partitioned_4p_1g": (
        [("a", P4G1, (64, 32), (0, 1))],
        {"a": [0, 65536, 131072, 196608]},
        197660,
    ),
    "partitioned_2p_4g": (
        [("a", P2G4, (64, 32), (0, 1))],
        {"a": [0, 65536]},
        67584,
    ),
    "partitioned_4p_2g": (
        [("a", P4G2, (64, 32), (0, 1))],
        {"a": [0, 65536, 131072, 196608]},
        197632,
    ),
    "partitioned_with_regular": (
        [("regular", A, (32, 16), (0, 3)), ("partitioned", P2G2, (64, 32), (1, 4))],
        {"regular": [2112], "partitioned": [0, 65536]},
        67640,
    ),
    "multiple_partitioned": (
        [("alloc1", P2G2, (64, 32), (0, 3)), ("alloc2", P2G4, (64, 32), (1, 4))],
        {"alloc1": [0, 65536], "alloc2": [2112, 67648]},
        69696,
    ),
    "partitioned_reuse": (
        [("alloc1", P2G2, (64, 32), (0, 2)), ("alloc2", P2G4, (64, 32), (2, 3))],
        {"alloc1": [0, 65536], "alloc2": [0, 65536]},
        67640,
    ),
    "regular_only": (
        [("a", A, (32, 16), (0, 3)), ("b", A, (32, 16), (1, 4))],
        {"a": [0], "b": [1024]},
        2048,
    ),
    "three_tensor_colocation": (
        [
            ("a", P2G1_SW, (64, 32), (0, 4)),
            ("b", P2G1_SW, (64, 32), (1, 5)),
            ("c", P2G1_SW, (64, 32), (2, 6)),
        ],
        {"a": [0, 65536], "b": [2048, 67584], "c": [4096, 69632]},
        71680,
    ),
    "partition_exact_boundary": (
        [("a", P2G1_SW, (2048, 32), (0, 2))],
        {"a": [0, 65536]},
        131072,
    ),
    "partitioned_straddle": (
        [("a", P2G1_SW, (625, 2, 32), (0, 3)), ("b", P4G1_SW, (625, 4, 32), (1, 4))],
        {"a": [0, 80000], "b": [40000, 131072, 196608, 262144]},
        302144,
    ),
    "two_big_neighbors": (
        [("a", P2G1_SW, (1500, 2, 32), (0, 2))],
        {"a": [0, 131072]},
        227072,
    ),
}


@pytest.mark.parametrize("case", sorted(UPSTREAM))
def test_upstream_partitioned_cases(case):
    allocs, expected, total = UPSTREAM[case]
    result = allocate(tensors(*allocs))
    assert {name: result.offsets_of(name) for name in expected} == expected
    assert result.size == total


# The same layouts as Triton's test writes them, for wgpsim.layout's real classes.
SWIZZLED_TEXT = "#ttg.swizzled_shared<{vec = 2, perPhase = 2, maxPhase = 4, order = [1, 0]}>"
PADDED_TEXT = "#ttg.padded_shared<[256:+8] {order = [1, 0], shape = [16, 32]}>"


def layout_text(layout) -> str:
    if isinstance(layout, Partitioned):
        return (
            f"#ttg.partitioned_shared<{{numPartitions = {layout.num_partitions}, "
            f"numGroups = {layout.num_groups}, partitionDim = {layout.partition_dim}, "
            f"partitionLayout = {layout_text(layout.partition_layout)}}}>"
        )
    return PADDED_TEXT if isinstance(layout, Padded) else SWIZZLED_TEXT


@pytest.mark.parametrize("case", sorted(UPSTREAM))
def test_upstream_cases_with_wgpsim_layouts(case):
    from wgpsim.layout.notation import parse
    from wgpsim.layout.shared import PartitionedSharedLayout

    allocs, expected, total = UPSTREAM[case]
    real = [(name, parse(layout_text(lay)), shape, live) for name, lay, shape, live in allocs]
    buffers = tensors(*real)
    assert buffers == tensors(*allocs)
    for _, lay, shape, _ in real:
        if isinstance(lay, PartitionedSharedLayout):
            assert lay.buffer_bytes(shape, F16) in {b.size for b in buffers}
    result = allocate(buffers)
    assert {name: result.offsets_of(name) for name in expected} == expected
    assert result.size == total


def test_buffer_sizes_follow_triton_piece_rule():
    # 64x32 f16 [256:+8]: 2104 elements padded, 4208 B, 1052 B per piece (not the 1040 B of a
    # padded piece).
    assert [b.size for b in tensor_buffers("a", P2G2, (64, 32), F16)] == [2104, 2104]
    assert [b.size for b in tensor_buffers("a", P4G1, (64, 32), F16)] == [1052] * 4
    assert [b.size for b in tensor_buffers("a", P4G2, (64, 32), F16)] == [1024] * 4
    assert PADDED.padded_elems(2048) == 2104
    assert PADDED.padded_elems(2047) == 2047 + 7 * 8


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("partitioned_with_regular", {"regular": [4224], "partitioned": [0, 65536]}),
        ("multiple_partitioned", {"alloc1": [0, 65536], "alloc2": [4224, 67648]}),
        ("two_big_neighbors", {"a": [0, 96000]}),
    ],
)
def test_main_2026_06_variant_matches_the_older_expectations(case, expected):
    result = allocate(tensors(*UPSTREAM[case][0]), variant="main-2026-06")
    assert {name: result.offsets_of(name) for name in expected} == expected


def test_main_2026_06_variant_does_not_converge_on_the_straddle_case():
    with pytest.raises(AllocationError, match="did not converge"):
        allocate(tensors(*UPSTREAM["partitioned_straddle"][0]), variant="main-2026-06")


# test/Analysis/test-allocation.mlir runs without a partition size: pieces are consecutive.
def test_partition_size_zero_places_pieces_consecutively():
    p4g1_dim1 = Partitioned(4, 1, 1, PADDED)
    result = allocate(tensors(("a", p4g1_dim1, (64, 32), (0, 1))), partition_size=0)
    assert result.offsets_of("a") == [0, 1056, 2112, 3168]
    assert result.size == 4220
    p2g2 = Partitioned(2, 2, 0, A)
    result = allocate(tensors(("a", p2g2, (64, 32), (0, 1))), partition_size=0)
    assert (result.offsets_of("a"), result.size) == ([0, 2048], 4096)
    assert result.partition_of("a[p1]") == 0


def test_seed_microbenchmark_plain_vs_partitioned():
    plain = allocate([Buffer("x", 64 * 1024)])
    assert (plain.offsets_of("x"), plain.size) == ([0], 64 * 1024)
    split = allocate(partitioned_buffers("x", 64 * 1024, num_partitions=2, num_groups=1))
    assert [b.size for b in split.buffers] == [32 * 1024] * 2
    assert (split.offsets_of("x"), split.size) == ([0, 65536], 96 * 1024)
    assert [split.partition_of(n) for n in ("x[p0]", "x[p1]")] == [0, 1]


def test_triton_defaults_agree_with_the_hardware_config():
    from wgpsim.hw.config import load_hardware

    hw = load_hardware()
    buffers = [*partitioned_buffers("A", 65536, 2, 1), Buffer("B", 40000)]
    assert allocate_on(hw, buffers) == allocate(buffers)
    with pytest.raises(AllocationError, match=f"more than the {hw.partitions.lds_bytes} bytes"):
        allocate_on(hw, [Buffer("C", hw.partitions.lds_bytes + 16)])


def test_capacity_error_names_every_buffer():
    buffers = [
        *partitioned_buffers("A", 2 * 65536, 2, 1),
        *partitioned_buffers("B", 4 * 65536, 4, 1),
    ]
    with pytest.raises(AllocationError) as info:
        allocate(buffers)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("LDS allocation needs 393216 bytes (")
    assert message.endswith("more than the 327680 bytes of LDS")
    for b in buffers:
        assert b.name in message
    assert allocate(buffers, capacity=None).size == 393216


def test_allocation_views():
    result = allocate(tensors(*UPSTREAM["partitioned_straddle"][0]))
    frame = result.to_frame()
    assert tuple(frame.columns) == FRAME_COLUMNS
    assert list(frame["offset"]) == sorted(result.offsets.values())
    assert (frame["end"] - frame["offset"] == frame["size"]).all()
    assert result.partitions_of("b[p0]") == (0, 1)
    assert result.partition_of("b[p0]") == 0
    text = str(result)
    assert "b[p0]" in text and "0-1" in text and "302144" in text
    assert result.offsets_of("a") == [result.offsets["a[p0]"], result.offsets["a[p1]"]]
    with pytest.raises(AllocationError, match="no tensor 'c'"):
        result.offsets_of("c")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"size": 0}, "size 0"),
        ({"alignment": 24}, "alignment 24"),
        ({"live": (3, 3)}, "live range"),
        ({"neighbours": ("x",)}, "own neighbour"),
    ],
)
def test_bad_buffers_are_rejected(kwargs, match):
    with pytest.raises(AllocationError, match=match):
        Buffer("x", **{"size": 16, **kwargs})


def test_bad_allocate_arguments_are_rejected():
    with pytest.raises(AllocationError, match="variant"):
        allocate([Buffer("x", 16)], variant="3.8")
    with pytest.raises(AllocationError, match="unique"):
        allocate([Buffer("x", 16), Buffer("x", 32)])
    with pytest.raises(AllocationError, match="neighbour 'y'"):
        allocate([Buffer("x", 16, neighbours=("y",))])
    with pytest.raises(AllocationError, match="num_partitions 3"):
        partitioned_buffers("t", 1024, 3, 1)


def test_alignment_is_respected():
    result = allocate([Buffer("a", 100, live=(0, 2)), Buffer("b", 64, alignment=128, live=(1, 3))])
    assert result.offsets == {"a": 0, "b": 128}


def test_empty_allocation():
    result = allocate([])
    assert result.size == 0 and result.to_frame().empty


# Properties over random kernels: plain and partitioned tensors with random sizes and lifetimes.
@st.composite
def kernels(draw):
    buffers = []
    for t in range(draw(st.integers(1, 6))):
        start = draw(st.integers(0, 8))
        live = (start, start + draw(st.integers(1, 6)))
        align = draw(st.sampled_from([16, 16, 128]))
        if draw(st.booleans()):
            buffers.append(Buffer(f"t{t}", draw(st.integers(1, 90_000)), align, live))
        else:
            parts = draw(st.sampled_from([2, 4]))
            groups = draw(st.sampled_from([1, 2, 4]))
            total = draw(st.integers(parts * groups, 200_000))
            buffers += partitioned_buffers(f"t{t}", total, parts, groups, live, align)
    return buffers


def check_placement(result: Allocation, partition_size: int) -> None:
    placed = [(b, result.offsets[b.name]) for b in result.buffers]
    for b, off in placed:
        assert off % b.alignment == 0
        for c, other in placed:
            if b.name < c.name and b.live[0] < c.live[1] and c.live[0] < b.live[1]:
                assert off + b.size <= other or other + c.size <= off, (b, c)
        if partition_size:
            for n in b.neighbours:
                assert not set(result.partitions_of(b.name)) & set(result.partitions_of(n))
    assert result.size == max(off + b.size for b, off in placed)


@settings(max_examples=150, deadline=None)
@given(kernels(), st.sampled_from([65536, 0]))
def test_properties_of_random_kernels(buffers, partition_size):
    result = allocate(buffers, partition_size=partition_size, capacity=None)
    check_placement(result, partition_size)
    assert allocate(buffers, partition_size=partition_size, capacity=None) == result
