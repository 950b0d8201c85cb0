"""Figures of a ``layout_search`` result: for the first candidates of the ranking, the C-tile
ownership by SIMD pair and the operand pieces by physical partition (the AMD blog's Figures
8-11, drawn by ``wgpsim.plots.candidates``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from matplotlib.figure import Figure

from wgpsim.microbench.gemm import CandidateSpec, analyse
from wgpsim.plots.candidates import ownership_figure, pieces_figure

#: Candidates of the ranking drawn.
DRAWN = 3


def candidate_analysis(candidate: Any, problem: Any, hw: Any, name: str) -> Any:
    """The ``wgpsim.microbench.gemm`` analysis of a search candidate (what the figures draw)."""
    shared = tuple(o.shared for o in candidate.ops)
    spec = CandidateSpec(name, candidate.cta.warp, candidate.cta.register, shared)
    return analyse(
        problem.gemm,
        hw,
        spec,
        cacheline_bytes=problem.cacheline_bytes,
        engine="auto",
        stages=problem.stages,
    )


def result_figures(result: Any) -> dict[str, Callable[[], Figure]]:
    """``ownership_rankN`` and ``pieces_rankN`` for the first :data:`DRAWN` candidates; none on
    a gfx9 (``amd_mfma``) search: they draw MI450's WMMA tiles by SIMD pair and its partitions."""
    summary = result.summary
    if summary.problem.gemm.mfma_version:
        return {}
    block_mn = summary.problem.gemm.block_mn
    figures: dict[str, Callable[[], Figure]] = {}
    for i, cand in enumerate(summary.result.ranked[:DRAWN], start=1):

        def get(c=cand, i=i):
            return candidate_analysis(c, summary.problem, summary.hw, f"rank {i}")

        figures[f"ownership_rank{i}"] = lambda get=get: ownership_figure(
            get(), summary.hw.pair_names, block_mn
        )
        figures[f"pieces_rank{i}"] = lambda get=get: pieces_figure(get(), block_mn)
    return figures


__all__ = ["candidate_analysis", "result_figures"]
