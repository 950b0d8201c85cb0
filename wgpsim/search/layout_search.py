"""Layout search (``kind: layout_search``): the best ctaLayout x shared layouts for a GEMM tile.

The space, the static bounds that prune it and the scoring are in
:mod:`wgpsim.search.search` (``docs/DESIGN.md``, "Layout search"). This kind validates the
config, runs the search through the executor, and builds the tables and the printed report
(:mod:`wgpsim.search.tables`): ``results.csv`` (the ranking's first ``top`` rows,
equivalent candidates as one row, each with its reason), ``equivalents.csv``, ``pareto.csv``,
``winners.csv`` (``#ttg`` text and Gluon code), ``references.csv`` (the config's hand-made
candidates against the winner) and ``counts.csv``.

A fixed ctaLayout (the AMD blog's coarse one) and a fixed A layout leave only B to choose:

>>> from wgpsim.experiments import run_experiment
>>> res = run_experiment({"kind": "layout_search", "block": [128, 128, 64], "warps": 4,
...     "cta_layout": {"register": [[0, 1], [0, 2], [2, 0]], "warp": [[2, 4], [1, 0]]},
...     "a": {"partitioned": "auto", "partition_layout": {"padded": [[64, 8]]}}, "top": 3})
>>> row = res.records()[0]
>>> row["b"], row["cycles"], row["partition_stall_cycles"], row["lds_bytes"]
('partitioned auto [128:+16]', 188, 0, 102384)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wgpsim.engine import ENGINES
from wgpsim.errors import LayoutError, shown
from wgpsim.hw.config_schema import RANGES
from wgpsim.layout.dtypes import DTYPE_BITS
from wgpsim.microbench.gemm_candidates import _candidate, _gemm, _is_bases, _shared_spec
from wgpsim.search.mfma import gfx9_note, on_gfx9
from wgpsim.search.search import SearchProblem, SearchResult, add_drift, search
from wgpsim.search.space import CtaLayout, SharedChoice
from wgpsim.search.tables import report, tables
from wgpsim.sweeps.config import (
    KIND_AND_HARDWARE,
    ConfigSource,
    Field,
    check_fields,
    load_hardware_for,
)
from wgpsim.sweeps.executor import Execution
from wgpsim.sweeps.kinds import ExperimentResult, register_kind

FIELDS = (
    *KIND_AND_HARDWARE,
    Field("block", list, items=int, doc="[BLOCK_M, BLOCK_N, BLOCK_K]", valid=(1, 4096)),
    Field("dtype", str, default="fp16", choices=tuple(DTYPE_BITS)),
    Field("warps", int, choices=(1, 2, 4, 8, 16)),
    Field(
        "instr_shape", list, items=int, default=[16, 16, 32], doc="WMMA [M, N, K]", valid=(1, 128)
    ),
    Field("k_width", int, default=8, doc="dot operand kWidth", valid=(1, 64)),
    Field("transposed", bool, default=False, doc="WMMA result layout transposed"),
    Field("a_k_contiguous", bool, default=True, doc="A stored K-fastest"),
    Field("b_k_contiguous", bool, default=False, doc="B stored K-fastest"),
    Field("stages", int, default=2, doc="num_stages: buffers per operand", valid=(1, 16)),
    Field(
        "lds_budget",
        int,
        default=None,
        doc="LDS bytes a candidate may use",
        valid=(1, RANGES["partitions.lds_bytes"][1]),
    ),
    Field("cacheline_bytes", int, default=128, valid=(1, 4096)),
    Field("swizzle_depth", int, default=1, doc="register bits a warp basis may XOR", valid=(0, 3)),
    Field("cta_layout", dict, default=None, doc="fixed ctaLayout {register, warp}"),
    Field("a", (str, dict), default=None, doc="fixed shared layout of A"),
    Field("b", (str, dict), default=None, doc="fixed shared layout of B"),
    Field("b_transposed_loads", list, items=bool, default=[True, False]),
    Field("references", dict, default=None, doc="hand-made candidates: name -> {cta_layout, a, b}"),
    Field("top", int, default=10, doc="rows of results.csv and winners.csv", valid=(1, 10**6)),
    Field("prune", bool, default=True),
    Field(
        "drift", dict, default=None, doc="{top, jitter_cycles, seeds}: conflict rate of the first"
    ),
    Field("engine", str, default="auto", choices=ENGINES),
)


DRIFT_FIELDS = (
    Field(
        "top", int, default=3, doc="candidates of the ranking to run under drift", valid=(1, 100)
    ),
    Field("jitter_cycles", int, default=8, valid=RANGES["drift.jitter_cycles"]),
    Field("seeds", int, default=8, valid=(2, 10_000)),
)


@dataclass(frozen=True)
class LayoutSearchSummary:
    """What the tables do not hold: the problem and the search's counts."""

    problem: SearchProblem
    result: SearchResult
    hw: Any = None


