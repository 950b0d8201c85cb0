"""Layout search: operand plans against the lowering, footprints against a real compile,
pruning against the unpruned ranking, the CLI."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from wgpsim.hw import load_hardware
from wgpsim.layout.shared import PaddedSharedLayout
from wgpsim.microbench.candidates import Gemm
from wgpsim.microbench.operand_plan import make_plan
from wgpsim.search.search import Scorer, SearchProblem, fixed_cycles, search
from wgpsim.search.space import CtaLayout, SharedChoice, cta_layouts
from wgpsim.trace.lowering import lower

HW = load_hardware()
GEMM = Gemm((128, 128, 64), "fp16", 4, (16, 16, 32))
FIXTURE = Path(__file__).parent / "fixtures" / "search" / "gluon_gemm_128x128x64.jsonl"
COARSE = CtaLayout(((2, 4), (1, 0)), ((0, 1), (0, 2), (2, 0)))
GLUON_4 = CtaLayout(((4, 4), (2, 0)), ((0, 1), (0, 2), (1, 0), (4, 0)))


def test_plan_gathers_equal_the_lowering_for_other_ctas():
    """A plan (warp 0's lowering as element coordinates) gives, by XOR of the warps' tile
    offsets, the addresses ``wgpsim.lower`` computes for every warp."""
    space = [c for c in cta_layouts((3, 3), 4) if c.register == COARSE.register + ((4, 0),)]
    assert len(space) > 10
    shared = (
        PaddedSharedLayout.with_identity_for([[64, 8]], (128, 64), (1, 0)),
        PaddedSharedLayout.with_identity_for([[128, 16]], (64, 128), (1, 0)),
    )
    scorer = Scorer(SearchProblem(GEMM), HW)
    for cta in space[1::5]:
        parts = scorer.cta_parts(cta)
        wmma, offsets = parts.wmma, parts.offsets
        for op in (0, 1):
            plan = make_plan(GEMM, wmma, op, shared[op], True)
            want = lower(shared[op], GEMM.dot_operand(wmma, op), GEMM.operand_shape(op), "fp16")
            got = plan.addresses(offsets[op], np.array([4096]))
            assert plan.instruction == want.instruction
            assert np.array_equal(got, want.addresses + 4096), (cta, op)


@pytest.mark.parametrize("line", [0, 1], ids=["plain", "partitioned"])
def test_footprint_and_local_loads_equal_the_compiled_gluon_gemm(line):
    """The fixture: a Gluon GEMM (BLOCK 128x128x64, fp16, 4 warps, two buffers per operand)
    compiled by Triton 3.9.0 for gfx1250 (tests/fixtures/search/regenerate.py)."""
    real = json.loads(FIXTURE.read_text().splitlines()[line])
    gemm = Gemm((128, 128, 64), "fp16", 4, (16, 16, 32), transposed=True)
    if real["partitioned"]:  # make_partitioned_dot_layouts(128, 128, ..., 4, [16, 16, 32])
        cta = GLUON_4
        a = {"partitioned": "auto", "partition_layout": {"padded": [[64, 8]]}}
        b = {"partitioned": "auto", "partition_layout": {"padded": [[128, 16]]}}
    else:
        cta = CtaLayout(((0, 1), (1, 0)), ((0, 2), (0, 4), (2, 0), (4, 0)))
        a, b = {"padded": [[64, 8]]}, {"padded": [[128, 16]]}
    problem = SearchProblem(
        gemm,
        stages=2,
        cta=cta,
        a=SharedChoice("A", a),
        b=SharedChoice("B", b),
        b_transposed_loads=(True,),
    )
    (cand,) = search(problem, HW).ranked
    assert cand.allocation.size == real["shared"]
    counts = {}
    for o in cand.ops:
        counts[o.plan.instruction] = counts.get(o.plan.instruction, 0) + o.plan.instructions
    assert counts == {k: v for k, v in real["ops"].items() if k.startswith("ds_load")}


def test_pruning_never_drops_the_first():
    """On a small space (the coarse ctaLayout's neighbours, every shared choice) the pruned
    search ranks the same candidates first as the unpruned one."""
    ctas = [c for c in cta_layouts((3, 3), 4) if c.register == COARSE.register + ((4, 0),)][:3]
    firsts = []
    for prune in (True, False):
        results = [search(SearchProblem(GEMM, cta=c), HW, prune=prune) for c in ctas]
        best = min(r.ranked[0].cycles for r in results)
        firsts.append(
            sorted((c.name, c.cycles) for r in results for c in r.ranked if c.cycles == best)
        )
        if prune:
            assert sum(r.pruned for r in results) > 0
    assert firsts[0] == firsts[1]


def test_bound_holds_for_every_simulated_candidate():
    r = search(SearchProblem(GEMM, cta=COARSE), HW, prune=False)
    fixed = fixed_cycles(HW)
    assert all(c.cycles >= c.lower_bound + fixed for c in r.ranked)
    assert any(c.cycles == c.lower_bound + fixed for c in r.ranked)  # the bound is tight
    assert any(c.lockstep_overlaps and c.partition_stall_cycles for c in r.ranked)


def test_cli_search_json(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "wgpsim",
        "search",
        "--block",
        "128x128x64",
        "--warps",
        "4",
        "--top",
        "2",
        "--json",
        "--set",
        "cta_layout={register: [[0, 1], [0, 2], [2, 0]], warp: [[2, 4], [1, 0]]}",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    first = out["results"][0]
    assert first["partition_stall_cycles"] == 0 and first["bank_conflict_cycles"] == 0
    # --top counts rows of equivalent candidates; equivalents.csv lists every one of them
    assert len(out["results"]) == 2 < out["counts"][0]["rows"]
    assert len(out["equivalents"]) == sum(r["equivalents"] + 1 for r in out["results"])
    assert "PartitionedSharedLayout" in out["winners"][0]["gluon"]


def test_cli_search_bad_block_is_one_line():
    cmd = [sys.executable, "-m", "wgpsim", "search", "--block", "128x128", "--warps", "4"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "--block" in proc.stderr


def test_gemm_candidates_with_stages_equal_the_compiled_gluon_gemm():
    """gemm_candidates, told the kernel's two buffers per operand, sizes the LDS as the real
    compile does (the fixture's plain and partitioned kernels)."""
    from wgpsim.experiments import run_experiment

    real = [json.loads(line)["shared"] for line in FIXTURE.read_text().splitlines()]
    pads = ({"padded": [[64, 8]]}, {"padded": [[128, 16]]})
    auto = [{"partitioned": "auto", "partition_layout": p} for p in pads]
    res = run_experiment(
        {
            "kind": "gemm_candidates",
            "block": [128, 128, 64],
            "warps": 4,
            "stages": 2,
            "instr_shape": [16, 16, 32],
            "cacheline_bytes": 128,
            "transposed": True,
            "candidates": {
                "plain": {"cta_layout": {"warps_per_cta": [2, 2]}, "a": pads[0], "b": pads[1]},
                "gluon": {
                    "cta_layout": {"warp": GLUON_4.warp, "register": GLUON_4.register},
                    "a": auto[0],
                    "b": auto[1],
                },
            },
        }
    )
    sizes = res.tables["allocation"].groupby("candidate")["end"].max()
    assert [int(sizes["plain"]), int(sizes["gluon"])] == real


@pytest.mark.slow
def test_the_blog_tile_search():
    """The AMD blog's Part II tile over the whole space (configs/layout_search.yaml): the first
    candidate has no lock-step partition stall and no bank conflict, needs no more TDM
    instructions than the blog's coarse layout and ties or beats it on LDS cycles; the blog's
    hand-made candidates rank where their cycles put them (the plain ones behind every
    separated one)."""
    from wgpsim.experiments import run_experiment

    root = Path(__file__).parent.parent
    res = run_experiment(root / "configs" / "layout_search.yaml", overrides=["top=100000"])
    best = res.records()[0]
    refs = {r["reference"]: r for r in res.records("references")}
    coarse = refs["coarse"]
    assert best["partition_stall_cycles"] == 0 and best["bank_conflict_cycles"] == 0
    assert best["lockstep_overlaps"] == 0
    assert best["tdm_instructions"] <= coarse["tdm_instructions"] == 2
    assert best["cycles"] <= coarse["cycles"]
    assert coarse["rank"] < refs["swizzled_partitioned"]["rank"]  # 2 TDM vs 3, same cycles
    assert refs["swizzled_partitioned"]["cycles"] == coarse["cycles"]
    for plain in ("standard", "swizzled"):
        assert refs[plain]["cycles"] > coarse["cycles"]
        assert refs[plain]["partition_stall_cycles"] > 0
    counts = res.tables["counts"].iloc[0]
    assert counts["pruned"] > 0.95 * (counts["candidates"] - counts["cannot_be_built"])
