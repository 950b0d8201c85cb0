"""GEMM layout candidates (``kind: gemm_candidates``): ctaLayout x shared layout, compared.

For one block ``C[M, N] = A[M, K] x B[K, N]`` and each named candidate (a WMMA ctaLayout plus a
shared layout for A and for B) the experiment reports, per operand, who reads what in each WMMA
instruction (co-location of the SIMD pairs on the same bytes or the same physical partition,
seed Figures 8 and 9), the pieces, num_groups, TDM instructions and cacheline use (Figures 10
and 11), where the allocator puts A and B (live together), how Triton lowers each operand's
``local_load`` and what one K step of those loads costs on the LDS under the seed's lock-step
assumption (every warp issues the same instruction sequence together). Candidates are ranked by
LDS cycles, then TDM instructions, then LDS bytes.

``partitioned: auto`` derives partition_dim, num_partitions and num_groups from the ctaLayout as
the seed does (``wgpsim.microbench.candidates.auto_partition``). Shared-layout specs, per operand:

* ``swizzled`` or ``{swizzled: {vec: 1, per_phase: 1, max_phase: 1}}`` (order from the operand);
* ``{padded: [[interval, padding], ...]}`` (identity for the operand's shape and order);
* ``{partitioned: {num_partitions, num_groups, partition_dim, partition_layout: SPEC}}``;
* ``{partitioned: auto, partition_layout: SPEC}`` (inner layout default ``swizzled``);
* any ``#ttg.*`` text or ``{kind: ...}`` mapping (``wgpsim.layout.notation``).

The seed's swizzled ctaLayout, B partitioned automatically (8 pieces of [K, 16], 2 TDM
instructions with 4 warps):

>>> from wgpsim.experiments import run_experiment
>>> swizzled = {"register": [[2, 0]], "warp": [[2, 1], [1, 0]]}
>>> res = run_experiment({"kind": "gemm_candidates", "block": [128, 128, 32], "warps": 4,
...     "instr_shape": [16, 16, 32], "cacheline_bytes": 128, "candidates": {"swz": {
...     "cta_layout": swizzled, "a": "swizzled", "b": {"partitioned": "auto"}}}})
>>> row = res.records()[0]
>>> row["b_pieces"], row["b_num_groups"], row["b_tdm_instructions"], row["b_cacheline_use"]
(8, 4, 2, 0.25)
>>> row["a_co_located"], row["a_same_partition"]
(False, True)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wgpsim.engine import ENGINES
from wgpsim.errors import AllocationError, ConfigError, LayoutError, TraceError, shown
from wgpsim.hw import HardwareConfig
from wgpsim.layout.dtypes import DTYPE_BITS
from wgpsim.layout.mma.wmma import AMDWMMALayout
from wgpsim.layout.notation import kind_of, parse_any
from wgpsim.layout.shared import PaddedSharedLayout, PartitionedSharedLayout, SwizzledSharedLayout
from wgpsim.measures.drift import drift_point
from wgpsim.microbench.candidates import (
    OPERANDS,
    Gemm,
    tile_bits,
)
from wgpsim.microbench.gemm import CandidateAnalysis, CandidateSpec, analyse
from wgpsim.microbench.gemm_tables import (
    candidate_rows,
    display,
    infeasible_rows,
    tables,
    tables_from_rows,
)
from wgpsim.sweeps.config import (
    KIND_AND_HARDWARE,
    SEED_RANGE,
    ConfigSource,
    Field,
    check_fields,
    check_names,
    load_hardware_for,
)
from wgpsim.sweeps.drift_section import DriftSection, drift_tables, parse_drift
from wgpsim.sweeps.executor import Execution, fingerprint
from wgpsim.sweeps.kinds import ExperimentResult, register_kind

# pandas is imported where a table is built, so `import wgpsim.microbench` stays light
if TYPE_CHECKING:
    import pandas as pd

FIELDS = (
    *KIND_AND_HARDWARE,
    Field("block", list, items=int, doc="[BLOCK_M, BLOCK_N, BLOCK_K]", valid=(1, 4096)),
    Field("dtype", str, default="fp16", choices=tuple(DTYPE_BITS)),
    Field("warps", int, choices=(4, 8)),
    Field("instr_shape", list, items=int, doc="WMMA [M, N, K]", valid=(1, 128)),
    Field("k_width", int, default=8, doc="dot operand kWidth", valid=(1, 64)),
    Field("transposed", bool, default=False, doc="WMMA result layout transposed"),
    Field("a_k_contiguous", bool, default=True, doc="A stored K-fastest (order [1, 0])"),
    Field("b_k_contiguous", bool, default=False, doc="B stored K-fastest (order [0, 1])"),
    Field("cacheline_bytes", int, doc="global-memory cacheline (seed: 128 bytes)", valid=(1, 4096)),
    Field("stages", int, default=1, doc="num_stages: buffers per operand", valid=(1, 16)),
    Field("candidates", dict, doc="name -> {cta_layout, a, b}"),
    Field("engine", str, default="des", choices=ENGINES),
    Field("seed", int, default=0, valid=SEED_RANGE),
    Field("drift", dict, default=None, doc="{jitter_cycles, seeds}: conflicts under drift"),
)
CANDIDATE_FIELDS = (
    Field("cta_layout", dict, doc="{warps_per_cta: [wm, wn]} or {register: [...], warp: [...]}"),
    Field("a", (str, dict), doc="shared layout of A"),
    Field("b", (str, dict), doc="shared layout of B"),
    Field("note", str, default=""),
)
SHARED_KINDS = ("swizzled", "padded", "partitioned")


@dataclass(frozen=True)
class GemmCandidatesConfig:
    name: str
    hw: HardwareConfig
    gemm: Gemm
    cacheline_bytes: int
    candidates: tuple[CandidateSpec, ...]
    engine: str
    seed: int
    drift: DriftSection | None = None
    stages: int = 1

    def analyse(self, name: str) -> CandidateAnalysis:
        """Candidate ``name``, analysed (LayoutError / AllocationError / TraceError if it
        cannot work)."""
        spec = next(s for s in self.candidates if s.name == name)
        return analyse(
            self.gemm,
            self.hw,
            spec,
            cacheline_bytes=self.cacheline_bytes,
            engine=self.engine,
            seed=self.seed,
            stages=self.stages,
        )


# ------------------------------------------------------------------------------ config
def parse_config(
    raw: dict[str, Any], source: ConfigSource, *, hw_path: str | Path | None = None
) -> GemmCandidatesConfig:
    """Validate ``raw`` into a config; every candidate's spec is checked before any work, and
    every problem found is reported at once (``source.problems``)."""
    cfg = check_fields(raw, FIELDS, source, collect=True)
    hw = gemm = drift = None
    specs: list[CandidateSpec] = []
    with source.check():
        hw = load_hardware_for(cfg["hardware"], cfg["hardware_overrides"], source, hw_path=hw_path)
    with source.check():
        gemm = _gemm(cfg, source)
    with source.check():
        if not cfg["candidates"]:
            raise source.error("candidates", "no candidates; name at least one")
        check_names(cfg["candidates"], "candidates", source)
    for name, raw_spec in cfg.get("candidates", {}).items():
        with source.check():
            specs.append(_candidate(str(name), raw_spec, source))
            if gemm is not None:  # a ctaLayout that does not match the config
                try:
                    gemm.wmma(specs[-1].warp, specs[-1].register)
                except LayoutError as err:
                    raise source.error(f"candidates.{name}.cta_layout", str(err)) from None
    with source.check():
        drift = parse_drift(cfg["drift"], source, seed=cfg.get("seed", 0))  # bad seed: said
    source.problems.raise_any()
    return GemmCandidatesConfig(
        Path(source.name).stem,
        hw,
        gemm,
        cfg["cacheline_bytes"],
        tuple(specs),
        cfg["engine"],
        cfg["seed"],
        drift,
        cfg["stages"],
    )


def _gemm(cfg: dict[str, Any], source: ConfigSource) -> Gemm:
    """The block, with the shapes checked (three entries each)."""
    for name in ("block", "instr_shape"):
        if len(cfg[name]) != 3:
            raise source.error(name, f"{cfg[name]} must have 3 entries")
    gemm = gemm_of(cfg)
    try:  # before any band or footprint is built from it (block [1, 1, 1])
        tile_bits(gemm.block_mn, gemm.tile_shape)
    except ConfigError as err:
        raise source.error("block", str(err)) from None
    k = gemm.block[2]
    if k & (k - 1):
        raise source.error("block", f"block K {k} must be a power of two")
    return gemm


def gemm_of(cfg: dict[str, Any]) -> Gemm:
    """The GEMM block of a checked config's block, dtype, warps, instr_shape, k_width,
    contiguity and transposed fields (``gemm_candidates`` and ``layout_search``)."""
    return Gemm(
        tuple(cfg["block"]),
        cfg["dtype"],
        cfg["warps"],
        tuple(cfg["instr_shape"]),
        cfg["k_width"],
        cfg["a_k_contiguous"],
        cfg["b_k_contiguous"],
        cfg["transposed"],
    )


def _candidate(
    name: str, raw: Any, source: ConfigSource, section: str = "candidates"
) -> CandidateSpec:
    """The candidate ``name`` of ``section`` (``references`` in a layout_search), checked."""
    where = f"{section}.{name}"
    if not isinstance(raw, dict):
        raise source.error(where, f"expected a mapping with cta_layout, a, b; got {shown(raw)}")
    cfg = check_fields(raw, CANDIDATE_FIELDS, source, prefix=f"{where}.")
    cta = cfg["cta_layout"]
    if "warps_per_cta" in cta:
        extra = set(cta) - {"warps_per_cta"}
        if extra:
            raise source.error(f"{where}.cta_layout", f"give warps_per_cta alone, not with {extra}")
        try:
            warp = AMDWMMALayout.from_warps_per_cta(cta["warps_per_cta"]).warp_bases
        except LayoutError as err:
            raise source.error(f"{where}.cta_layout", str(err)) from None
        register: Any = ()
    else:
        unknown = set(cta) - {"warp", "register"}
        if unknown or "warp" not in cta:
            raise source.error(
                f"{where}.cta_layout",
                f"expected warps_per_cta, or warp (and register) bases; got keys {sorted(cta)}",
            )
        warp, register = cta["warp"], cta.get("register") or ()
        for key, bases in (("warp", warp), ("register", register)):
            if not _is_bases(bases):
                raise source.error(
                    f"{where}.cta_layout.{key}",
                    f"expected a list of [m, n] bases (integers), got {shown(bases)}",
                )
    shared = tuple(_shared_spec(cfg[op], f"{where}.{op}", source) for op in OPERANDS)
    return CandidateSpec(
        name, tuple(map(tuple, warp)), tuple(map(tuple, register)), shared, cfg["note"]
    )


def _is_bases(value: Any) -> bool:
    """A list (or tuple) of bases, each a list of integers."""
    return isinstance(value, list | tuple) and all(
        isinstance(b, list | tuple) and all(type(v) is int for v in b) for b in value
    )


PARTITIONED_FIELDS = (
    Field("num_partitions", int, valid=(1, 32)),
    Field("num_groups", int, valid=(1, 64)),
    Field("partition_dim", int, valid=(0, 2)),
    Field("partition_layout", (str, dict), default={"swizzled": {}}),
)


def _shared_spec(value: Any, where: str, source: ConfigSource, *, inner: bool = False) -> Any:
    """Check a shared-layout spec's form (building it needs the shape, see `build_shared`)."""
    if value == "swizzled":
        return {"swizzled": {}}
    kinds = set(value) & set(SHARED_KINDS) if isinstance(value, dict) else set()
    if len(kinds) != 1:
        try:
            layout = parse_any(value)
        except LayoutError as err:
            raise source.error(
                where, f"{err}; or use swizzled, {{padded: [[I, P]]}}, {{partitioned: auto}}"
            ) from None
        if not isinstance(
            layout, SwizzledSharedLayout | PaddedSharedLayout | PartitionedSharedLayout
        ):
            raise source.error(
                where, f"expected a shared-memory layout, got {kind_of(layout)} (a register layout)"
            )
        return layout
    kind = kinds.pop()
    extra = set(value) - {kind} - ({"partition_layout"} if value[kind] == "auto" else set())
    if extra:
        raise source.error(where, f"unexpected keys {sorted(extra)} next to '{kind}'")
    if kind != "partitioned":
        return value
    if inner:
        raise source.error(where, "a partition layout must be swizzled or padded")
    if value[kind] == "auto":
        layout = value.get("partition_layout", {"swizzled": {}})
        return {kind: "auto", "partition_layout": _inner(layout, where, source)}
    if not isinstance(value[kind], dict):
        raise source.error(
            where, f"partitioned: expected 'auto' or a mapping, got {shown(value[kind])}"
        )
    fields = check_fields(value[kind], PARTITIONED_FIELDS, source, prefix=f"{where}.partitioned.")
    fields["partition_layout"] = _inner(fields["partition_layout"], where, source)
    return {kind: fields}


