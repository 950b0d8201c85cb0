"""The seed's LDS bandwidth microbenchmark, from a YAML config (``kind: lds_bandwidth``).

Each warp reads its own row of a ``[warps, N]`` tensor out of LDS with ``burst`` back-to-back
loads (``N = burst x 32 lanes x elements per lane``), between a barrier + clock read and a wait +
barrier + clock read. For every shared-layout candidate and burst length the tensor goes through
the layout engine (per-lane addresses), the allocator (where its buffers live) and the trace
generator, and a timing engine replays the trace. The measurement is the largest per-warp clock
difference; the steady-state fit ``cycles = fixed + bytes / rate`` over the bursts separates the
rate from the fixed cost (seed, "Steady-state bandwidth").

The figure (B/cycle against burst length) is drawn by ``wgpsim.plots.bandwidth`` from
``result.tables["sweep"]`` and ``result.summary``, an :class:`LdsBandwidthSummary` (plots sit
above this layer).

An optional ``drift: {jitter_cycles: [0, 2, 8, 32], seeds: 20, burst: 32}`` section replays
each candidate's trace at ``burst`` (default ``report_burst``) under random issue jitter, one
point per (layout, jitter, seed), and adds the tables ``drift`` (partition-conflict rate and
cycles per layout and jitter: mean and confidence interval, :mod:`wgpsim.measures.drift`) and
``drift_runs`` (one row per run); ``wgpsim.plots.drift`` draws ``conflict_rate_vs_jitter``.

The peak of a candidate (at ``report_burst``) is its port ceiling,
:func:`wgpsim.measures.ports.peak_bytes_per_cycle`: the bytes one pass moves times the ports its
pairs' passes could be granted on in the same cycle at best.

>>> from wgpsim.experiments import run_experiment
>>> config = Path(__file__).parents[2] / "configs" / "lds_bandwidth.yaml"
>>> result = run_experiment(config, overrides=["burst_lengths=[8, 16, 32]"])
>>> result.display[["layout", "cycles", "LDS", "steady B/cycle", "peak B/cycle"]]
        layout cycles     LDS steady B/cycle peak B/cycle
0        plain    323  64 KiB          256.0          256
1  partitioned    195  96 KiB          512.0          512
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from wgpsim.columns import Columns
from wgpsim.engine import ENGINES, simulate
from wgpsim.errors import AllocationError, ConfigError, LayoutError, TraceError
from wgpsim.hw import HardwareConfig
from wgpsim.hw.alloc import Allocation, allocate_on, tensor_buffers
from wgpsim.layout.addresses import local_load_encodings
from wgpsim.layout.dtypes import DTYPE_BITS, dtype_bytes
from wgpsim.layout.notation import parse_any
from wgpsim.layout.shared import for_shape
from wgpsim.measures.fit import SteadyStateFit
from wgpsim.measures.ports import peak_bytes_per_cycle
from wgpsim.microbench.bandwidth_tables import display, fit_notes, kib, summarize
from wgpsim.microbench.kernels import layout_microbenchmark
from wgpsim.microbench.on_target import on_target
from wgpsim.sweeps.config import (
    KIND_AND_HARDWARE,
    SEED_RANGE,
    ConfigSource,
    Field,
    check_fields,
    check_names,
    load_hardware_for,
    unknown_message,
)
from wgpsim.sweeps.drift_section import (
    DRIFT_TITLE,
    DriftSection,
    drift_display,
    parse_drift,
    run_drift,
)
from wgpsim.sweeps.executor import Execution, fingerprint
from wgpsim.sweeps.kinds import ExperimentResult, register_kind
from wgpsim.trace.instructions import INSTRUCTIONS
from wgpsim.trace.trace import Trace

FIELDS = (
    *KIND_AND_HARDWARE,
    Field("warps", int, default=4, valid=(1, 32)),
    Field("dtype", str, default="fp16", choices=tuple(DTYPE_BITS)),
    Field("instruction", str, default="ds_load_b128"),
    Field("burst_lengths", list, items=int, doc="loads per warp to sweep", valid=(1, 4096)),
    Field("report_burst", int, doc="the burst the table reports", valid=(1, 4096)),
    Field("distributed", (str, dict), doc="distributed layout of the load"),
    Field("layouts", dict, doc="shared-layout candidates by name"),
    Field(
        "engine",
        str,
        default="auto",
        choices=ENGINES,
        doc="fast matches des cycle for cycle; auto: des for small sweeps (nothing to compile)",
    ),
    Field("seed", int, default=0, valid=SEED_RANGE),
    Field("drift", dict, default=None, doc="{jitter_cycles, seeds, burst}: conflicts under drift"),
)


@dataclass(frozen=True)
class LdsBandwidthConfig:
    """A validated ``lds_bandwidth`` config: parsed layouts, loaded hardware, sorted bursts."""

    name: str
    hw: HardwareConfig
    warps: int
    dtype: str
    elem_bytes: int
    instruction: str
    burst_lengths: tuple[int, ...]
    report_burst: int
    distributed: Any
    layouts: dict[str, Any]
    engine: str
    seed: int
    drift: DriftSection | None = None
    #: what the run changed to fit the target (`wgpsim.microbench.on_target`), a line each
    target_notes: tuple[str, ...] = ()

    @property
    def vec(self) -> int:
        """Elements one lane loads per instruction."""
        return INSTRUCTIONS[self.instruction].bytes_per_lane // self.elem_bytes

    def shape(self, burst: int) -> tuple[int, int]:
        """``[warps, N]``: one row per warp, ``burst`` loads of ``wgp.warp_size`` lanes x
        ``vec`` elements."""
        return (self.warps, burst * self.hw.wgp.warp_size * self.vec)


@dataclass(frozen=True)
class LdsBandwidthSummary:
    """What the plots and notebooks read besides the tables: the parsed config, each
    candidate's steady-state fit and its port ceiling (B/cycle) at ``report_burst``."""

    config: LdsBandwidthConfig
    fits: Mapping[str, SteadyStateFit]
    peaks: Mapping[str, float]


