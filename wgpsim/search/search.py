"""Layout search for one GEMM tile: score every ctaLayout x shared layout x transposed-load
choice with wgpsim's metrics, prune with static bounds, simulate the rest, rank.

Per candidate (``docs/DESIGN.md``, "Layout search"):

* static, for every candidate: the allocator's footprint of A and B with ``stages`` buffers
  each (Triton 3.9.0's allocator) and whether it fits the LDS budget; each operand's
  local_load instruction and count, transposed-load eligibility; the bank cycles of every pass;
  TDM instructions and cacheline use of the pieces; the lock-step partition overlap (in how
  many instructions warps of different SIMD pairs touch a common physical partition); and a
  lower bound on the K step's LDS cycles: ``max(max over pairs of the pair's bank cycles, max
  over partitions of the bank cycles of every pass that touches it)`` (a pair serves one pass
  at a time, and two passes that share a partition are never served together).
* simulated, for the candidates the bound cannot rule out: one K step of A's then B's loads in
  lock step (the ``fast`` engine), its cycles and partition stalls. A candidate is pruned when
  its bound exceeds the best cycles simulated so far: it cannot rank first (ranking is cycles
  first). Candidates whose passes are equal (bank cycles, partitions, instructions) share one
  simulation.
* for the first few of the ranking: the partition-conflict rate under drift.

The ranking is fits-in-LDS, then cycles, TDM instructions, LDS bytes, local_load instructions;
the Pareto front is over (cycles, LDS bytes, TDM instructions).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from wgpsim.engine import simulate
from wgpsim.errors import LayoutError
from wgpsim.hw import HardwareConfig
from wgpsim.search.candidate import Candidate, SearchProblem
from wgpsim.search.rank import CRITERIA, Group, group_rows, simplicity
from wgpsim.search.score import Counts, Scorer, score_cta
from wgpsim.trace.trace import TraceBuilder


# ------------------------------------------------------------------------------ simulation
def sim_point(hw: HardwareConfig, engine: str, point: Sequence[Any]) -> dict[str, int]:
    """One simulation (an executor point): ``(key, warps, [(instruction, count)...], addr)``
    with the addresses as base64 int32 ``[warp, row, lane]``."""
    _, warps, segments, blob = point
    lanes = hw.wgp.warp_size  # the search's layouts are the hardware's warps
    addr = np.frombuffer(base64.b64decode(blob), dtype=np.int32).reshape(warps, -1, lanes)
    b = TraceBuilder(num_warps=warps, lanes=lanes)
    b.barrier()
    for w in range(warps):
        b.clock(w, "start")
        start = 0
        for instruction, count in segments:
            b.loads(w, instruction, addr[w, start : start + count])
            start += count
        b.wait_ds(w, 0)
        b.clock(w, "end")
    result = simulate(b.build(), hw, engine=engine)
    return {
        "cycles": int(result.measurement()),
        "partition_stall_cycles": int(sum(result.partition_stall_cycles.values())),
        "bank_conflict_cycles": int(result.bank_conflict_cycles),
    }


def _point(c: Candidate) -> tuple[str, int, list[tuple[str, int]], str]:
    addrs = [c.addresses(op) for op in (0, 1)]
    blob = np.concatenate(addrs, axis=1).astype(np.int32)
    segments = [(c.ops[op].plan.instruction, addrs[op].shape[1]) for op in (0, 1)]
    return (c.key, blob.shape[0], segments, base64.b64encode(blob.tobytes()).decode())


# ------------------------------------------------------------------------------ the search
@dataclass
class SearchResult:
    """The search's candidates (``candidates``: every one kept, simulated or not), its counts,
    and ``ranking``: the simulated candidates as rows of equivalent ones, best first
    (``wgpsim.search.rank``)."""

    problem: SearchProblem
    candidates: list[Candidate]
    scored: int
    invalid: int
    pruned: int
    simulated: int
    simulations: int
    ranking: list[Group]

    def rows(self) -> list[dict[str, Any]]:
        """One row per group: its representative's metrics, ``rank``, ``equivalents`` (how
        many other candidates it stands for) and ``reason``."""
        by_name = self.by_name
        return [
            {
                "rank": g.rank,
                **by_name[g.name].row(),
                "equivalents": g.equivalents,
                "reason": g.reason,
            }
            for g in self.ranking
        ]

    @property
    def by_name(self) -> dict[str, Candidate]:
        return {c.name: c for c in self.candidates}

    @property
    def ranked(self) -> list[Candidate]:
        """The representatives of the rows, best first."""
        by_name = self.by_name
        return [by_name[g.name] for g in self.ranking]

    def pareto(self) -> list[Candidate]:
        """Simulated candidates that fit and no other beats on all of (cycles, LDS bytes, TDM
        instructions)."""
        pts = [c for c in self.ranked if c.cycles is not None and c.fits]
        front = []
        for c in pts:
            m = _metrics(c)
            dominated = any(
                all(x <= y for x, y in zip(_metrics(d), m, strict=True)) and _metrics(d) != m
                for d in pts
            )
            if not dominated:
                front.append(c)
        return front


def _metrics(c: Candidate) -> tuple[int, int, int]:
    return (
        int(c.cycles),
        int(c.allocation.size),
        c.ops[0].pieces.tdm_instructions + c.ops[1].pieces.tdm_instructions,
    )


def fixed_cycles(hw: HardwareConfig) -> int:
    """Cycles of a K step that no pass can hide: the start clock before the first issue and the
    last load's latency before the end clock. Every simulated candidate takes at least its
    lower bound plus this (tests/test_search.py checks it)."""
    return int(hw.timing.clock_latency + hw.timing.lds_latency)


class InProcess:
    """The ``execution`` :func:`search` uses when it is given none: every point here, one
    after the other. A sweep passes its `wgpsim.sweeps.executor.Execution` instead (a
    pool, Dask, a progress bar), which has the same ``map``; this layer does not import it
    (analysis is below experiments).

    >>> InProcess().map(abs, [-1, 2], desc="demo", save=False)
    [1, 2]
    """

    def map(self, fn: Callable[[Any], Any], points: Iterable[Any], **_: Any) -> list:
        """``[fn(p) for p in points]`` (the ``desc``/``save`` of a sweep mean nothing here)."""
        return [fn(p) for p in points]


def search(
    problem: SearchProblem,
    hw: HardwareConfig,
    *,
    prune: bool = True,
    engine: str = "auto",
    execution: Any = None,
    progress: Callable[..., Iterable] | None = None,
    batch: int = 16,
) -> SearchResult:
    """Score the space of ``problem``, ``batch`` ctaLayouts at a time (the most promising
    first); simulate what the bounds cannot rule out; rank.

    With ``prune`` a candidate is dropped as soon as a lower bound on its cycles (before its
    lowering: :func:`_pre_bound`; after: ``Candidate.lower_bound``) plus :func:`fixed_cycles`
    exceeds the best cycles simulated so far: it cannot rank first. The simulations run
    through ``execution.map`` (default :class:`InProcess`).
    """
    scorer = Scorer(problem, hw)
    fixed = fixed_cycles(hw)
    sim = _Simulations(execution or InProcess(), hw, engine)
    refs = [scorer.reference(*r) for r in problem.references]
    choices = (problem.choices(0), problem.choices(1))
    counts = Counts()
    infos = _ctas_in_order(problem, scorer, choices, counts)
    sim.run(refs)
    kept = list(refs)
    counts.points += len(refs)
    wrap = progress or (lambda items, **_: items)
    chunks = [infos[i : i + batch] for i in range(0, len(infos), batch)]
    for chunk in wrap(chunks, total=len(chunks), desc="search: ctaLayouts"):
        todo = []
        for parts in chunk:
            todo += score_cta(scorer, parts, choices, problem, prune, sim.best, fixed, counts)
        order = sorted(todo, key=lambda c: (c.lower_bound, c.lockstep_overlaps, _tdm(c)))

        def beaten(c: Candidate) -> bool:
            return prune and sim.best is not None and c.lower_bound + fixed > sim.best

        worth = [c for c in order if c.fits and not beaten(c)]
        counts.pruned += len(order) - len(worth)
        # simulate the most promising first, so the bound tightens within the chunk
        head, rest = worth[:8], worth[8:]
        sim.run(head)
        rest = [c for c in rest if not beaten(c)]
        counts.pruned += len(worth) - len(head) - len(rest)
        sim.run(rest)
        kept += head + rest
    ranking = group_rows([c.row() for c in kept if c.cycles is not None], key=simplicity)
    return SearchResult(
        problem,
        kept,
        counts.points,
        counts.invalid,
        counts.pruned,
        sim.simulated,
        len(sim.cache),
        ranking,
    )


def _ctas_in_order(
    problem: SearchProblem, scorer: Scorer, choices: tuple, counts: Counts
) -> list[Any]:
    """The parts of every valid ctaLayout (the invalid ones counted), the most promising
    first: fewest bytes per pair, then both operands partitionable."""
    per_cta = len(choices[0]) * len(choices[1]) * len(problem.b_transposed_loads)
    infos = []
    for cta in problem.ctas():
        try:
            infos.append(scorer.cta_parts(cta))
        except LayoutError:
            counts.invalid += per_cta
        counts.points += per_cta
    infos.sort(key=lambda p: (p.pair_bytes, p.autos[0] is None or p.autos[1] is None))
    return infos


class _Simulations:
    """The simulations of a search: each distinct candidate (by ``Candidate.key``) simulated
    once through ``execution.map``; ``best`` the fewest cycles of a candidate that fits."""

    def __init__(self, execution: Any, hw: HardwareConfig, engine: str):
        self.execution, self.fn = execution, partial(sim_point, hw, engine)
        self.cache: dict[str, dict[str, int]] = {}
        self.best: int | None = None
        self.simulated = 0

    def run(self, todo: list[Candidate]) -> None:
        """Simulate ``todo`` (the points not yet in the cache) and set each one's cycles."""
        keys = [c.key for c in todo]
        new = {}
        for c, k in zip(todo, keys, strict=True):
            if k not in self.cache and k not in new:
                new[k] = _point(c)
        if new:
            rows = self.execution.map(
                self.fn, list(new.values()), desc="search: simulate", save=False
            )
            self.cache.update(zip(new, rows, strict=True))
        for c, k in zip(todo, keys, strict=True):
            r = self.cache[k]
            c.cycles, c.partition_stall_cycles = r["cycles"], r["partition_stall_cycles"]
            self.simulated += 1
            if c.fits:
                self.best = c.cycles if self.best is None else min(self.best, c.cycles)