def _inner(value: Any, where: str, source: ConfigSource) -> Any:
    return _shared_spec(value, f"{where}.partition_layout", source, inner=True)


def candidate_point(cfg: GemmCandidatesConfig, source: ConfigSource, name: str) -> dict[str, Any]:
    """One sweep point, a candidate's name: its :func:`candidate_rows` and, with a drift
    section, its runs under every jitter and seed (``drift_runs``), as JSON values (what a
    checkpoint gives back, so resumed and fresh runs build the same tables). A candidate whose
    layouts do not fit the LDS or cannot be lowered gives one ``results`` row with the reason
    (``infeasible``), ranked last; the others are still compared."""
    try:
        c = cfg.analyse(name)
    except (LayoutError, AllocationError, TraceError) as err:
        # the config is valid, this candidate cannot run: rank it as infeasible, say why
        return json.loads(json.dumps({**infeasible_rows(name, str(err)), "drift_runs": []}))
    # candidate_rows gives JSON values already (lists, ints, floats, str keys: checked in
    # tests/test_gemm_parts.py), so only the drift runs take the round trip
    rows: dict[str, Any] = candidate_rows(c)
    if cfg.drift is not None:
        traces = {name: c.trace}
        runs = [
            drift_point(traces, cfg.hw, cfg.engine, (name, j, s))
            for j in cfg.drift.jitter_cycles
            for s in cfg.drift.seeds
        ]
        rows["drift_runs"] = json.loads(json.dumps(runs))
    return rows


