"""What a kernel author pastes for a search winner: ``#ttg`` text and Gluon code.

>>> from wgpsim.microbench.candidates import Gemm
>>> from wgpsim.search.search import SearchProblem
>>> code = layouts_code(Gemm((128, 128, 64), "fp16", 4, (16, 16, 32)),
...     ((2, 4), (1, 0)), ((0, 1), (0, 2), (2, 0)), None, None)
>>> print(code.splitlines()[0])
WMMA = ttgl.amd.AMDWMMALayout(version=3, transposed=False, warp_bases=[[2, 4], [1, 0]], reg_bases=[[0, 1], [0, 2], [2, 0]], instr_shape=[16, 16, 32])
"""

from __future__ import annotations

from typing import Any

from wgpsim.layout.gluon import to_gluon_code
from wgpsim.layout.notation import to_text
from wgpsim.microbench.candidates import Gemm


def layouts_code(gemm: Gemm, warp, register, shared_a: Any, shared_b: Any) -> str:
    """Gluon statements building the WMMA layout, both dot operands and both shared layouts
    (``ttgl`` = ``triton.experimental.gluon.language``)."""
    wmma = gemm.wmma(warp, register)
    mma = "MFMA" if gemm.mfma_version else "WMMA"
    lines = [
        f"{mma} = {to_gluon_code(wmma)}",
        f"DOT_A = ttgl.DotOperandLayout(operand_index=0, parent={mma}, k_width={gemm.k_width})",
        f"DOT_B = ttgl.DotOperandLayout(operand_index=1, parent={mma}, k_width={gemm.k_width})",
    ]
    for name, shared in (("SHARED_A", shared_a), ("SHARED_B", shared_b)):
        if shared is not None:
            lines.append(f"{name} = {to_gluon_code(shared)}")
    return "\n".join(lines)


def winner_code(candidate: Any, problem: Any) -> dict[str, str]:
    """``ttg_wmma``, ``ttg_a``, ``ttg_b`` (``#ttg`` attribute text) and ``gluon`` (code)."""
    g = problem.gemm
    wmma = g.wmma(candidate.cta.warp, candidate.cta.register)
    sa, sb = (o.shared for o in candidate.ops)
    return {
        "ttg_wmma": to_text(wmma),
        "ttg_a": to_text(sa),
        "ttg_b": to_text(sb),
        "gluon": layouts_code(g, candidate.cta.warp, candidate.cta.register, sa, sb),
    }


__all__ = ["layouts_code", "winner_code"]