def add_drift(
    result: SearchResult,
    hw: HardwareConfig,
    *,
    top: int = 3,
    jitter_cycles: int = 8,
    seeds: int = 8,
    engine: str = "auto",
) -> None:
    """The partition-conflict rate under drift (stall cycles per pass, uniform issue jitter of
    0..``jitter_cycles``, ``seeds`` runs) of the first ``top`` candidates of the ranking, as
    ``conflict_rate_jitterJ`` (+ ``_ci_low``, ``_ci_high``) in their rows: only survivors,
    since every run is a simulation (``wgpsim.measures.drift``)."""
    from wgpsim.measures.drift import conflict_rate

    for c in result.ranked[:top]:
        est = conflict_rate(c.trace(), hw, jitter_cycles=jitter_cycles, seeds=seeds, engine=engine)
        name = f"conflict_rate_jitter{jitter_cycles}"
        c.extra[name] = round(float(est.conflict_rate.mean), 4)
        c.extra[f"{name}_ci_low"] = round(float(est.conflict_rate.low), 4)
        c.extra[f"{name}_ci_high"] = round(float(est.conflict_rate.high), 4)


def _tdm(c: Candidate) -> int:
    return c.ops[0].pieces.tdm_instructions + c.ops[1].pieces.tdm_instructions


__all__ = [
    "CRITERIA",
    "Candidate",
    "Scorer",
    "SearchProblem",
    "SearchResult",
    "add_drift",
    "fixed_cycles",
    "search",
    "sim_point",
]
