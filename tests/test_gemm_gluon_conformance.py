"""``partitioned: auto`` against Gluon's ``make_partitioned_dot_layouts`` (Triton 3.9.0,
``triton.experimental.gluon.language.amd.gfx1250``; notes 2.3 and 2.4).

For each case Gluon returns a WMMA layout (ctaLayout bases) and a PartitionedSharedLayout for A
and for B. wgpsim is given only Gluon's ctaLayout and derives the shared layouts itself; the
partition count, num_groups, the partitioned dim and the inner padded layout (piece shape and
offset bases, in Gluon's memory order) must match, and the pairs must be apart in every
instruction. Gluon runs in a child process (Triton may abort the process on some inputs).
"""

import json
import subprocess
import sys
import textwrap

import pytest

from wgpsim.hw import load_hardware
from wgpsim.microbench.candidates import (
    Gemm,
    auto_partition,
    cross_pair_bands,
    instruction_tiles,
    issue_rounds,
)
from wgpsim.microbench.gemm import CandidateSpec, analyse, build_shared

pytest.importorskip("triton")

HW = load_hardware()
BLOCK_K = 64
A_PAIRS, B_PAIRS = [[128, 8]], [[128, 16]]

CASES = [
    # 4 warps: the seed's block, slices (the seed's coarse 64x128 tile is slice_m = 64)
    {"block_m": 128, "block_n": 128, "warps": 4},
    {"block_m": 128, "block_n": 128, "warps": 4, "slice_m": 64},
    {"block_m": 128, "block_n": 128, "warps": 4, "slice_n": 64},
    {"block_m": 128, "block_n": 128, "warps": 4, "slice_m": 64, "slice_n": 32},
    {"block_m": 256, "block_n": 128, "warps": 4},
    {"block_m": 64, "block_n": 256, "warps": 4},
    # operand orders and the result tile's orientation
    {"block_m": 128, "block_n": 128, "warps": 4, "a_t": True},
    {"block_m": 128, "block_n": 128, "warps": 4, "b_t": True},
    {"block_m": 128, "block_n": 64, "warps": 4, "a_t": True, "b_t": True, "transposed": False},
    # a 32x16 instruction
    {"block_m": 128, "block_n": 128, "warps": 4, "instr": [32, 16, 64]},
    {"block_m": 256, "block_n": 128, "warps": 4, "instr": [32, 16, 64], "transposed": False},
    # 8 warps: a third warp basis takes the M-group step
    {"block_m": 128, "block_n": 128, "warps": 8},
    {"block_m": 256, "block_n": 256, "warps": 8, "slice_m": 128},
]

CHILD = textwrap.dedent(
    """
    import json, sys
    from triton.experimental.gluon.language._layouts import PaddedSharedLayout
    from triton.experimental.gluon.language.amd import gfx1250

    def shared(s):
        inner = s.partition_layout
        return {"num_partitions": s.num_partitions, "num_groups": s.num_groups,
                "partition_dim": s.partition_dim, "shape": list(inner.shape),
                "offset_bases": [list(b) for b in inner.offset_bases]}

    out = []
    for c in json.loads(sys.argv[1]):
        m, n, k = c["block_m"], c["block_n"], c["block_k"]
        a_shape = [k, m] if c["a_t"] else [m, k]
        b_shape = [n, k] if c["b_t"] else [k, n]
        a = PaddedSharedLayout.with_identity_for(c["a_pairs"], a_shape, [1, 0])
        b = PaddedSharedLayout.with_identity_for(c["b_pairs"], b_shape, [1, 0])
        try:
            sa, sb, w = gfx1250.make_partitioned_dot_layouts(
                m, n, a, b, c["warps"], c["instr"], c["a_t"], c["b_t"],
                c["slice_m"], c["slice_n"], c["transposed"])
        except AssertionError as err:
            out.append({"error": str(err)})
            continue
        out.append({"warp": [list(x) for x in w.warp_bases],
                    "register": [list(x) for x in w.reg_bases],
                    "transposed": bool(w.transposed), "a": shared(sa), "b": shared(sb)})
    print(json.dumps(out))
    """
)


def _full(case):
    return {
        "a_t": False,
        "b_t": False,
        "transposed": True,
        "instr": [16, 16, 32],
        "slice_m": None,
        "slice_n": None,
        "block_k": BLOCK_K,
        "a_pairs": A_PAIRS,
        "b_pairs": B_PAIRS,
        **case,
    }


@pytest.fixture(scope="module")
def gluon():
    cases = [_full(c) for c in CASES]
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        pytest.skip(f"Gluon child failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
    return dict(zip(range(len(cases)), json.loads(proc.stdout), strict=True))


def _gemm(case, transposed):
    return Gemm(
        (case["block_m"], case["block_n"], BLOCK_K),
        "fp16",
        case["warps"],
        tuple(case["instr"]),
        a_k_contiguous=not case["a_t"],
        b_k_contiguous=case["b_t"],
        transposed=transposed,
    )


def _memory_order(bases, transposed_operand):
    return [list(reversed(b)) if transposed_operand else list(b) for b in bases]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[json.dumps(c) for c in CASES])
def test_auto_matches_make_partitioned_dot_layouts(gluon, index):
    case, want = _full(CASES[index]), gluon[index]
    assert "error" not in want, want
    gemm = _gemm(case, want["transposed"])
    wmma = gemm.wmma(want["warp"], want["register"])
    tiles = instruction_tiles(wmma, gemm.block_mn)
    pairs = [HW.pair_of_warp(w) for w in range(gemm.num_warps)]
    rounds = issue_rounds(gemm.num_warps, HW.wgp.simds)
    for op, key, padding, flipped in (
        (0, "a", A_PAIRS, case["a_t"]),
        (1, "b", B_PAIRS, case["b_t"]),
    ):
        auto = auto_partition(gemm, tiles, op, pairs, rounds)
        gl = want[key]
        assert (auto.num_partitions, auto.num_groups) == (gl["num_partitions"], gl["num_groups"])
        # Gluon's dim is in memory order ([K, M] for a transposed A, [N, K] for a transposed B)
        assert (1 - auto.partition_dim if flipped else auto.partition_dim) == gl["partition_dim"]
        shared, _ = build_shared(
            {"partitioned": "auto", "partition_layout": {"padded": padding}},
            gemm.operand_shape(op),
            gemm.order(op),
            lambda auto=auto: auto,
        )
        inner = shared.partition_layout
        assert list(reversed(inner.shape) if flipped else inner.shape) == gl["shape"]
        bases = inner.linear_component().get_bases("offset")
        assert _memory_order(bases, flipped) == gl["offset_bases"]
        assert cross_pair_bands(tiles, op, pairs, rounds)[0] == []


@pytest.mark.parametrize("index", [0, 1, 11])
def test_gluon_layouts_have_no_partition_stalls_in_lock_step(gluon, index):
    case, want = _full(CASES[index]), gluon[index]
    gemm = _gemm(case, want["transposed"])
    specs = tuple(
        {"partitioned": "auto", "partition_layout": {"padded": p}} for p in (A_PAIRS, B_PAIRS)
    )
    spec = CandidateSpec(
        "gluon", tuple(map(tuple, want["warp"])), tuple(map(tuple, want["register"])), specs
    )
    result = analyse(gemm, HW, spec, cacheline_bytes=128)
    assert sum(result.result.partition_stall_cycles.values()) == 0
    assert all(not o.same_partition and not o.lockstep_overlaps for o in result.operands)
