"""The cached GEMM-candidate route (``wgpsim.microbench.gemm_parts`` and the caches of
``microbench.gemm.analyse``) against the direct one, rebuilt here from public pieces: every
candidate lowered, placed, traced and simulated on its own, as ``analyse`` did before the caches.
Same addresses, same assembly, same traces, same cycles, same table rows, same ranking."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest

from wgpsim.engine import simulate
from wgpsim.engine.result import ClockReads, Result
from wgpsim.errors import LayoutError
from wgpsim.hw import load_hardware
from wgpsim.hw.alloc import allocate_on, tensor_buffers
from wgpsim.microbench import gemm_parts
from wgpsim.microbench.candidates import (
    OPERANDS,
    Gemm,
    auto_partition,
    cross_pair_bands,
    instruction_tiles,
    issue_rounds,
)
from wgpsim.microbench.gemm import (
    CandidateAnalysis,
    CandidateSpec,
    OperandAnalysis,
    analyse,
    build_shared,
    clear_caches,
)
from wgpsim.microbench.gemm_tables import candidate_rows, tables_from_rows
from wgpsim.microbench.kernels import k_step_trace
from wgpsim.microbench.pieces import (
    band_partitions,
    band_pieces,
    cross_pair_overlap,
    element_addresses,
    lockstep_partition_overlaps,
    pair_mask_overlaps,
    piece_info,
)
from wgpsim.trace.lowering import lower

HW = load_hardware()
GEMM = Gemm((128, 128, 64), "fp16", 4, (16, 16, 32))  # the AMD blog's Part II tile
CTAS = {
    "standard": (((0, 1), (1, 0)), ()),
    "swizzled": (((2, 1), (1, 0)), ((2, 0),)),
    "coarse": (((2, 4), (1, 0)), ((0, 1), (0, 2), (2, 0))),
}
A = {
    "padded": {"padded": [[64, 8]]},
    "auto": {"partitioned": "auto", "partition_layout": {"padded": [[64, 8]]}},
}
B = {
    "padded": {"padded": [[128, 16]]},
    "auto": {"partitioned": "auto", "partition_layout": {"padded": [[128, 16]]}},
    "explicit": {
        "partitioned": {
            "num_partitions": 2,
            "num_groups": 4,
            "partition_dim": 1,
            "partition_layout": {"padded": [[128, 16]]},
        }
    },
    "swizzled": {"swizzled": {"vec": 8, "per_phase": 1, "max_phase": 8}},
}
SPECS = [
    CandidateSpec(f"{c}-{a}-{b}", *CTAS[c], (A[a], B[b]))
    for c, a, b in itertools.product(CTAS, A, B)
]


def direct(spec: CandidateSpec, stages: int = 2) -> CandidateAnalysis:
    """One candidate the straightforward way: nothing shared with any other candidate."""
    wmma = GEMM.wmma(spec.warp, spec.register)
    tiles = instruction_tiles(wmma, GEMM.block_mn)
    pairs = tuple(HW.pair_of_warp(w) for w in range(GEMM.num_warps))
    rounds = issue_rounds(GEMM.num_warps, HW.wgp.simds)
    layouts = [
        build_shared(
            spec.shared[op],
            GEMM.operand_shape(op),
            GEMM.order(op),
            lambda op=op: auto_partition(GEMM, tiles, op, pairs, rounds),
        )
        for op in (0, 1)
    ]
    buffers = [
        b
        for op, (shared, _) in enumerate(layouts)
        for b in tensor_buffers(
            OPERANDS[op].upper(), shared, (stages, *GEMM.operand_shape(op)), GEMM.elem_bytes
        )
    ]
    allocation = allocate_on(HW, buffers)
    operands = []
    for op, (shared, derived) in enumerate(layouts):
        shape, dim, extent = GEMM.operand_shape(op), GEMM.non_k_dim(op), GEMM.band_extent(op)
        bases = tuple(allocation.offsets_of(OPERANDS[op].upper()))
        # per band, its partitions one by one (band_partitions and the overlaps below are
        # vectorized in wgpsim; these are their definitions)
        elements = np.moveaxis(element_addresses(shared, shape, GEMM.elem_bytes, bases), dim, 0)
        per_band = elements.reshape(elements.shape[0] // extent, -1)
        parts = [tuple(int(p) for p in np.unique(b // HW.partitions.size)) for b in per_band]
        low = lower(
            shared,
            GEMM.dot_operand(wmma, op),
            shape,
            GEMM.dtype,
            bases=bases if len(bases) > 1 else bases[0],
        )
        band = tiles[..., op]
        operands.append(
            OperandAnalysis(
                op,
                shared,
                derived,
                piece_info(
                    shared, shape, GEMM.contiguous_dim(op), GEMM.elem_bytes, GEMM.num_warps, 128
                ),
                bases,
                tuple(cross_pair_bands(tiles, op, pairs, rounds)[0]),
                tuple(
                    r
                    for r in range(band.shape[0])
                    if cross_pair_overlap([set(parts[b]) for b in band[r]], pairs, rounds)
                ),
                tuple(band_pieces(shared, shape, dim, extent)),
                tuple(parts),
                low,
                tuple(_lockstep(low.addresses, pairs, rounds)),
                simulate(k_step_trace([low]), HW, engine="fast"),
            )
        )
    trace = k_step_trace([o.lowering for o in operands])
    result = simulate(trace, HW, engine="fast")
    return CandidateAnalysis(spec, wmma, tiles, pairs, tuple(operands), allocation, trace, result)


def _lockstep(addresses, pairs, rounds) -> list[int]:
    """Instructions in which warps of different pairs (one round) touch a common partition."""
    return [
        k
        for k in range(addresses.shape[1])
        if cross_pair_overlap(
            [set((a[a >= 0] // HW.partitions.size).tolist()) for a in addresses[:, k]],
            pairs,
            rounds,
        )
    ]


def cached(spec: CandidateSpec) -> CandidateAnalysis:
    return analyse(GEMM, HW, spec, cacheline_bytes=128, engine="fast", stages=2)


def _pair(build, spec):
    try:
        return build(spec)
    except LayoutError as err:
        return str(err)


@pytest.fixture(scope="module")
def both():
    """Every spec both ways; the cached ones in one sweep (twice, so the second pass reads
    everything from the caches)."""
    clear_caches()
    for spec in SPECS:
        _pair(cached, spec)
    return [(_pair(direct, s), _pair(cached, s)) for s in SPECS]


def test_the_sweep_shares_work():
    """The caches are used: fewer lowerings and K-step skeletons than candidates ask for."""
    clear_caches()
    for spec in SPECS:
        _pair(cached, spec)
    lowered = gemm_parts.sentinel_lowering.cache_info()
    assert lowered.hits > 0 and lowered.currsize < 2 * len(SPECS)
    assert gemm_parts._skeleton.cache_info().currsize < len(SPECS)


def test_same_infeasible_candidates(both):
    errors = [(d, c) for d, c in both if isinstance(d, str) or isinstance(c, str)]
    assert errors and all(d == c for d, c in errors)  # standard cannot partition A: both say so
    assert len(errors) < len(both)


def test_same_addresses_assembly_and_traces(both):
    for d, c in both:
        if isinstance(d, str):
            continue
        assert d.allocation == c.allocation
        assert d.trace == c.trace
        for od, oc in zip(d.operands, c.operands, strict=True):
            low_d, low_c = od.lowering, oc.lowering
            assert np.array_equal(low_d.addresses, low_c.addresses)
            assert low_d.counts == low_c.counts and low_d.issued.ops == low_c.issued.ops
            assert np.array_equal(low_d.issued.addresses, low_c.issued.addresses)
            assert np.array_equal(low_d.issued.distance, low_c.issued.distance)
            assert od.band_partitions == oc.band_partitions
            assert od.same_partition == oc.same_partition
            assert od.lockstep_overlaps == oc.lockstep_overlaps


def test_same_cycles_rows_and_ranking(both):
    feasible = [(d, c) for d, c in both if not isinstance(d, str)]
    for d, c in feasible:
        assert d.result.measurement() == c.result.measurement()
        assert d.result.partition_stall_cycles == c.result.partition_stall_cycles
        for od, oc in zip(d.operands, c.operands, strict=True):
            assert od.result.measurement() == oc.result.measurement()
    rows_d = [candidate_rows(d) for d, _ in feasible]
    rows_c = [candidate_rows(c) for _, c in feasible]
    assert rows_d == rows_c
    td, tc = tables_from_rows(rows_d), tables_from_rows(rows_c)
    for name in td:
        pd.testing.assert_frame_equal(td[name], tc[name])
    assert len(set(td["results"]["cycles"])) > 2  # the candidates differ: a ranking to compare


def _strict(a, b) -> bool:
    """Equal values of equal types, all the way down (a tuple is not a list)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_strict(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_strict(x, y) for x, y in zip(a, b, strict=True))
    return a == b or a != a  # NaN


