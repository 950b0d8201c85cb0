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
the seed does (``wgpsim.analysis.candidates.auto_partition``). Shared-layout specs, per operand:

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

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from wgpsim.analysis.candidates import (
    OPERANDS,
    Gemm,
)
from wgpsim.analysis.gemm import CandidateAnalysis, CandidateSpec, OperandAnalysis, analyse
from wgpsim.analysis.ranking import rank
from wgpsim.engine import Result
from wgpsim.errors import AllocationError, LayoutError, TraceError
from wgpsim.experiments import ExperimentResult, register_kind
from wgpsim.experiments.config import ConfigSource, Field, check_fields, load_hardware_for
from wgpsim.hw import HardwareConfig
from wgpsim.layout.distributed import AMDWMMALayout
from wgpsim.layout.dtypes import DTYPE_BITS
from wgpsim.layout.notation import parse_any, to_text

FIELDS = (
    Field("kind", str),
    Field("hardware", str, default=None, doc="hardware YAML, relative to the config file"),
    Field("hardware_overrides", dict, default={}, doc="changes to the hardware YAML"),
    Field("block", list, items=int, doc="[BLOCK_M, BLOCK_N, BLOCK_K]"),
    Field("dtype", str, default="fp16", choices=tuple(DTYPE_BITS)),
    Field("warps", int, choices=(4, 8)),
    Field("instr_shape", list, items=int, doc="WMMA [M, N, K]"),
    Field("k_width", int, default=8, doc="dot operand kWidth"),
    Field("transposed", bool, default=False, doc="WMMA result layout transposed"),
    Field("a_k_contiguous", bool, default=True, doc="A stored K-fastest (order [1, 0])"),
    Field("b_k_contiguous", bool, default=False, doc="B stored K-fastest (order [0, 1])"),
    Field("cacheline_bytes", int, doc="global-memory cacheline (seed: 128 bytes)"),
    Field("candidates", dict, doc="name -> {cta_layout, a, b}"),
    Field("engine", str, default="des"),
    Field("seed", int, default=0),
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


# ------------------------------------------------------------------------------ config
def parse_config(
    raw: dict[str, Any], source: ConfigSource, *, hw_path: str | Path | None = None
) -> GemmCandidatesConfig:
    """Validate ``raw`` into a config; every candidate's spec is checked before any work."""
    cfg = check_fields(raw, FIELDS, source)
    hw = load_hardware_for(cfg["hardware"], cfg["hardware_overrides"], source, hw_path=hw_path)
    for name, n in (("block", 3), ("instr_shape", 3)):
        if len(cfg[name]) != n:
            raise source.error(name, f"{cfg[name]} must have {n} entries")
    if cfg["cacheline_bytes"] < 1:
        raise source.error("cacheline_bytes", f"{cfg['cacheline_bytes']} must be >= 1")
    gemm = Gemm(
        tuple(cfg["block"]),
        cfg["dtype"],
        cfg["warps"],
        tuple(cfg["instr_shape"]),
        cfg["k_width"],
        cfg["a_k_contiguous"],
        cfg["b_k_contiguous"],
        cfg["transposed"],
    )
    if not cfg["candidates"]:
        raise source.error("candidates", "no candidates; name at least one")
    specs = tuple(_candidate(str(name), spec, source) for name, spec in cfg["candidates"].items())
    return GemmCandidatesConfig(
        Path(source.name).stem, hw, gemm, cfg["cacheline_bytes"], specs, cfg["engine"], cfg["seed"]
    )


def _candidate(name: str, raw: Any, source: ConfigSource) -> CandidateSpec:
    where = f"candidates.{name}"
    if not isinstance(raw, dict):
        raise source.error(where, f"expected a mapping with cta_layout, a, b; got {raw!r}")
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
    shared = tuple(_shared_spec(cfg[op], f"{where}.{op}", source) for op in OPERANDS)
    return CandidateSpec(
        name, tuple(map(tuple, warp)), tuple(map(tuple, register)), shared, cfg["note"]
    )


PARTITIONED_FIELDS = (
    Field("num_partitions", int),
    Field("num_groups", int),
    Field("partition_dim", int),
    Field("partition_layout", (str, dict), default={"swizzled": {}}),
)


def _shared_spec(value: Any, where: str, source: ConfigSource, *, inner: bool = False) -> Any:
    """Check a shared-layout spec's form (building it needs the shape, see `build_shared`)."""
    if value == "swizzled":
        return {"swizzled": {}}
    kinds = set(value) & set(SHARED_KINDS) if isinstance(value, dict) else set()
    if len(kinds) != 1:
        try:
            return parse_any(value)
        except LayoutError as err:
            raise source.error(
                where, f"{err}; or use swizzled, {{padded: [[I, P]]}}, {{partitioned: auto}}"
            ) from None
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
        raise source.error(where, f"partitioned: expected 'auto' or a mapping, got {value[kind]!r}")
    fields = check_fields(value[kind], PARTITIONED_FIELDS, source, prefix=f"{where}.partitioned.")
    fields["partition_layout"] = _inner(fields["partition_layout"], where, source)
    return {kind: fields}


def _inner(value: Any, where: str, source: ConfigSource) -> Any:
    return _shared_spec(value, f"{where}.partition_layout", source, inner=True)


# ------------------------------------------------------------------------------ tables
def _bases_text(bases: tuple[tuple[int, ...], ...]) -> str:
    return str([list(b) for b in bases])


def _cycles(result: Result) -> dict[str, Any]:
    cycles = int(result.measurement())
    return {
        "cycles": cycles,
        "bytes": int(result.bytes),
        "bytes_per_cycle": float(result.bytes) / cycles,
        "partition_conflict_cycles": int(sum(result.partition_stall_cycles.values())),
        "bank_conflict_cycles": int(result.bank_conflict_cycles),
    }


def operand_row(c: CandidateAnalysis, o: OperandAnalysis) -> dict[str, Any]:
    """One operand of one candidate (the ``operands`` table; ``a_``/``b_`` in the main one)."""
    p = o.pieces
    return {
        "shared": to_text(o.shared),
        "partitioned_auto": o.auto is not None,
        "co_located": bool(o.co_located),
        "co_located_instructions": len(o.co_located),
        "same_partition": bool(o.same_partition),
        "same_partition_instructions": len(o.same_partition),
        "lockstep_conflict_loads": len(o.lockstep_overlaps),
        "pieces": p.num_pieces,
        "num_partitions": p.num_partitions,
        "num_groups": p.num_groups,
        "partition_dim": p.partition_dim,
        "piece_shape": list(p.piece_shape),
        "tdm_instructions": p.tdm_instructions,
        "tdm_instructions_triton": p.tdm_instructions_triton,
        "piece_row_bytes": p.row_bytes,
        "cacheline_use": p.cacheline_use,
        "offsets": list(o.bases),
        "load": o.lowering.instruction,
        "loads_per_warp": o.lowering.num_instructions,
        "load_eligibility": o.lowering.eligibility,
        **_cycles(o.result),
    }


def tables(analyses: list[CandidateAnalysis]) -> dict[str, pd.DataFrame]:
    """``results`` (one row per candidate, ranked), ``operands``, ``instructions`` (who reads
    which band, piece and partitions in each WMMA instruction), ``loads`` (every local_load
    instruction of one K step: warp, pair, LDS partitions, lowest address) and ``allocation``."""
    main, ops, instr, alloc, loads = [], [], [], [], []
    for c in analyses:
        row: dict[str, Any] = {
            "candidate": c.spec.name,
            "cta_register": _bases_text(c.wmma.reg_bases),
            "cta_warp": _bases_text(c.wmma.warp_bases),
            **_cycles(c.result),
            "tdm_instructions": sum(o.pieces.tdm_instructions for o in c.operands),
            "lds_bytes": int(c.allocation.size),
        }
        for o in c.operands:
            fields = operand_row(c, o)
            row.update({f"{OPERANDS[o.op]}_{k}": v for k, v in fields.items()})
            ops.append({"candidate": c.spec.name, "operand": OPERANDS[o.op], **fields})
            band = c.tiles[..., o.op]
            for r in range(band.shape[0]):
                for w in range(band.shape[1]):
                    b = int(band[r, w])
                    instr.append(
                        {
                            "candidate": c.spec.name,
                            "operand": OPERANDS[o.op],
                            "instruction": r,
                            "warp": w,
                            "pair": c.pairs[w],
                            "tile_row": int(c.tiles[r, w, 0]),
                            "tile_col": int(c.tiles[r, w, 1]),
                            "band": b,
                            "pieces": list(o.band_pieces[b]),
                            "partitions": list(o.band_partitions[b]),
                        }
                    )
            loads.extend(_loads(c, o))
        main.append(row)
        frame = c.allocation.to_frame()
        frame.insert(0, "candidate", c.spec.name)
        frame["partitions"] = frame["partitions"].map(list)
        alloc.append(frame)
    places = {n: (p, why) for n, p, why in rank(main)}
    for row in main:
        row["rank"], row["rank_reason"] = places[row["candidate"]]
    table = _frame(main, ("a_partition_dim", "b_partition_dim"))
    table = table.sort_values("rank", kind="stable").reset_index(drop=True)
    first = ["candidate", "rank"]
    table = table[first + [c for c in table.columns if c not in first]]
    return {
        "results": table,
        "operands": _frame(ops, ("partition_dim",)),
        "instructions": pd.DataFrame(instr),
        "loads": pd.DataFrame(loads),
        "allocation": pd.concat(alloc, ignore_index=True),
    }


def _loads(c: CandidateAnalysis, o: OperandAnalysis) -> list[dict[str, Any]]:
    low, size = o.lowering, c.allocation.partition_size
    rows = []
    for w in range(low.num_warps):
        for k in range(low.num_instructions):
            lanes = low.addresses[w, k]
            lanes = lanes[lanes >= 0]
            rows.append(
                {
                    "candidate": c.spec.name,
                    "operand": OPERANDS[o.op],
                    "warp": w,
                    "pair": c.pairs[w],
                    "load": k,
                    "instruction": low.instruction,
                    "partitions": sorted({int(p) for p in lanes // size}),
                    "min_address": int(lanes.min()),
                    "lockstep_conflict": k in o.lockstep_overlaps,
                }
            )
    return rows


def _frame(rows: list[dict[str, Any]], nullable: tuple[str, ...]) -> pd.DataFrame:
    """A DataFrame whose ``nullable`` columns keep ints and None (not floats and NaN)."""
    frame = pd.DataFrame(rows)
    for col in nullable:
        frame[col] = pd.Series([r[col] for r in rows], dtype=object)
    return frame


def display(table: pd.DataFrame) -> pd.DataFrame:
    """The main table for people: per operand, whether the SIMD pairs read the same bytes, the
    same physical partition, or neither (``apart``), and its pieces (count [shape] groups)."""

    def pairs(row: pd.Series, op: str) -> str:
        if row[f"{op}_co_located"]:
            return "same bytes"
        return "same partition" if row[f"{op}_same_partition"] else "apart"

    def pieces(row: pd.Series, op: str) -> str:
        shape = "x".join(str(s) for s in row[f"{op}_piece_shape"])
        return f"{row[f'{op}_pieces']} [{shape}] g{row[f'{op}_num_groups']}"

    def loads(row: pd.Series) -> str:
        return "+".join(
            f"{row[f'{op}_loads_per_warp']} {row[f'{op}_load'].removeprefix('ds_load_')}"
            for op in OPERANDS
        )

    rows = [r for _, r in table.iterrows()]
    out = {
        "candidate": table["candidate"],
        "#": table["rank"],
        "cycles": table["cycles"],
        "part. stalls": table["partition_conflict_cycles"],
        "bank confl.": table["bank_conflict_cycles"],
        "TDM": table["tdm_instructions"],
        "LDS KiB": table["lds_bytes"].map(lambda b: f"{b / 1024:.1f}"),
        "A pairs": [pairs(r, "a") for r in rows],
        "A pieces": [pieces(r, "a") for r in rows],
        "B pairs": [pairs(r, "b") for r in rows],
        "B pieces": [pieces(r, "b") for r in rows],
        "loads/warp": [loads(r) for r in rows],
        "why": table["rank_reason"],
    }
    return pd.DataFrame(out)


@register_kind("gemm_candidates")
def run(
    raw: dict[str, Any],
    source: ConfigSource,
    *,
    hw_path: str | Path | None = None,
    progress: Callable[..., Iterable] | None = None,
) -> ExperimentResult:
    """Validate, analyse every candidate, tabulate and rank."""
    cfg = parse_config(raw, source, hw_path=hw_path)
    wrap = progress or (lambda items, **_: items)
    analyses = []
    for spec in wrap(cfg.candidates, total=len(cfg.candidates), desc="gemm_candidates"):
        try:
            analyses.append(
                analyse(
                    cfg.gemm,
                    cfg.hw,
                    spec,
                    cacheline_bytes=cfg.cacheline_bytes,
                    engine=cfg.engine,
                    seed=cfg.seed,
                )
            )
        except (LayoutError, AllocationError, TraceError) as err:
            raise source.error(f"candidates.{spec.name}", str(err)) from None
    out = tables(analyses)
    return ExperimentResult(
        kind="gemm_candidates",
        name=cfg.name,
        tables=out,
        summary={"config": cfg, "candidates": {a.spec.name: a for a in analyses}},
        display=display(out["results"]),
    )


__all__ = [
    "GemmCandidatesConfig",
    "parse_config",
    "run",
    "tables",
]