def parse_problem(
    raw: dict[str, Any], source: ConfigSource, *, hw_path: str | Path | None = None
) -> tuple[SearchProblem, Any, dict]:
    """The validated problem, the hardware (``hw_path``: ``--hw``) and the remaining settings;
    every problem of the config is reported at once (``source.problems``)."""
    cfg = check_fields(raw, FIELDS, source, collect=True)
    hw = gemm = cta = None
    fixed: list[Any] = [None, None]
    references = []
    with source.check():
        hw = load_hardware_for(cfg["hardware"], cfg["hardware_overrides"], source, hw_path=hw_path)
    with source.check():
        gemm = _gemm(cfg, source)
    with source.check():
        if gemm is not None and hw is not None:
            _check_fits(gemm, cfg, hw, source)
    with source.check():
        if not cfg["b_transposed_loads"]:
            raise source.error("b_transposed_loads", "give at least one of true, false")
    with source.check():
        if cfg["cta_layout"] is not None:
            cta = _cta_layout(cfg["cta_layout"], gemm, source)
    for op, name in ((0, "a"), (1, "b")):
        with source.check():
            if cfg[name] is not None:
                spec = _shared_spec(cfg[name], name, source)
                fixed[op] = SharedChoice(f"given {name.upper()}", spec)
    with source.check():
        check_fields(cfg["drift"] or {}, DRIFT_FIELDS, source, prefix="drift.")
    for name, spec in (cfg.get("references") or {}).items():
        with source.check():
            ref = _candidate(str(name), spec, source, "references")
            references.append(
                (
                    str(name),
                    CtaLayout(ref.warp, ref.register),
                    SharedChoice(f"{name} A", ref.shared[0]),
                    SharedChoice(f"{name} B", ref.shared[1]),
                )
            )
    source.problems.raise_any()
    problem = SearchProblem(
        gemm,
        references=tuple(references),
        stages=cfg["stages"],
        lds_budget=cfg["lds_budget"],
        cacheline_bytes=cfg["cacheline_bytes"],
        cta=cta,
        a=fixed[0],
        b=fixed[1],
        swizzle_depth=cfg["swizzle_depth"],
        b_transposed_loads=tuple(dict.fromkeys(cfg["b_transposed_loads"])),
    )
    if hw.wgp.warp_size == 64:  # gfx942/gfx950: amd_mfma, the target's loads, one partition
        problem = on_gfx9(problem, hw)
    _check_size(problem, source)
    return problem, hw, cfg


MAX_SEARCH_WORK = 400_000_000
"""Most ctaLayouts x operand elements (M*K + K*N) a search may take on: each ctaLayout's
candidates lower and simulate both operands, so time and memory grow with the product
(128x128x64 on 8 warps, the largest shipped search, is 385,351,680: 7.5 min, 1.9 GB on the
2-core machine; 1024x1024x16 on 4 warps, 618,528,768, is refused before it starts)."""


