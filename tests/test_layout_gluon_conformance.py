"""Our encodings -> linear layouts against Triton 3.9.0's own ``to_linear_layout`` (Gluon
builder, gfx1250), on a seeded sample of blocked, linear, swizzled, partitioned, WMMA and
dot-operand layouts. Triton runs in a child process (some conversions abort it), and each
conversion in a forked grandchild."""

from __future__ import annotations

import random

import pytest
from forked import run_forked

from wgpsim.layout.distributed import BlockedLayout, DistributedLinearLayout, SliceLayout
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
from wgpsim.layout.notation import to_text
from wgpsim.layout.shared import PartitionedSharedLayout, SharedLinearLayout, SwizzledSharedLayout

pytest.importorskip("triton")
pytestmark = pytest.mark.triton

WORK = r"""
from wgpsim.layout.notation import parse
from wgpsim.layout.gluon import gluon_builder, gluon_linear_layout

builder = gluon_builder()

def work(item):
    text, shape = item
    res = gluon_linear_layout(parse(text), shape, builder)
    if hasattr(res, "offset_bases"):
        return {"offset": res.offset_bases}
    return {"register": res.reg_bases, "lane": res.lane_bases, "warp": res.warp_bases}
"""


def pow2(rng, lo, hi):
    return 1 << rng.randint(lo, hi)


def sample_cases(seed=7):
    rng = random.Random(seed)
    cases = []
    for _ in range(50):
        lanes0 = pow2(rng, 0, 5)
        lay = BlockedLayout(
            [pow2(rng, 0, 3), pow2(rng, 0, 3)],
            [lanes0, 32 // lanes0],
            rng.choice([[1, 1], [2, 2], [4, 1], [1, 4], [2, 4], [8, 1]]),
            rng.choice([[0, 1], [1, 0]]),
        )
        cases.append((lay, [pow2(rng, 0, 8), pow2(rng, 0, 8)]))
    for _ in range(10):
        lay = BlockedLayout([1, 2, 4], [2, 4, 4], [1, 2, 2], rng.sample([0, 1, 2], 3))
        cases.append((lay, [pow2(rng, 0, 4), pow2(rng, 0, 5), pow2(rng, 0, 6)]))
    for _ in range(30):
        lay = SwizzledSharedLayout(
            pow2(rng, 0, 3), pow2(rng, 0, 2), pow2(rng, 0, 3), rng.choice([[0, 1], [1, 0]])
        )
        cases.append((lay, [pow2(rng, 0, 7), pow2(rng, 0, 7)]))
    cases.append((SwizzledSharedLayout(2, 1, 4, [2, 1, 0]), [2, 8, 16]))
    for _ in range(10):
        inner = SwizzledSharedLayout(
            pow2(rng, 0, 2), pow2(rng, 0, 1), pow2(rng, 0, 2), rng.choice([[0, 1], [1, 0]])
        )
        lay = PartitionedSharedLayout(pow2(rng, 1, 2), pow2(rng, 0, 2), rng.randint(0, 1), inner)
        shape = [pow2(rng, 0, 5), pow2(rng, 0, 5)]
        shape[lay.partition_dim] *= lay.num_logical_pieces
        cases.append((lay, shape))
    for _ in range(10):  # permutation layouts (the only ones #ttg.linear accepts in 3.9.0)
        bits = [[0, 1 << k] for k in range(4)] + [[1 << k, 0] for k in range(5)]
        rng.shuffle(bits)
        lay = DistributedLinearLayout(bits[:2], bits[2:7], bits[7:])
        cases.append((lay, [32, 16]))
    parents = []
    for _ in range(25):
        wm = pow2(rng, 0, 2)
        wn = pow2(rng, 0, 3 - (wm > 2))
        instr = rng.choice(
            [(16, 16, 4), (16, 16, 32), (16, 16, 64), (16, 16, 128), (32, 16, 64), (32, 16, 128)]
        )
        mma = AMDWMMALayout.from_warps_per_cta([wm, wn], rng.random() < 0.5, instr)
        if rng.random() < 0.3:  # a permuted ctaLayout with a register repeat
            mma = AMDWMMALayout(3, mma.transposed, [[1, 0], [0, 1]], [[0, 2]], instr)
        parents.append(mma)
        rows, cols = mma.tile_shape
        cases.append((mma, [rows * pow2(rng, 0, 3), cols * pow2(rng, 0, 3)]))
    for mma in parents:
        op_idx = rng.randint(0, 1)
        k_width = pow2(rng, 1, 4)
        non_k = mma.tile_shape[op_idx] * pow2(rng, 0, 3)
        k = mma.instr_shape[2] * pow2(rng, 0, 2)
        cases.append(
            (DotOperandLayout(op_idx, mma, k_width), [non_k, k] if op_idx == 0 else [k, non_k])
        )
    cases += _batched_wmma(rng) + _slices(rng, cases) + _shared_linear(rng)
    return cases


def _batched_wmma(rng):
    """Rank-3 WMMA (a batched tl.dot, dim 0 the batch) and its dot operands."""
    cases = []
    for _ in range(15):
        instr = rng.choice([(16, 16, 32), (16, 16, 64), (32, 16, 64)])
        pool = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]  # unit bases: surjective in any order
        rng.shuffle(pool)
        n_warp = rng.randint(0, 2)
        mma = AMDWMMALayout(3, rng.random() < 0.5, pool[:n_warp], pool[n_warp : n_warp + 1], instr)
        rows, cols = mma.tile_shape
        batch = pow2(rng, 0, 2)
        cases.append((mma, [batch, rows * pow2(rng, 0, 2), cols * pow2(rng, 0, 2)]))
        op_idx = rng.randint(0, 1)
        non_k = mma.tile_shape[op_idx] * pow2(rng, 0, 2)
        k = instr[2] * pow2(rng, 0, 1)
        dot = DotOperandLayout(op_idx, mma, pow2(rng, 1, 3))
        cases.append((dot, [batch, non_k, k] if op_idx == 0 else [batch, k, non_k]))
    return cases