def test_rows_are_json_values_already(both):
    """candidate_point returns candidate_rows without a JSON round trip: it must be one."""
    for _, c in both:
        if not isinstance(c, str):
            rows = candidate_rows(c)
            assert _strict(rows, json.loads(json.dumps(rows)))


def test_clock_reads_give_the_table_and_measurement_of_a_table():
    """A Result holding the fast engine's arrays measures what one holding the table does."""
    spec = SPECS[0]
    r = simulate(k_step_trace([o.lowering for o in direct(spec).operands]), HW, engine="fast")
    reads = r.__dict__["_clocks"]
    assert isinstance(reads, ClockReads)
    counters = {k: v for k, v in r.__dict__.items() if not k.startswith("_")}
    as_table = Result(clocks=r.clocks, **counters)
    assert as_table.measurement() == r.measurement() > 0
    assert as_table.measurements().equals(r.measurements())
    assert r.clocks is r.clocks and list(r.clocks.columns) == ["warp", "label", "cycle"]
    assert r.to_dict() == as_table.to_dict()
    with pytest.raises(Exception, match="labels read: \\['end', 'start'\\]"):
        r.measurement("start", "nope")


def test_vectorized_overlaps_match_their_definitions():
    """Random addresses and masks: the bitmask forms give what the per-set definitions do."""
    rng = np.random.default_rng(0)
    pairs, rounds = [0, 1, 0, 1, 0, 1, 0, 1], [0, 0, 0, 0, 1, 1, 1, 1]
    hits = 0
    for _ in range(50):
        addr = rng.integers(-1, 5 * 65536, size=(8, 6, 32))
        addr[rng.random(addr.shape) < 0.97] = -1  # about one active lane: some pairs miss
        assert lockstep_partition_overlaps(addr, pairs, 65536, rounds) == _lockstep(
            addr, pairs, rounds
        )
        masks = np.int64(1) << rng.integers(0, 5, size=(8, 6))
        want = [
            cross_pair_overlap(
                [{p for p in range(5) if m >> p & 1} for m in masks[:, k]], pairs, rounds
            )
            for k in range(6)
        ]
        assert pair_mask_overlaps(masks, pairs, rounds).tolist() == want
        hits += sum(want)
        elements = rng.integers(0, 5 * 65536, size=(16, 8))
        assert band_partitions(elements, 0, 4, 65536) == [
            tuple(int(p) for p in np.unique(b // 65536)) for b in elements.reshape(4, -1)
        ]
    assert 0 < hits < 50 * 6  # both answers drawn