def _check_size(problem: SearchProblem, source: ConfigSource) -> None:
    """Refuse a space too large to search, with its size, before the first candidate."""
    m, n, k = problem.gemm.block
    ctas = len(problem.ctas())
    work = ctas * (m * k + k * n)
    if work > MAX_SEARCH_WORK:
        raise source.error(
            "block",
            f"{m}x{n}x{k} on {problem.gemm.num_warps} warps is {ctas:,} ctaLayouts x "
            f"{m * k + k * n:,} operand elements = {work:,}, more than a search takes on "
            f"({MAX_SEARCH_WORK:,}); give a smaller block, other warps or a fixed cta_layout",
        )


def _check_fits(gemm: Any, cfg: dict[str, Any], hw: Any, source: ConfigSource) -> None:
    """Refuse a block whose operands cannot be in the LDS whatever their layouts, before the
    enumeration (which would try every candidate of it): ``stages`` buffers of A ``[M, K]`` and
    of B ``[K, N]`` take at least ``stages x (M x K + K x N) x element bytes`` (padding only adds).
    """
    m, n, k = gemm.block
    need = cfg["stages"] * (m * k + k * n) * gemm.elem_bytes
    budget = cfg["lds_budget"] or hw.partitions.lds_bytes
    if need > min(budget, hw.partitions.lds_bytes):
        what = "lds_budget" if budget < hw.partitions.lds_bytes else "LDS"
        raise source.error(
            "block",
            f"{m}x{n}x{k} {gemm.dtype} with {cfg['stages']} stages needs at least {need:,} B "
            f"(stages x (M*K + K*N) x {gemm.elem_bytes} B), more than the {min(budget, hw.partitions.lds_bytes):,} B {what}",
        )


def _cta_layout(raw_cta: Any, gemm: Any, source: ConfigSource) -> CtaLayout:
    """A fixed ctaLayout ``{warp, register}``, checked against the block (if it is valid)."""
    if set(raw_cta) - {"warp", "register"} or "warp" not in raw_cta:
        raise source.error(
            "cta_layout", f"expected warp (and register) bases, got {shown(raw_cta)}"
        )
    if not all(_is_bases(raw_cta.get(key) or []) for key in ("warp", "register")):
        raise source.error("cta_layout", "expected lists of [m, n] bases (integers)")
    cta = CtaLayout(
        tuple(tuple(b) for b in raw_cta["warp"]),
        tuple(tuple(b) for b in raw_cta.get("register") or ()),
    )
    if gemm is not None:
        try:
            gemm.wmma(cta.warp, cta.register)
        except LayoutError as err:
            raise source.error("cta_layout", str(err)) from None
    return cta


@register_kind("layout_search")
def run(
    raw: dict[str, Any],
    source: ConfigSource,
    *,
    hw_path: str | Path | None = None,
    progress: Callable[..., Iterable] | None = None,
    execution: Execution | None = None,
) -> ExperimentResult:
    """Validate, search, tabulate."""
    problem, hw, cfg = parse_problem(raw, source, hw_path=hw_path)
    execution = execution or Execution(progress=progress)
    result = search(
        problem,
        hw,
        prune=cfg["prune"],
        engine=cfg["engine"],
        execution=execution,
        progress=progress,
    )
    if not result.ranking:
        raise source.error("block", "no candidate of the space can be built and fits")
    drift = check_fields(cfg["drift"] or {}, DRIFT_FIELDS, source, prefix="drift.")
    source.problems.raise_any()  # checked with the config already: nothing new here
    add_drift(result, hw, engine=cfg["engine"], **drift)
    out = tables(result, cfg["top"])
    return ExperimentResult(
        kind="layout_search",
        name=Path(source.name).stem,
        tables=out,
        summary=LayoutSearchSummary(problem, result, hw),
        display=out["results"][["rank", "cycles", "lds_bytes", "tdm_instructions", "candidate"]],
        report="\n".join(
            filter(None, (gfx9_note(problem, hw, len(cfg["references"] or {})), report(out)))
        ),
    )


__all__ = ["FIELDS", "LayoutSearchSummary", "parse_problem", "run", "tables"]
