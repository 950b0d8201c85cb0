"""local_load byte addresses: the seed's microbenchmark (plain and partitioned), padding, and
the checks on the bases."""

from __future__ import annotations

import numpy as np
import pytest

from wgpsim.errors import LayoutError
from wgpsim.layout.addresses import (
    conversion,
    conversion_table,
    element_offsets,
    local_load_addresses,
)
from wgpsim.layout.distributed import BlockedLayout
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
from wgpsim.layout.shared import (
    PaddedSharedLayout,
    PartitionedSharedLayout,
    SwizzledSharedLayout,
)

FP16 = 2
DISTRIBUTED = BlockedLayout([1, 8], [1, 32], [4, 1], [1, 0])
PLAIN = SwizzledSharedLayout(1, 1, 1, [1, 0])
PARTITIONED = PartitionedSharedLayout(2, 2, 0, SwizzledSharedLayout(1, 1, 1, [1, 0]))
W, L, R = np.ix_(np.arange(4), np.arange(32), np.arange(8))


def test_microbenchmark_plain():
    # Row w of 256 fp16 is warp w's; lane l holds 8 consecutive elements from column 8 l.
    addr = local_load_addresses(DISTRIBUTED, PLAIN, (4, 256), FP16, 4096)
    assert addr.shape == (4, 32, 8) and addr.dtype == np.int64
    assert (addr == 4096 + FP16 * (256 * W + 8 * L + R)).all()


def test_microbenchmark_partitioned_buffers_at_0_and_64k():
    addr = local_load_addresses(DISTRIBUTED, PARTITIONED, (4, 256), FP16, [0, 65536])
    base = np.array([0, 65536])[W % 2]
    assert (addr == base + FP16 * (256 * (W // 2) + 8 * L + R)).all()
    # Each warp reads one 512-byte window in one partition; the pairs are apart.
    partition = addr // 65536
    assert [set(partition[w].ravel()) for w in range(4)] == [{0}, {1}, {0}, {1}]


def test_every_element_read_exactly_once():
    addr = local_load_addresses(DISTRIBUTED, PARTITIONED, (4, 256), FP16, [0, 65536])
    assert len(np.unique(addr)) == addr.size


def test_padded_addresses_skip_the_padding():
    # 128x64 fp16, [512:+16] with dim 0 contiguous: column k starts at element 128 k, and every
    # 512 elements 16 padding elements follow.
    shared = PaddedSharedLayout([(512, 16)], order=[0, 1], shape=[128, 64])
    mma = AMDWMMALayout(3, False, [[0, 1], [1, 0]], instr_shape=(16, 16, 32))
    dst = DotOperandLayout(0, mma, 8)
    offsets, partition = element_offsets(dst, shared, (128, 64))
    assert partition is None
    addr = local_load_addresses(dst, shared, (128, 64), FP16, 0)
    assert (addr == FP16 * (offsets + (offsets // 512) * 16)).all()
    ll = dst.to_linear_layout((128, 64))
    grid = np.ix_(*(np.arange(ll.in_dim_size(d)) for d in ("warp", "lane", "register")))
    coords = ll.apply(dict(zip(("warp", "lane", "register"), grid, strict=True)))
    assert (offsets == coords["dim0"] + 128 * coords["dim1"]).all()


def test_partitioned_padded_inner():
    inner = PaddedSharedLayout([(128, 8)], order=[1, 0], shape=[32, 128])
    shared = PartitionedSharedLayout(2, 2, 0, inner)
    dst = BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
    addr = local_load_addresses(dst, shared, (128, 128), FP16, [1024, 70000])
    ll = dst.to_linear_layout((128, 128))
    coords = ll.apply({"warp": W, "lane": L, "register": np.arange(ll.in_dim_size("register"))})
    row, col = (np.broadcast_to(coords[d], addr.shape) for d in ("dim0", "dim1"))
    piece = row // 32
    offset = (piece // 2) * 32 * 128 + (row % 32) * 128 + col  # group-extended, unpadded
    expected = np.array([1024, 70000])[piece % 2] + FP16 * (offset + (offset // 128) * 8)
    assert (addr == expected).all()


def test_conversion_table_partitioned_columns():
    df = conversion_table(DISTRIBUTED, PARTITIONED, (4, 256), FP16)
    assert list(df.columns) == ["in_dim", "input", "offset", "partition", "bytes"]
    warp = df[df.in_dim == "warp"]
    assert warp[["input", "offset", "partition"]].values.tolist() == [[1, 0, 1], [2, 256, 0]]


def test_conversion_out_dims():
    cvt = conversion(DISTRIBUTED, PARTITIONED, (4, 256))
    assert cvt.out_dim_names == ("offset", "block", "partition")
    assert cvt.in_dim_names == ("register", "lane", "warp", "block")


@pytest.mark.parametrize(
    "shared, bases, message",
    [
        (PARTITIONED, 0, "give one base address per buffer"),
        (PARTITIONED, [0, 1, 2], "has 2 buffers"),
        (PLAIN, [0, 65536], "has one buffer"),
    ],
)
def test_bases_must_match_the_buffers(shared, bases, message):
    with pytest.raises(LayoutError, match=message):
        local_load_addresses(DISTRIBUTED, shared, (4, 256), FP16, bases)


def test_wrong_roles_are_errors():
    with pytest.raises(LayoutError, match="must be a shared-memory layout"):
        conversion(DISTRIBUTED, DISTRIBUTED, (4, 256))
    with pytest.raises(LayoutError, match="must be a distributed"):
        conversion(PLAIN, PLAIN, (4, 256))
    with pytest.raises(LayoutError, match="not surjective"):
        conversion(
            DISTRIBUTED, PaddedSharedLayout([(8, 1)], offset_bases=[[0, 2]], shape=[1, 4]), (1, 4)
        )
