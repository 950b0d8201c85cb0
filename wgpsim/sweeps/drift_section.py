"""The optional ``drift:`` section shared by experiment kinds: partition conflicts under jitter.

``drift: {jitter_cycles: [0, 2, 8, 32], seeds: 20}`` runs each candidate's trace under the
drift model ``uniform`` at every jitter with ``seeds`` seeds (the config's ``seed`` and the
next ones) and reports the partition-conflict rate and the cycles as a mean with a confidence
interval (:mod:`wgpsim.measures.drift`). ``lds_bandwidth`` adds ``burst`` (loads per warp of
the traces, default its ``report_burst``).

>>> from pathlib import Path
>>> source = ConfigSource("x.yaml", Path("."))
>>> parse_drift({"jitter_cycles": [8, 0], "seeds": 3}, source, seed=5)
DriftSection(jitter_cycles=(0, 8), seeds=(5, 6, 7), confidence=0.95, burst=None)
>>> parse_drift({"seeds": 20, "jiter_cycles": [2]}, source, seed=0)
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: x.yaml: field 'drift.jiter_cycles': unknown field; did you mean 'jitter_cycles'?
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from wgpsim.columns import Columns
from wgpsim.extras import require
from wgpsim.hw import HardwareConfig
from wgpsim.hw.config_schema import RANGES
from wgpsim.measures.drift import DEFAULT_CONFIDENCE, drift_point, summarize_runs
from wgpsim.sweeps.config import ConfigSource, Field, check_fields
from wgpsim.sweeps.executor import Execution
from wgpsim.trace.trace import Trace

if TYPE_CHECKING:  # built only for a drift section: `wgpsim run` imports no pandas
    import pandas as pd

DRIFT_FIELDS = (
    Field(
        "jitter_cycles",
        list,
        default=[0, 2, 8, 32],
        items=int,
        doc="jitters to sweep",
        valid=RANGES["drift.jitter_cycles"],
    ),
    Field("seeds", int, default=20, doc="runs per jitter (>= 2)", valid=(2, 10_000)),
    Field(
        "confidence",
        float,
        default=DEFAULT_CONFIDENCE,
        doc="of the interval of the mean",
        valid=(0.5, 0.9999),
    ),
)
BURST_FIELD = Field(
    "burst", int, default=None, doc="loads per warp (default report_burst)", valid=(1, 4096)
)


@dataclass(frozen=True)
class DriftSection:
    """A validated ``drift:`` section: sorted jitters, the seeds themselves, the confidence."""

    jitter_cycles: tuple[int, ...]
    seeds: tuple[int, ...]
    confidence: float = DEFAULT_CONFIDENCE
    burst: int | None = None


def parse_drift(
    value: Any, source: ConfigSource, *, seed: int, burst: bool = False
) -> DriftSection | None:
    """The ``drift`` section (None when absent); ``burst`` allows the ``burst`` field."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise source.error(
            "drift", f"expected a mapping like {{jitter_cycles: [0, 8]}}, got {value!r}"
        )
    fields = (*DRIFT_FIELDS, BURST_FIELD) if burst else DRIFT_FIELDS
    d = check_fields(value, fields, source, prefix="drift.")
    jitters = tuple(sorted(set(d["jitter_cycles"])))
    if not jitters or jitters[0] < 0:
        raise source.error(
            "drift.jitter_cycles", f"{d['jitter_cycles']}: give one or more jitters >= 0 (cycles)"
        )
    if d.get("burst") is not None and d["burst"] < 1:
        raise source.error("drift.burst", f"{d['burst']} must be >= 1")
    seeds = tuple(range(seed, seed + d["seeds"]))
    confidence = float(d["confidence"])
    if confidence != DEFAULT_CONFIDENCE:  # its t quantile comes from scipy: say so before the run
        require("scipy.stats", "stats", f"confidence {confidence}")
    return DriftSection(jitters, seeds, confidence, d.get("burst"))


def drift_points(names: list[str], section: DriftSection) -> list[tuple[str, int, int]]:
    """Every ``(name, jitter, seed)``."""
    return [(n, j, s) for n in names for j in section.jitter_cycles for s in section.seeds]


def drift_tables(
    rows: list[dict[str, Any]], section: DriftSection, name: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(summary, runs)`` from :func:`~wgpsim.measures.drift.drift_point` rows, with the
    ``name`` column renamed to ``name`` (``layout``, ``candidate``)."""
    import pandas as pd

    runs = pd.DataFrame(rows)
    summary = summarize_runs(runs, section.confidence)
    return summary.rename(columns={"name": name}), runs.rename(columns={"name": name})


def run_drift(
    execution: Execution,
    traces: Mapping[str, Trace],
    hw: HardwareConfig,
    engine: str,
    section: DriftSection,
    *,
    name: str,
    desc: str,
    fp: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every (trace, jitter, seed) through ``execution`` (sweep ``desc``, fingerprint ``fp``);
    :func:`drift_tables` of the rows."""
    fn = partial(drift_point, dict(traces), hw, engine)
    rows = execution.map(fn, drift_points(list(traces), section), desc=desc, fp=fp)
    return drift_tables(rows, section, name)


def drift_display(summary: pd.DataFrame, name: str) -> Columns:
    """The drift summary as ``wgpsim run`` prints it: per ``name`` and jitter, the
    partition-conflict rate and the cycles, each a mean with its confidence interval.

    >>> import pandas as pd
    >>> row = dict(layout="plain", jitter_cycles=8, seeds=20, conflict_rate=0.97,
    ...     conflict_rate_ci_low=0.964, conflict_rate_ci_high=0.977, cycles=324.6,
    ...     cycles_ci_low=324.04, cycles_ci_high=325.16)
    >>> drift_display(pd.DataFrame([row]), "layout").rows()[0]["conflict rate"]
    '97.0 % [96.4, 97.7]'
    """
    rows = summary.to_dict(orient="records")
    return Columns(
        {
            name: tuple(r[name] for r in rows),
            "jitter cycles": tuple(str(r["jitter_cycles"]) for r in rows),
            "seeds": tuple(str(r["seeds"]) for r in rows),
            "conflict rate": tuple(
                f"{100 * r['conflict_rate']:.1f} % "
                f"[{100 * r['conflict_rate_ci_low']:.1f}, {100 * r['conflict_rate_ci_high']:.1f}]"
                for r in rows
            ),
            "cycles": tuple(
                f"{r['cycles']:.1f} [{r['cycles_ci_low']:.1f}, {r['cycles_ci_high']:.1f}]"
                for r in rows
            ),
        }
    )


DRIFT_TITLE = "partition conflicts under drift (mean [{:g} % interval])"
"""The title of :func:`drift_display`'s table, formatted with the confidence in percent."""


__all__ = [
    "DRIFT_FIELDS",
    "DRIFT_TITLE",
    "DriftSection",
    "drift_display",
    "drift_points",
    "drift_tables",
    "parse_drift",
    "run_drift",
]
