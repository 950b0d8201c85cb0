"""A search winner's Gluon code, pasted into a Gluon GEMM and compiled by Triton 3.9.0 for
gfx1250 (in a child process): the compiled kernel's LDS size and local_load instructions are
what wgpsim predicted."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wgpsim.hw import load_hardware
from wgpsim.microbench.candidates import Gemm
from wgpsim.search.gluon_code import winner_code
from wgpsim.search.search import SearchProblem, search
from wgpsim.search.space import CtaLayout

FIXTURES = Path(__file__).parent / "fixtures" / "search"

CHILD = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import triton.experimental.gluon.language as ttgl
    from regenerate import compile_gemm
    scope = {"ttgl": ttgl}
    exec(sys.argv[2], scope)
    print(json.dumps(compile_gemm(scope["SHARED_A"], scope["SHARED_B"], scope["WMMA"])))
    """
)


@pytest.mark.triton
@pytest.mark.slow
def test_winner_compiles_with_the_predicted_lds_and_loads():
    pytest.importorskip("triton")
    gemm = Gemm((128, 128, 64), "fp16", 4, (16, 16, 32))
    # the AMD blog's coarse ctaLayout; the search picks both shared layouts
    cta = CtaLayout(((2, 4), (1, 0)), ((0, 1), (0, 2), (2, 0), (4, 0)))
    result = search(SearchProblem(gemm, cta=cta), load_hardware())
    best = result.ranked[0]
    code = winner_code(best, result.problem)["gluon"]
    assert "PartitionedSharedLayout" in code
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(FIXTURES), code],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    real = json.loads(proc.stdout.strip().splitlines()[-1])
    assert real["shared"] == best.allocation.size
    predicted = {}
    for o in best.ops:
        predicted[o.plan.instruction] = predicted.get(o.plan.instruction, 0) + o.plan.instructions
    assert {k: v for k, v in real["ops"].items() if k.startswith("ds_")} == predicted