class Analyses(Mapping[str, CandidateAnalysis]):
    """Candidate name -> :class:`CandidateAnalysis`, analysed on first access and kept (the
    sweep's points return table rows; figures need the analysis objects)."""

    def __init__(self, cfg: GemmCandidatesConfig):
        self._cfg = cfg
        self._done: dict[str, CandidateAnalysis] = {}

    def __getitem__(self, name: str) -> CandidateAnalysis:
        if name not in self._done:
            if all(s.name != name for s in self._cfg.candidates):
                raise KeyError(name)
            self._done[name] = self._cfg.analyse(name)
        return self._done[name]

    def __iter__(self) -> Iterator[str]:
        return (s.name for s in self._cfg.candidates)

    def __len__(self) -> int:
        return len(self._cfg.candidates)


@dataclass(frozen=True)
class GemmCandidatesSummary:
    """What the plots and notebooks read besides the tables: the parsed config and every
    candidate's analysis (computed on first access)."""

    config: GemmCandidatesConfig
    candidates: Analyses


def add_drift(
    out: dict[str, pd.DataFrame], runs: list[dict[str, Any]], section: DriftSection
) -> None:
    """Tables ``drift`` and ``drift_runs`` from the candidates' runs, and per jitter J the
    columns ``conflict_rate_jitterJ`` (mean), ``..._ci_low`` and ``..._ci_high`` in ``results``."""
    summary, per_run = drift_tables(runs, section, "candidate")
    out["drift"], out["drift_runs"] = summary, per_run
    table = out["results"]
    for jitter, rows in summary.groupby("jitter_cycles", sort=True):
        by_name = rows.set_index("candidate")
        for col, name in (
            ("conflict_rate", ""),
            ("conflict_rate_ci_low", "_ci_low"),
            ("conflict_rate_ci_high", "_ci_high"),
        ):
            table[f"conflict_rate_jitter{jitter}{name}"] = table["candidate"].map(by_name[col])