@dataclass(frozen=True)
class Case:
    """One candidate at one burst length, ready to simulate."""

    layout: str
    burst: int
    shape: tuple[int, int]
    allocation: Allocation
    trace: Trace


def parse_config(
    raw: dict[str, Any], source: ConfigSource, *, hw_path: str | Path | None = None
) -> LdsBandwidthConfig:
    """Validate ``raw`` (fields, hardware, instruction, layouts) into a config; every problem
    found is reported at once (``source.problems``)."""
    cfg = check_fields(raw, FIELDS, source, collect=True)
    hw = instr = bursts = distributed = drift = None
    layouts: dict[str, Any] = {}
    with source.check():
        hw = load_hardware_for(cfg["hardware"], cfg["hardware_overrides"], source, hw_path=hw_path)
    with source.check():
        instr = _load_instruction(cfg, source)
    with source.check():
        bursts = tuple(sorted(set(cfg["burst_lengths"])))
        if len(bursts) < 2:
            raise source.error(
                "burst_lengths",
                f"{cfg['burst_lengths']}: need at least 2 distinct burst lengths >= 1 for the fit",
            )
        if cfg["report_burst"] not in bursts:
            raise source.error(
                "report_burst", f"{cfg['report_burst']} is not among burst_lengths {list(bursts)}"
            )
    with source.check():
        distributed = _parse_layout(cfg["distributed"], "distributed", source)
    with source.check():
        if not cfg["layouts"]:
            raise source.error("layouts", "no candidates; name at least one shared layout")
        check_names(cfg["layouts"], "layouts", source)
    for name, spec in cfg.get("layouts", {}).items():
        with source.check():
            layouts[str(name)] = _parse_layout(spec, f"layouts.{name}", source)
            if distributed is not None:  # a register layout as a candidate, or the reverse
                try:
                    names = ("distributed", f"layouts.{name}")
                    local_load_encodings(distributed, layouts[str(name)], names)
                except LayoutError as err:
                    raise ConfigError(f"{source.name}: {err}") from None
    with source.check():
        # (a bad seed is reported already; the section is checked all the same)
        drift = parse_drift(cfg["drift"], source, seed=cfg.get("seed", 0), burst=True)
    source.problems.raise_any()
    if drift is not None and drift.burst is None:
        drift = replace(drift, burst=cfg["report_burst"])
    parsed = LdsBandwidthConfig(
        name=Path(source.name).stem,
        hw=hw,
        warps=cfg["warps"],
        dtype=cfg["dtype"],
        elem_bytes=dtype_bytes(cfg["dtype"]),
        instruction=instr.name,
        burst_lengths=bursts,
        report_burst=cfg["report_burst"],
        distributed=distributed,
        layouts=layouts,
        engine=cfg["engine"],
        seed=cfg["seed"],
        drift=drift,
    )
    try:
        parsed, notes = on_target(parsed)
    except ConfigError as err:
        raise source.error("layouts", str(err)) from None
    return replace(parsed, target_notes=notes)