def _slices(rng, cases):
    """Slices of the distributed layouts above (1-D results: a vector read from LDS)."""
    out = []
    parents = [(lay, shape) for lay, shape in cases if not hasattr(lay, "vec")]
    # (a linear parent clamped to a size-1 dim is no permutation, which 3.9.0's binding aborts on)
    parents = [
        p
        for p in parents
        if not isinstance(p[0], PartitionedSharedLayout | DistributedLinearLayout)
    ]
    for lay, shape in rng.sample(parents, 25):
        dim = rng.randrange(len(shape))
        out.append((SliceLayout(dim, lay), shape[:dim] + shape[dim + 1 :]))
    return out


def _shared_linear(rng):
    """Shared linear layouts: a permutation of the unit bases of a shape, some XOR-mixed."""
    out = []
    for _ in range(20):
        shape = [pow2(rng, 0, 4), pow2(rng, 1, 5)]
        bases = [[1 << k, 0] for k in range(shape[0].bit_length() - 1)]
        bases += [[0, 1 << k] for k in range(shape[1].bit_length() - 1)]
        rng.shuffle(bases)
        for i in range(1, len(bases)):  # mix a later basis into an earlier one's column bits
            if rng.random() < 0.3:
                j = rng.randrange(i)
                bases[i] = [bases[i][0] | bases[j][0], bases[i][1] | bases[j][1]]
        lay = SharedLinearLayout(bases, rng.choice([16, 32]))
        if lay.shape == tuple(shape) and lay.to_linear_layout(shape).is_surjective():
            out.append((lay, shape))
    return out


def expected(layout, shape):
    ll = layout.to_linear_layout(shape)
    if ll.has_in_dim("offset"):
        return {"offset": [list(b) for b in ll.get_bases("offset")]}
    return {d: [list(b) for b in ll.get_bases(d)] for d in ("register", "lane", "warp")}


@pytest.fixture(scope="module")
def triton_results():
    cases = sample_cases()
    return cases, run_forked(WORK, [(to_text(lay), shape) for lay, shape in cases], timeout=600)


def test_sample_is_broad(triton_results):
    cases, _ = triton_results
    kinds = {type(lay).__name__ for lay, _ in cases}
    assert kinds == {
        "BlockedLayout", "SwizzledSharedLayout", "PartitionedSharedLayout",
        "DistributedLinearLayout", "AMDWMMALayout", "DotOperandLayout", "SliceLayout",
        "SharedLinearLayout",
    }  # fmt: skip
    assert sum(isinstance(lay, AMDWMMALayout) and lay.rank == 3 for lay, _ in cases) >= 10
    assert len(cases) > 220


def test_every_conversion_matches_triton(triton_results):
    cases, results = triton_results
    mismatches, aborted = [], []
    for (lay, shape), got in zip(cases, results, strict=True):
        if got is None or "error" in got:
            aborted.append(f"{to_text(lay)} {shape}")
            continue
        ours = expected(lay, shape)
        if isinstance(lay, PartitionedSharedLayout):
            # 3.9.0's Python result drops the partition basis; the offsets must still agree.
            got = {"offset": got["offset"]}
        if ours != got:
            mismatches.append(f"{to_text(lay)} {shape}: ours {ours} triton {got}")
    assert not aborted, "\n".join(aborted)
    assert not mismatches, "\n".join(mismatches[:5])


def test_gluon_objects_round_trip(triton_results):
    from wgpsim.layout.gluon import from_gluon, to_gluon

    cases, _ = triton_results
    for lay, _shape in cases:
        if not isinstance(lay, DistributedLinearLayout):
            assert from_gluon(to_gluon(lay)) == lay


def test_make_partitioned_dot_layouts_converts():
    # The 3.9.0 binding aborts on this WMMA layout (not a permutation); ours gives the notes'
    # element layout, and the A operand is split along M into two 64-row pieces.
    from triton.experimental.gluon.language import PaddedSharedLayout as GluonPadded
    from triton.experimental.gluon.language.amd import cdna5

    from wgpsim.layout.gluon import from_gluon

    padded = GluonPadded.with_identity_for([[128, 8]], [128, 128], [1, 0])
    a, b, mma = (from_gluon(x) for x in cdna5.make_partitioned_dot_layouts(
        128, 128, padded, padded, 4, [16, 16, 32], transposed=True))  # fmt: skip
    ll = mma.to_linear_layout((128, 128))
    assert [list(x) for x in ll.get_bases("warp")] == [[64, 64], [32, 0]]
    assert [list(x) for x in ll.get_bases("register")][5:] == [[16, 0], [64, 0]]
    assert [list(x) for x in a.to_linear_layout((128, 128)).get_bases("partition")] == [[64, 0]]
    assert [list(x) for x in b.to_linear_layout((128, 128)).get_bases("partition")] == [[0, 64]]
