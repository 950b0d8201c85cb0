"""`wgpsim search --target gfx950|gfx942`: the layout search on a wave64 chip, over its
``#ttg.amd_mfma`` ctaLayouts and its own LDS instructions (docs/USAGE.md, "search")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from wgpsim.cli import main
from wgpsim.hw import load_hardware
from wgpsim.hw.config import hardware_path
from wgpsim.microbench.candidates import Gemm
from wgpsim.search.candidate import SearchProblem
from wgpsim.search.layout_search import parse_problem
from wgpsim.search.mfma import mfma_ctas, on_gfx9, on_mfma
from wgpsim.search.search import search
from wgpsim.search.space import SharedChoice
from wgpsim.sweeps.config import ConfigSource
from wgpsim.trace.instructions import INSTRUCTIONS

CASES = Path(__file__).parent / "fixtures" / "gfx9_lowering" / "cases"


def _search(target: str):
    raw = {"kind": "layout_search", "block": [128, 128, 64], "warps": 4}
    problem, hw, _ = parse_problem(raw, ConfigSource("t", "."), hw_path=hardware_path(target))
    return problem, hw, search(problem, hw)


@pytest.fixture(scope="module", params=["gfx950", "gfx942"])
def searched(request):
    return (request.param, *_search(request.param))


def test_candidates_read_with_the_targets_instructions(searched):
    target, _, hw, result = searched
    used = {o.plan.instruction for c in result.candidates for o in c.ops}
    assert used and used <= set(hw.instructions)
    assert {INSTRUCTIONS[n].family for n in used} == {"gfx9"}
    # transposed loads only where the target has them: gfx950's ds_read_b64_tr_b16
    assert ("ds_read_b64_tr_b16" in used) == (target == "gfx950")
    assert not any(c.a.partitioned or c.b.partitioned for c in result.candidates)


def test_the_mfma_of_triton_compiles_is_in_the_space(searched):
    """The gfx950 and gfx942 compiles of a 128x128x64 fp16 dot on 4 warps use this amd_mfma."""
    target, problem, _, result = searched
    compiled = re.search(
        r"#ttg\.amd_mfma<\{[^}]*\}>", (CASES / f"{target}-pad_a_fp16.ttgir").read_text()
    )
    from wgpsim.layout.notation import to_text

    texts = {to_text(problem.gemm.wmma(c.warp, c.register)) for c in problem.ctas()}
    assert compiled.group(0) in texts
    assert result.ranking


def test_gfx950_winner_reads_a_without_bank_conflicts():
    """kWidth 8: A in 16-byte reads; the winner's take one bank cycle a pass (64 banks)."""
    _, _, result = _search("gfx950")
    a = result.ranked[0].ops[0]
    assert a.plan.instruction == "ds_read_b128"
    assert int((a.pass_bank - 1).sum()) == 0


def test_cli_prints_the_winner_as_mfma(capsys):
    code = main(
        ["search", "--target", "gfx950", "--block", "128x128x64", "--warps", "4", "--workers", "1"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "#ttg.amd_mfma<{version = 4" in out
    assert "MFMA = ttgl.amd.AMDMFMALayout(version=4" in out
    assert "partitioned layouts: none (gfx950" in out


LOWERED = Path(__file__).parent / "fixtures" / "gfx9_lowering"


@pytest.mark.parametrize(
    "case, op, shared",
    [
        ("gfx950-swz_b_ncontig_fp16", 1, {"swizzled": {"vec": 8, "per_phase": 2, "max_phase": 8}}),
        ("gfx950-pad_a_fp16", 0, {"padded": [[512, 8]]}),
        ("gfx942-swz_b_ncontig_fp16", 1, {"swizzled": {"vec": 8, "per_phase": 2, "max_phase": 8}}),
        ("gfx942-pad_a_fp16", 0, {"padded": [[512, 8]]}),
    ],
)
def test_operand_reads_are_tritons(case, op, shared):
    """A search candidate's reads of one operand (warpsPerCTA [2, 2], the fixture's shared layout)
    are the lanes' addresses, instruction by instruction, of Triton 3.9.0's lowering of that
    local_load for the chip (A: 64x128 K-contiguous; B: 128x64 N-contiguous)."""
    target = case.split("-")[0]
    hw = load_hardware(hardware_path(target))
    gemm = on_mfma(Gemm((64, 64, 128), "fp16", 4, (16, 16, 32)), hw.target)
    cta = next(c for c in mfma_ctas(gemm) if gemm.wmma(c.warp, c.register).warps_per_cta == (2, 2))
    choice = SharedChoice("given", shared)
    fixed = {"a": choice} if op == 0 else {"b": choice}
    problem = SearchProblem(
        gemm, cta=cta, stages=1, b_transposed_loads=(True, False), partitioned=False, **fixed
    )
    problem = on_gfx9(problem, hw)
    result = search(problem, hw, prune=False)
    theirs = json.loads((LOWERED / f"{case}.json").read_text())
    want = np.array([a[1] for a in theirs["accesses"]]).reshape(-1, 4, 64).transpose(1, 0, 2)
    reads = []
    for c in result.candidates:
        addr = c.addresses(op)
        reads.append((c.ops[op].plan.instruction, addr - addr.min()))
    assert any(np.array_equal(addr, want) for _, addr in reads), [(n, a.shape) for n, a in reads]
