"""The search's scoring against the corpus (tests/corpus: real Triton 3.9.0 gfx1250 compiles):
for each TDM GEMM of the corpus, the candidate made of its own ctaLayout and shared layouts has
the compile's LDS size and local_load instructions."""

import json
import re
from pathlib import Path

import pytest

from wgpsim.hw import load_hardware
from wgpsim.layout.notation import parse
from wgpsim.microbench.candidates import Gemm
from wgpsim.search.search import SearchProblem, search
from wgpsim.search.space import CtaLayout, SharedChoice

CORPUS = Path(__file__).parent / "corpus" / "fixtures"
CASES = sorted(p.name for p in CORPUS.glob("gemm_tdm_*")) if CORPUS.exists() else []
DTYPES = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "f8E4M3FN": "fp8", "i8": "i8"}


def _attributes(ttgir: str) -> dict[str, str]:
    """``#name = #ttg...`` aliases, each with the aliases it names replaced (innermost first)."""
    out: dict[str, str] = {}
    for name, text in re.findall(r"^#(\w+) = (#ttg\.\S.*)$", ttgir, re.M):
        for other, value in sorted(out.items(), key=lambda kv: -len(kv[0])):
            text = re.sub(rf"#{other}\b", value, text)
        out[name] = text
    return out


def _case(name: str):
    folder = CORPUS / name
    expected = json.loads((folder / "expected.json").read_text())
    attrs = _attributes((folder / "kernel.ttgir").read_text())
    mma = parse(attrs["mma"])
    shapes, layouts, dtype = [], [], None
    for buf in expected["buffers"][:2]:
        m = re.match(r"!ttg\.memdesc<(\d+)x(\d+)x(\w+), #(\w+),", buf["type"])
        shapes.append((int(m[1]), int(m[2])))
        dtype = DTYPES[m[3]]
        layouts.append(parse(attrs[m[4]]))
    (bm, bk), (_, bn) = shapes
    return (
        expected,
        mma,
        layouts,
        Gemm(
            (bm, bn, bk),
            dtype,
            expected["num_warps"],
            tuple(mma.instr_shape),
            transposed=mma.transposed,
        ),
    )


@pytest.mark.parametrize("name", CASES)
def test_corpus_gemm_footprint_and_loads(name):
    expected, mma, layouts, gemm = _case(name)
    if gemm.elem_bytes != 2:
        pytest.skip(f"{gemm.dtype}: kWidth and the dot operand differ from the 16-bit GEMM")
    cta = CtaLayout(tuple(map(tuple, mma.warp_bases)), tuple(map(tuple, mma.reg_bases)))
    problem = SearchProblem(
        gemm,
        stages=1,
        cta=cta,
        a=SharedChoice("A", layouts[0]),
        b=SharedChoice("B", layouts[1]),
        b_transposed_loads=(True,),
    )
    (cand,) = search(problem, load_hardware()).ranked
    assert cand.allocation.size == expected["ttg_shared"]
    counts: dict[str, int] = {}
    for o in cand.ops:
        counts[o.plan.instruction] = counts.get(o.plan.instruction, 0) + o.plan.instructions
    assert counts == expected["assembly"]["ds"]