def _load_instruction(cfg: Mapping[str, Any], source: ConfigSource) -> Any:
    """The config's load instruction, which must load whole elements of its dtype."""
    instr = INSTRUCTIONS.get(cfg["instruction"])
    loads = [n for n, i in INSTRUCTIONS.items() if i.kind == "load"]
    if instr is None or instr.kind != "load":
        raise source.error(
            "instruction",
            unknown_message(cfg["instruction"], loads, f"load instruction '{cfg['instruction']}'"),
        )
    elem_bytes = dtype_bytes(cfg["dtype"])
    if instr.bytes_per_lane % elem_bytes:
        raise source.error(
            "instruction",
            f"{instr.name} loads {instr.bytes_per_lane} B per lane, not a multiple of "
            f"{cfg['dtype']} ({elem_bytes} B); pick a wider load or a narrower dtype",
        )
    return instr


def _parse_layout(spec: Any, field: str, source: ConfigSource) -> Any:
    try:
        return parse_any(spec)
    except LayoutError as err:
        raise source.error(field, str(err)) from None


def prepare(cfg: LdsBandwidthConfig, layout: str, burst: int) -> Case:
    """Addresses, allocation and trace of candidate ``layout`` at ``burst`` loads per warp."""
    shape = cfg.shape(burst)
    shared = for_shape(cfg.layouts[layout], shape)
    buffers = tensor_buffers(layout, shared, shape, cfg.elem_bytes)
    allocation = allocate_on(cfg.hw, buffers)
    bases = allocation.offsets_of(layout)
    trace = layout_microbenchmark(
        cfg.distributed,
        shared,
        shape,
        cfg.elem_bytes,
        bases if len(bases) > 1 else bases[0],
        cfg.instruction,
        lds_bytes=cfg.hw.partitions.lds_bytes,
    )
    return Case(layout, burst, shape, allocation, trace)


def check_cases(cfg: LdsBandwidthConfig, source: ConfigSource) -> dict[str, Case]:
    """Check every (candidate, burst) before the sweep; return each candidate's smallest case.

    A layout or size that cannot work is a ConfigError naming the field, raised before any point
    runs: the allocation and both layouts are checked at every burst (cheap), and the smallest
    burst of each candidate is prepared whole (its trace gives the warp count and the peak).
    """
    first = {}
    for layout, named in cfg.layouts.items():
        with source.check():  # every candidate's problem is reported
            for burst in cfg.burst_lengths:
                shape = cfg.shape(burst)
                try:
                    shared = for_shape(named, shape)
                    allocate_on(cfg.hw, tensor_buffers(layout, shared, shape, cfg.elem_bytes))
                    shared.to_linear_layout(shape)
                    cfg.distributed.to_linear_layout(shape)
                    if burst == cfg.burst_lengths[0]:
                        first[layout] = prepare(cfg, layout, burst)
                except AllocationError as err:
                    tensor = kib(int(np.prod(shape)) * cfg.elem_bytes)
                    if burst == cfg.burst_lengths[0]:
                        raise source.error(
                            f"layouts.{layout}",
                            f"does not fit in the LDS even at burst {burst} ({tensor} tensor): {err}",
                        ) from None
                    raise source.error(
                        "burst_lengths",
                        f"burst {burst} ({tensor} tensor) does not fit in the LDS with layout "
                        f"'{layout}': {err}",
                    ) from None
                except (LayoutError, TraceError) as err:
                    said = str(err)  # the layout layer may already name the shape
                    if not said.startswith(f"shape {list(shape)}"):
                        said = f"shape {list(shape)}: {said}"
                    raise source.error(f"layouts.{layout}", said) from None
            if first[layout].trace.num_warps != cfg.warps:
                raise source.error(
                    "distributed",
                    f"its layout has {first[layout].trace.num_warps} warps but warps is "
                    f"{cfg.warps}; make warpsPerCTA multiply to {cfg.warps}",
                )
    source.problems.raise_any()
    return first