@register_kind("gemm_candidates")
def run(
    raw: dict[str, Any],
    source: ConfigSource,
    *,
    hw_path: str | Path | None = None,
    progress: Callable[..., Iterable] | None = None,
    execution: Execution | None = None,
) -> ExperimentResult:
    """Validate, analyse every candidate, tabulate and rank.

    One point per candidate (:func:`candidate_point`) runs through ``execution`` (default:
    every core, in-process when the list is small; :mod:`wgpsim.sweeps.executor`), so a
    long list runs in parallel and resumes from a checkpoint.
    """
    cfg = parse_config(raw, source, hw_path=hw_path)
    execution = execution or Execution(progress=progress)
    names = [spec.name for spec in cfg.candidates]
    fn = partial(candidate_point, cfg, source)
    parts = execution.map(fn, names, desc="gemm_candidates", fp=fingerprint(cfg))
    out = tables_from_rows(parts)
    if cfg.drift is not None:
        add_drift(out, [r for part in parts for r in part["drift_runs"]], cfg.drift)
    return ExperimentResult(
        kind="gemm_candidates",
        name=cfg.name,
        tables=out,
        summary=GemmCandidatesSummary(config=cfg, candidates=Analyses(cfg)),
        display=display(out["results"]),
    )


__all__ = [
    "Analyses",
    "GemmCandidatesSummary",
    "GemmCandidatesConfig",
    "add_drift",
    "candidate_point",
    "candidate_rows",
    "parse_config",
    "run",
    "tables",
    "tables_from_rows",
]
