"""wgpsim.microbench.{candidates, pieces, gemm}, wgpsim.measures.ranking: tiles per instruction, co-location,
auto partitioning (seed Part II), pieces / TDM / cachelines, element addresses, ranking."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.errors import LayoutError
from wgpsim.hw import load_hardware
from wgpsim.layout.addresses import local_load_addresses
from wgpsim.layout.mma.wmma import DotOperandLayout
from wgpsim.layout.shared import (
    PaddedSharedLayout,
    PartitionedSharedLayout,
    SwizzledSharedLayout,
)
from wgpsim.measures.ranking import rank
from wgpsim.microbench.candidates import (
    Gemm,
    auto_partition,
    cross_pair_bands,
    instruction_tiles,
)
from wgpsim.microbench.gemm import CandidateSpec, analyse, build_shared
from wgpsim.microbench.kernels import k_step_trace
from wgpsim.microbench.pieces import (
    band_partitions,
    band_pieces,
    cacheline_use,
    element_addresses,
    lockstep_partition_overlaps,
    piece_info,
    tdm_instructions,
    tdm_instructions_triton,
)

HW = load_hardware()
GEMM = Gemm((128, 128, 128), "fp16", 4, (16, 16, 32))
PAIRS = tuple(HW.pair_of_warp(w) for w in range(4))
STANDARD = GEMM.wmma([[0, 1], [1, 0]])
SWIZZLED = GEMM.wmma([[2, 1], [1, 0]], [[2, 0]])
COARSE = GEMM.wmma([[2, 4], [1, 0]], [[0, 1], [0, 2], [2, 0]])


def tiles(wmma, gemm=GEMM):
    return instruction_tiles(wmma, gemm.block_mn)


# ------------------------------------------------------------------ tiles and co-location
@pytest.mark.parametrize("wmma", [STANDARD, SWIZZLED, COARSE], ids=["std", "swz", "coarse"])
def test_every_c_tile_is_computed_once(wmma):
    t = tiles(wmma)
    assert t.shape == (16, 4, 2)
    flat = {(int(r), int(c)) for r, c in t.reshape(-1, 2)}
    assert flat == {(r, c) for r in range(8) for c in range(8)}


def test_tiles_agree_with_the_element_layout():
    """Tile (r, c) of warp w in instruction i holds C element (16 r, 16 c) at lane 0."""
    ll = SWIZZLED.to_linear_layout((128, 128))
    t = tiles(SWIZZLED)
    for i in range(t.shape[0]):
        for w in range(4):
            out = ll.apply({"register": i << 3, "warp": w})
            assert (out["dim0"] // 16, out["dim1"] // 16) == tuple(t[i, w])


def test_seed_figure_8_standard_layout_colocates_a_not_b():
    t = tiles(STANDARD)
    a_instr, a_hits = cross_pair_bands(t, 0, PAIRS)
    assert a_instr == list(range(16))
    assert {(w, v) for _, w, v in a_hits} == {(0, 1), (2, 3)}  # w0/w1 and w2/w3 share M-rows
    assert cross_pair_bands(t, 1, PAIRS) == ([], [])


def test_seed_figure_9_swizzle_separates_the_pairs_on_a():
    t = tiles(SWIZZLED)
    assert cross_pair_bands(t, 0, PAIRS)[0] == []
    # seed: "w1 on its second iteration ... landing on [2, 1] XOR [2, 0] = [0, 1]"
    assert tuple(t[1, 1]) == (0, 1)
    assert tuple(t[0, 1]) == (2, 1)


# ------------------------------------------------------------------ auto partitioning
def test_seed_figure_10_auto_parameters():
    t = tiles(SWIZZLED)
    a, b = auto_partition(GEMM, t, 0, PAIRS), auto_partition(GEMM, t, 1, PAIRS)
    assert (a.partition_dim, a.num_partitions, a.num_groups, a.num_pieces) == (0, 2, 2, 4)
    assert a.piece_shape == (32, 128)
    assert (b.partition_dim, b.num_partitions, b.num_groups, b.num_pieces) == (1, 2, 4, 8)
    assert b.piece_shape == (128, 16)


def test_seed_figure_11_coarse_auto_parameters():
    t = tiles(COARSE)
    a, b = auto_partition(GEMM, t, 0, PAIRS), auto_partition(GEMM, t, 1, PAIRS)
    assert (a.num_groups, a.num_pieces, a.piece_shape) == (2, 4, (32, 128))
    assert (b.num_groups, b.num_pieces, b.piece_shape) == (1, 2, (128, 64))


def test_auto_refuses_a_colocated_operand():
    with pytest.raises(LayoutError, match="co-located"):
        auto_partition(GEMM, tiles(STANDARD), 0, PAIRS)
    # B is not co-located under warpsPerCTA [2, 2]: its N-columns follow the pair
    assert auto_partition(GEMM, tiles(STANDARD), 1, PAIRS).num_groups == 4


def _random_cta(data):
    """A bijective ctaLayout on the 8x8 tile grid: 6 independent GF(2) vectors, 2 warp bases."""
    units = [(1 << k, 0) for k in range(3)] + [(0, 1 << k) for k in range(3)]
    bases = data.draw(st.permutations(units))
    for _ in range(data.draw(st.integers(0, 6))):
        i = data.draw(st.integers(0, 5))
        j = data.draw(st.integers(0, 5).filter(lambda j, i=i: j != i))
        bases[i] = (bases[i][0] ^ bases[j][0], bases[i][1] ^ bases[j][1])
    return [list(b) for b in bases[:2]], [list(b) for b in bases[2:]]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_auto_partition_separates_pairs_in_every_instruction(data):
    warp, reg = _random_cta(data)
    t = tiles(GEMM.wmma(warp, reg))
    for op in (0, 1):
        try:
            auto = auto_partition(GEMM, t, op, PAIRS)
        except LayoutError:
            # refused: then no slicing into 2 partitions of any piece size separates the pairs
            for piece in (16, 32, 64):
                band = t[..., op] * 16 // piece % 2
                pair = np.asarray(PAIRS)
                assert not all(
                    set(band[r][pair == 0]).isdisjoint(band[r][pair == 1])
                    for r in range(t.shape[0])
                )
            continue
        piece = auto.piece_shape[auto.partition_dim]
        assert auto.num_pieces * piece == 128
        part = (t[..., op] * 16 // piece) % 2  # logical partition of each warp's band
        for r in range(t.shape[0]):
            a = {int(p) for p, q in zip(part[r], PAIRS, strict=True) if q == 0}
            b = {int(p) for p, q in zip(part[r], PAIRS, strict=True) if q == 1}
            assert a.isdisjoint(b)


# ------------------------------------------------------------------ pieces
def test_tdm_counts_seed_and_triton():
    assert [tdm_instructions(p, 4) for p in (1, 2, 4, 8, 16)] == [1, 1, 1, 2, 4]
    assert [tdm_instructions_triton(p, 4) for p in (1, 2, 4, 8, 16)] == [1, 1, 1, 2, 4]
    assert tdm_instructions(8, 8) == 1 and tdm_instructions_triton(6, 4) == 3


def test_cacheline_use():
    assert cacheline_use(128, 128) == 1.0
    assert cacheline_use(32, 128) == 0.25
    assert cacheline_use(64, 128) == 0.5


def test_piece_info_plain_and_partitioned():
    plain = piece_info(SwizzledSharedLayout(1, 1, 1, (1, 0)), (128, 128), 1, 2, 4, 128)
    assert (plain.num_pieces, plain.partition_dim, plain.tdm_instructions) == (1, None, 1)
    inner = PaddedSharedLayout.with_identity_for([[128, 8]], (32, 128), (1, 0))
    a = piece_info(PartitionedSharedLayout(2, 2, 0, inner), (128, 128), 1, 2, 4, 128)
    assert (a.num_pieces, a.piece_shape, a.tdm_instructions, a.row_bytes) == (
        4,
        (32, 128),
        1,
        256,
    )


@pytest.mark.parametrize("op", [0, 1])
@pytest.mark.parametrize("kind", ["swizzled", "padded", "partitioned"])
def test_element_addresses_agree_with_local_load_addresses(op, kind):
    shape = GEMM.operand_shape(op)
    order = GEMM.order(op)
    spec = {
        "swizzled": {"swizzled": {"vec": 8, "per_phase": 1, "max_phase": 8}},
        "padded": {"padded": [[128, 8]]},
        "partitioned": {"partitioned": "auto", "partition_layout": {"padded": [[128, 16]]}},
    }[kind]
    shared, _ = build_shared(
        spec, shape, order, lambda: auto_partition(GEMM, tiles(SWIZZLED), op, PAIRS)
    )
    bases = [0, 65536] if kind == "partitioned" else 4096
    dst = DotOperandLayout(op, SWIZZLED, 8)
    expected = local_load_addresses(dst, shared, shape, 2, bases)
    table = element_addresses(shared, shape, 2, bases)
    coords = dst.to_linear_layout(shape).apply(
        {
            "warp": np.arange(4)[:, None, None],
            "lane": np.arange(32)[None, :, None],
            "register": np.arange(expected.shape[2])[None, None, :],
        }
    )
    got = table[
        np.broadcast_to(coords["dim0"], expected.shape),
        np.broadcast_to(coords["dim1"], expected.shape),
    ]
    np.testing.assert_array_equal(got, expected)
    assert len(np.unique(table)) == table.size  # every element has its own address


def test_band_partitions_and_pieces():
    inner = PaddedSharedLayout.with_identity_for([[128, 8]], (32, 128), (1, 0))
    shared = PartitionedSharedLayout(2, 2, 0, inner)
    addr = element_addresses(shared, (128, 128), 2, [0, 65536])
    assert band_partitions(addr, 0, 16, 65536) == [(0,), (0,), (1,), (1,), (0,), (0,), (1,), (1,)]
    assert band_pieces(shared, (128, 128), 0, 16) == [
        (0,),
        (0,),
        (1,),
        (1,),
        (2,),
        (2,),
        (3,),
        (3,),
    ]
    assert band_pieces(shared, (128, 128), 1, 16) == [(0, 1, 2, 3)] * 8


def test_lockstep_overlaps():
    a = np.zeros((4, 2, 32), dtype=np.int64)
    a[1, 0] = 65536  # instruction 0: pair B's w1 in partition 1, w3 in partition 0 -> overlap
    a[1, 1] = a[3, 1] = 65536
    assert lockstep_partition_overlaps(a, PAIRS, 65536) == [0]


# ------------------------------------------------------------------ ranking
def test_rank_orders_by_cycles_then_tdm_then_lds():
    rows = [
        {"candidate": "a", "cycles": 300, "tdm_instructions": 3, "lds_bytes": 10},
        {"candidate": "b", "cycles": 300, "tdm_instructions": 2, "lds_bytes": 20},
        {"candidate": "c", "cycles": 500, "tdm_instructions": 1, "lds_bytes": 5},
        {"candidate": "d", "cycles": 300, "tdm_instructions": 2, "lds_bytes": 15},
    ]
    ranked = rank(rows)
    assert [n for n, _, _ in ranked] == ["d", "b", "a", "c"]
    reasons = {n: why for n, _, why in ranked}
    assert "bytes of LDS (15 vs 20)" in reasons["d"]
    assert "3 TDM instructions vs 2" in reasons["a"]
    assert reasons["c"] == "500 LDS cycles vs 300 for a"
    assert [place for _, place, _ in ranked] == [1, 2, 3, 4]


def test_equal_candidates_share_a_place():
    rows = [
        {"candidate": n, "cycles": c, "tdm_instructions": 1, "lds_bytes": 8}
        for n, c in (("a", 300), ("b", 200), ("c", 300), ("d", 400))
    ]
    assert [(n, p) for n, p, _ in rank(rows)] == [("b", 1), ("a", 2), ("c", 2), ("d", 4)]


# ------------------------------------------------------------------ one candidate end to end
def test_analyse_partitioned_candidate_has_no_partition_stalls():
    spec = CandidateSpec(
        "swz",
        ((2, 1), (1, 0)),
        ((2, 0),),
        tuple({"partitioned": "auto", "partition_layout": {"padded": [[128, p]]}} for p in (8, 16)),
    )
    c = analyse(GEMM, HW, spec, cacheline_bytes=128)
    assert sum(c.result.partition_stall_cycles.values()) == 0
    assert all(not o.same_partition and not o.lockstep_overlaps for o in c.operands)
    assert c.allocation.offsets_of("A")[1] - c.allocation.offsets_of("A")[0] >= HW.partitions.size
    trace = k_step_trace([o.lowering for o in c.operands])
    assert trace.count_by_op()["ds_load_b128"] == 4 * c.operands[0].lowering.num_instructions