def drift_traces(cfg: LdsBandwidthConfig, burst: int, source: ConfigSource) -> dict[str, Trace]:
    """Each candidate's trace at ``burst`` loads per warp, for the drift section (a ConfigError
    naming ``drift.burst`` if one does not fit)."""
    try:
        return {layout: prepare(cfg, layout, burst).trace for layout in cfg.layouts}
    except (AllocationError, LayoutError, TraceError) as err:
        raise source.error("drift.burst", f"{burst}: {err}") from None


def measure(cfg: LdsBandwidthConfig, case: Case) -> dict[str, Any]:
    """Simulate one case: the sweep row (cycles, B/cycle, conflict counters)."""
    result = simulate(case.trace, cfg.hw, engine=cfg.engine, seed=cfg.seed)
    cycles = int(result.measurement())
    nbytes = int(result.bytes)
    return {
        "layout": case.layout,
        "burst": case.burst,
        "bytes": nbytes,
        "cycles": cycles,
        "raw_bytes_per_cycle": nbytes / cycles,
        "partition_conflict_cycles": int(sum(result.partition_stall_cycles.values())),
        "bank_conflict_cycles": int(result.bank_conflict_cycles),
        "passes": int(result.passes),
        "lds_bytes": int(case.allocation.size),
    }


def measure_point(cfg: LdsBandwidthConfig, point: tuple[str, int]) -> dict[str, Any]:
    """One sweep point, ``(layout, burst)``: prepare and simulate it (the executor's ``fn``)."""
    layout, burst = point
    return measure(cfg, prepare(cfg, layout, burst))


@register_kind("lds_bandwidth")
def run(
    raw: dict[str, Any],
    source: ConfigSource,
    *,
    hw_path: str | Path | None = None,
    progress: Callable[..., Iterable] | None = None,
    execution: Execution | None = None,
) -> ExperimentResult:
    """Validate, sweep every candidate over the burst lengths, fit, tabulate and plot.

    The sweep's points, ``(layout, burst)``, and the drift section's ``(layout, jitter,
    seed)`` run through ``execution`` (default: every core, in-process when the sweep is small;
    see :mod:`wgpsim.sweeps.executor`).
    """
    cfg = parse_config(raw, source, hw_path=hw_path)
    first = check_cases(cfg, source)
    traces = drift_traces(cfg, cfg.drift.burst, source) if cfg.drift else {}
    peaks = {  # at the reported burst: a longer row may reach more partitions
        layout: peak_bytes_per_cycle(prepare(cfg, layout, cfg.report_burst).trace, cfg.hw)
        for layout in first
    }
    execution = execution or Execution(progress=progress)
    points = [(layout, burst) for layout in cfg.layouts for burst in cfg.burst_lengths]
    fn = partial(measure_point, cfg)
    rows = execution.map(fn, points, desc="lds_bandwidth", fp=fingerprint(cfg))
    sweep = Columns.from_rows(rows)
    try:
        table, fits = summarize(cfg.report_burst, sweep, peaks)
    except ConfigError as err:  # found only once the sweep measured the bytes
        raise source.error("burst_lengths", str(err)) from None
    tables = {
        "results": table,
        "sweep": sweep,
        "fit": Columns.from_rows([{"layout": k, **f.to_dict()} for k, f in fits.items()]),
    }
    headlines = ()
    if cfg.drift is not None:
        tables["drift"], tables["drift_runs"] = run_drift(
            execution,
            traces,
            cfg.hw,
            cfg.engine,
            cfg.drift,
            name="layout",
            desc="lds_bandwidth.drift",
            fp=fingerprint(cfg),
        )
        title = DRIFT_TITLE.format(100 * cfg.drift.confidence)
        headlines = ((title, drift_display(tables["drift"], "layout")),)
    return ExperimentResult(
        kind="lds_bandwidth",
        name=cfg.name,
        tables=tables,
        summary=LdsBandwidthSummary(config=cfg, fits=fits, peaks=peaks),
        notes=(*cfg.target_notes, *fit_notes(fits, cfg.warps)),
        display=display(table),
        headlines=headlines,
    )


__all__ = [
    "Case",
    "LdsBandwidthConfig",
    "check_cases",
    "drift_traces",
    "measure",
    "measure_point",
    "parse_config",
    "prepare",
    "run",
    "summarize",
    "LdsBandwidthSummary",
]
