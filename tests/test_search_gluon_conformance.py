"""The layout search against Gluon's ``make_partitioned_dot_layouts`` (Triton 3.9.0): for 4
and 8 warps the helper's ctaLayout and PartitionedSharedLayouts are among the search's first
(the ties for rank 1); for 2 and 16 warps, where the helper has none, the search still finds
layouts whose SIMD pairs never meet on a partition in lock step. Gluon runs in a child process.
"""

import json
import subprocess
import sys
import textwrap

import pytest

from wgpsim.hw import load_hardware
from wgpsim.microbench.candidates import Gemm
from wgpsim.search.search import SearchProblem, search
from wgpsim.search.space import CtaLayout, SharedChoice, cta_layouts

HW = load_hardware()
PADS = ([[64, 8]], [[128, 16]])
CHOICES = tuple(
    SharedChoice(
        f"partitioned auto {p}", {"partitioned": "auto", "partition_layout": {"padded": p}}
    )
    for p in PADS
)

CHILD = textwrap.dedent(
    """
    import json, sys
    from triton.experimental.gluon.language._layouts import PaddedSharedLayout
    from triton.experimental.gluon.language.amd import gfx1250
    out = []
    for warps in json.loads(sys.argv[1]):
        a = PaddedSharedLayout.with_identity_for([[64, 8]], [128, 64], [1, 0])
        b = PaddedSharedLayout.with_identity_for([[128, 16]], [64, 128], [1, 0])
        try:
            sa, sb, w = gfx1250.make_partitioned_dot_layouts(128, 128, a, b, warps, [16, 16, 32])
        except AssertionError as err:
            out.append({"error": str(err)})
            continue
        out.append({"warp": w.warp_bases, "register": w.reg_bases, "transposed": w.transposed,
                    "a": [sa.num_partitions, sa.num_groups, sa.partition_dim],
                    "b": [sb.num_partitions, sb.num_groups, sb.partition_dim]})
    print(json.dumps(out))
    """
)


@pytest.fixture(scope="module")
def gluon():
    pytest.importorskip("triton")
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps([2, 4, 8, 16])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode != 0:
        pytest.skip(f"Gluon child failed: {proc.stderr.strip()[-300:]}")
    return dict(zip([2, 4, 8, 16], json.loads(proc.stdout), strict=True))


def _params(shared):
    return [shared.num_partitions, shared.num_groups, shared.partition_dim]


@pytest.mark.triton
@pytest.mark.slow
@pytest.mark.parametrize("warps", [4, 8])
def test_search_finds_make_partitioned_dot_layouts(gluon, warps):
    want = gluon[warps]
    gemm = Gemm((128, 128, 64), "fp16", warps, (16, 16, 32), transposed=want["transposed"])
    target = CtaLayout(tuple(map(tuple, want["warp"])), tuple(map(tuple, want["register"])))
    space = cta_layouts((3, 3), warps)
    assert target in space
    if warps == 8:  # 23,520 ctaLayouts: those with the helper's register bases (1,296)
        space = [c for c in space if c.register == target.register]
    problem = SearchProblem(
        gemm, cta_list=tuple(space), a=CHOICES[0], b=CHOICES[1], b_transposed_loads=(True,)
    )
    result = search(problem, HW)
    first = [c for c in result.candidates if c.cycles == result.ranked[0].cycles]  # every row's
    hits = [c for c in first if c.cta == target]
    assert hits, [c.name for c in first[:5]]
    (hit,) = hits
    assert _params(hit.ops[0].shared) == want["a"] and _params(hit.ops[1].shared) == want["b"]
    assert hit.partition_stall_cycles == 0 and hit.lockstep_overlaps == 0


@pytest.mark.triton
@pytest.mark.parametrize("warps", [2, 16])
def test_search_separates_the_pairs_where_the_helper_has_none(gluon, warps):
    assert "error" in gluon[warps]
    gemm = Gemm((128, 128, 64), "fp16", warps, (16, 16, 32))
    problem = SearchProblem(gemm)
    if warps == 16:  # the pair bit's basis mixes, the others do not (2,160 ctaLayouts)
        problem = SearchProblem(gemm, a=CHOICES[0], b=CHOICES[1], b_transposed_loads=(True,))
    best = search(problem, HW).ranked[0]
    assert best.partition_stall_cycles == 0 and best.lockstep_overlaps == 0
    assert best.ops[0].bank_conflict_cycles == best.ops[1].bank_conflict_cycles == 0
    assert all(o.pieces.num_partitions == 2 for o in best.ops)
