"""The seed's worked examples, exactly: the Part I toy (32x8 bf16 local_load) and the scaled-down
[4, 256] microbenchmark tables of "Measuring It"."""

from __future__ import annotations

from wgpsim.layout.addresses import conversion, conversion_table
from wgpsim.layout.distributed import BlockedLayout, DistributedLinearLayout
from wgpsim.layout.notation import parse
from wgpsim.layout.shared import PartitionedSharedLayout, SwizzledSharedLayout

SEED_SHARED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>"
SEED_DST = (
    "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]],\n"
    "                       lane     = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]],\n"
    "                       warp = [], block = []}>"
)


def table(ll, dim, out=None):
    """{input: image} for in dim ``dim`` (image as a tuple, or one out dim's value)."""
    index = ll.out_dim_names.index(out) if out else None
    return {1 << k: (b[index] if out else tuple(b)) for k, b in enumerate(ll.get_bases(dim))}


# ------------------------------------------------------------------ Part I toy
def test_toy_dst_is_the_pasted_text():
    assert parse(SEED_DST) == DistributedLinearLayout(
        [[0, 1], [0, 2], [0, 4]], [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]
    )


def test_toy_shared_layout_bases():
    # sharedLL offset -> [M, K]: 1..16 -> [1..16, 0], 32, 64, 128 -> [0, 1], [0, 2], [0, 4].
    ll = parse(SEED_SHARED).to_linear_layout((32, 8))
    assert table(ll, "offset") == {
        1: (1, 0), 2: (2, 0), 4: (4, 0), 8: (8, 0), 16: (16, 0),
        32: (0, 1), 64: (0, 2), 128: (0, 4),
    }  # fmt: skip


def test_toy_cvt_table():
    cvt = conversion(SEED_DST, SEED_SHARED, (32, 8))
    assert table(cvt, "register", "offset") == {1: 32, 2: 64, 4: 128}
    assert table(cvt, "lane", "offset") == {1: 1, 2: 2, 4: 4, 8: 8, 16: 16}
    assert cvt.out_dims == (("offset", 256), ("block", 1))
    rows = conversion_table(SEED_DST, SEED_SHARED, (32, 8)).to_dict(orient="records")
    assert [(r["in_dim"], r["input"], r["offset"]) for r in rows] == [
        ("register", 1, 32), ("register", 2, 64), ("register", 4, 128),
        ("lane", 1, 1), ("lane", 2, 2), ("lane", 4, 4), ("lane", 8, 8), ("lane", 16, 16),
    ]  # fmt: skip


def test_toy_apply():
    # Notes section 1.5: register 3, lane 5 -> offset 101 (= 32 + 64 + 5).
    cvt = conversion(SEED_DST, SEED_SHARED, (32, 8))
    assert cvt.apply({"register": 3, "lane": 5, "warp": 0})["offset"] == 101


# ------------------------------------------------------------------ microbenchmark [4, 256]
DISTRIBUTED = BlockedLayout([1, 8], [1, 32], [4, 1], [1, 0])
PLAIN = SwizzledSharedLayout(1, 1, 1, [1, 0])
PARTITIONED = PartitionedSharedLayout(2, 2, 0, SwizzledSharedLayout(1, 1, 1, [1, 0]))


def test_microbenchmark_distributed_table():
    ll = DISTRIBUTED.to_linear_layout((4, 256))
    assert table(ll, "register") == {1: (0, 1), 2: (0, 2), 4: (0, 4)}
    assert table(ll, "lane") == {1: (0, 8), 2: (0, 16), 4: (0, 32), 8: (0, 64), 16: (0, 128)}
    assert table(ll, "warp") == {1: (1, 0), 2: (2, 0)}


def test_microbenchmark_plain_shared_table():
    offsets = table(PLAIN.to_linear_layout((4, 256)), "offset")
    assert offsets == {**{1 << k: (0, 1 << k) for k in range(8)}, 256: (1, 0), 512: (2, 0)}


def test_microbenchmark_partitioned_shared_table():
    ll = PARTITIONED.to_linear_layout((4, 256))
    assert table(ll, "offset") == {**{1 << k: (0, 1 << k) for k in range(8)}, 256: (2, 0)}
    assert table(ll, "partition") == {1: (1, 0)}


def test_microbenchmark_one_row_per_warp_and_rows_alternate_partitions():
    # "warp w owns row w ... this is what puts it on partition w % 2".
    cvt = conversion(DISTRIBUTED, PARTITIONED, (4, 256))
    for w in range(4):
        out = cvt.apply({"warp": w, "lane": 0, "register": 0})
        assert (out["partition"], out["offset"]) == (w % 2, (w // 2) * 256)
    plain = conversion(DISTRIBUTED, PLAIN, (4, 256))
    assert [plain.apply({"warp": w})["offset"] for w in range(4)] == [0, 256, 512, 768]
