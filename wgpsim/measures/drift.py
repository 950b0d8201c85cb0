"""Partition conflicts under drift: a rate over seeds, with a confidence interval.

A bank conflict is a property of one pass; a partition conflict is a property of two passes in
the same cycle, so it depends on timing (seed, Note in Part II: "in practice it drives its
probability down rather than strictly to zero"). The engines' drift model ``uniform`` delays
every trace row by 0..``jitter_cycles`` cycles drawn from ``default_rng(seed)``; each seed is
one possible drift. Over ``seeds`` runs, :func:`conflict_rate` reports the partition-conflict
rate, partition-stall cycles per pass (a pair stalled one cycle on a partition in use is one
stall cycle), and the simulated cycles (the clock reads' span), each as a mean with its sample
standard deviation and a Student-t confidence interval of the mean,
``mean +- t(1 - (1 - confidence) / 2, n - 1) x std / sqrt(n)``.

Four warps each read 8 x 256 B with ``ds_load_b64``; in ``shared`` every row lies in partition
0, in ``apart`` pair A's rows (warps 0 and 2) lie in partition 0 and pair B's in partition 1:

>>> import numpy as np
>>> from wgpsim.hw import load_hardware
>>> from wgpsim.trace.trace import TraceBuilder
>>> def rows(partition_of_pair):
...     b = TraceBuilder(num_warps=4)
...     b.barrier()
...     for w in range(4):
...         base = partition_of_pair[w % 2] * 65536 + w * 4096
...         b.clock(w, "start")
...         b.loads(w, "ds_load_b64", base + np.arange(8)[:, None] * 256 + np.arange(32) * 8)
...         b.wait_ds(w, 0)
...         b.clock(w, "end")
...     return b.build()
>>> hw = load_hardware()
>>> lockstep = conflict_rate(rows((0, 0)), hw, jitter_cycles=0, seeds=3)
>>> lockstep.conflict_rate.mean, lockstep.conflict_rate.std, lockstep.cycles.mean
(0.96875, 0.0, 92.0)
>>> drift = conflict_rate(rows((0, 0)), hw, jitter_cycles=32, seeds=5)
>>> drift.conflict_rate.low <= drift.conflict_rate.mean <= drift.conflict_rate.high
True
>>> drift.conflict_rate.mean < lockstep.conflict_rate.mean
True
>>> conflict_rate(rows((0, 1)), hw, jitter_cycles=32, seeds=5).conflict_rate.high
0.0
>>> drift.runs.columns.tolist()
['seed', 'partition_stall_cycles', 'passes', 'conflict_rate', 'cycles']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from wgpsim.engine import Result, simulate
from wgpsim.errors import ConfigError, TraceError
from wgpsim.extras import require
from wgpsim.hw import HardwareConfig
from wgpsim.trace.trace import Trace

if TYPE_CHECKING:  # tables are built where asked for: `wgpsim run` imports no pandas
    import pandas as pd

DEFAULT_CONFIDENCE = 0.95

#: Student t quantiles t(0.975, df), two-sided 95 %, for df 1..30, 40, 60, 120 (scipy.stats.t);
#: between them (and toward the normal quantile at df = inf) interpolated linearly in 1 / df,
#: within 3e-5 relative of the exact value for every df.
_T975 = {
    **dict(
        enumerate(
            (
                12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624,
                2.306004, 2.262157, 2.228139, 2.200985, 2.178813, 2.160369, 2.144787,
                2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963, 2.079614,
                2.073873, 2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407,
                2.045230, 2.042272,
            ),
            start=1,
        )
    ),
    40: 2.021075,
    60: 2.000298,
    120: 1.979930,
}  # fmt: skip
_Z975 = 1.959964  # the normal quantile, df = inf

#: Columns of one run (``DriftEstimate.runs``).
RUN_COLUMNS = ("seed", "partition_stall_cycles", "passes", "conflict_rate", "cycles")


def t_quantile(confidence: float, df: int) -> float:
    """The two-sided Student t quantile ``t(1 - (1 - confidence) / 2, df)``.

    95 % comes from a table (no scipy import); other levels from ``scipy.stats.t.ppf``.

    >>> round(t_quantile(0.95, 4), 4), round(t_quantile(0.95, 10**6), 3)
    (2.7764, 1.96)
    """
    if df < 1:
        raise ConfigError(f"seeds: a confidence interval needs df >= 1, got {df}; use >= 2 seeds")
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence: {confidence} must lie strictly between 0 and 1")
    if confidence != DEFAULT_CONFIDENCE:
        stats = require("scipy.stats", "stats", f"confidence {confidence}")  # 0.9 s import
        return float(stats.t.ppf(1 - (1 - confidence) / 2, df))
    if df in _T975:
        return _T975[df]
    inv = np.array([0.0, *(1 / d for d in sorted(_T975, reverse=True))])
    values = np.array([_Z975, *(_T975[d] for d in sorted(_T975, reverse=True))])
    return float(np.interp(1 / df, inv, values))


@dataclass(frozen=True)
class MeanCI:
    """The mean of ``n`` values, their sample standard deviation (ddof 1) and the Student-t
    confidence interval ``[low, high]`` of the mean.

    >>> MeanCI.of([1.0, 2.0, 3.0])
    MeanCI(mean=2.0, std=1.0, low=-0.484..., high=4.484..., n=3, confidence=0.95)
    """

    mean: float
    std: float
    low: float
    high: float
    n: int
    confidence: float = DEFAULT_CONFIDENCE

    @classmethod
    def of(cls, values: Iterable[float], confidence: float = DEFAULT_CONFIDENCE) -> MeanCI:
        """The estimate from at least two values."""
        x = np.asarray(list(values), dtype=float)
        if x.size < 2:
            raise ConfigError(
                f"seeds: {x.size} run(s) give no confidence interval; use at least 2 seeds"
            )
        mean, std = float(x.mean()), float(x.std(ddof=1))
        if np.all(x == x[0]):  # exactly, not up to rounding: lock step gives one value
            mean, std = float(x[0]), 0.0
        half = t_quantile(confidence, x.size - 1) * std / math.sqrt(x.size)
        return cls(mean, std, mean - half, mean + half, int(x.size), confidence)


@dataclass(frozen=True, eq=False)
class DriftEstimate:
    """One trace under one jitter over several seeds: the partition-conflict rate (stall
    cycles per pass) and the simulated cycles, each a :class:`MeanCI`; ``runs`` has one row per
    seed (:data:`RUN_COLUMNS`)."""

    jitter_cycles: int
    conflict_rate: MeanCI
    cycles: MeanCI
    runs: pd.DataFrame = field(repr=False)

    @classmethod
    def from_runs(
        cls, runs: pd.DataFrame, jitter_cycles: int, confidence: float = DEFAULT_CONFIDENCE
    ) -> DriftEstimate:
        """The estimate from per-seed rows (as :func:`drift_run` returns them)."""
        import pandas as pd

        runs = pd.DataFrame(runs)[list(RUN_COLUMNS)].reset_index(drop=True)
        return cls(
            int(jitter_cycles),
            MeanCI.of(runs["conflict_rate"], confidence),
            MeanCI.of(runs["cycles"], confidence),
            runs,
        )

    def to_dict(self) -> dict[str, Any]:
        """One flat row: jitter, seeds, then mean, std, ci_low, ci_high of rate and cycles."""
        row: dict[str, Any] = {"jitter_cycles": self.jitter_cycles, "seeds": self.conflict_rate.n}
        for name in ("conflict_rate", "cycles"):
            est: MeanCI = getattr(self, name)
            row.update(
                {
                    name: est.mean,
                    f"{name}_std": est.std,
                    f"{name}_ci_low": est.low,
                    f"{name}_ci_high": est.high,
                }
            )
        return row


def with_jitter(hw: HardwareConfig, jitter_cycles: int) -> HardwareConfig:
    """``hw`` with the drift model ``uniform`` at ``jitter_cycles`` (ConfigError if < 0)."""
    return hw.with_overrides(drift={"model": "uniform", "jitter_cycles": int(jitter_cycles)})


def drift_run(
    trace: Trace, hw: HardwareConfig, *, jitter_cycles: int, seed: int, engine: str = "auto"
) -> dict[str, Any]:
    """One run of ``trace`` under ``uniform`` drift with ``seed``: a row of :data:`RUN_COLUMNS`
    (``cycles`` is the measurement when the trace has start/end clocks, else total cycles)."""
    result = simulate(trace, with_jitter(hw, jitter_cycles), engine=engine, seed=seed)
    stalls = int(sum(result.partition_stall_cycles.values()))
    passes = int(result.passes)
    return {
        "seed": int(seed),
        "partition_stall_cycles": stalls,
        "passes": passes,
        "conflict_rate": stalls / passes if passes else 0.0,
        "cycles": _cycles(result),
    }


def _cycles(result: Result) -> int:
    """The measurement, or total cycles for a trace without start/end clocks (one pass over
    the clocks: ``Result.measured_cycles`` reads them twice, ~5 ms a run)."""
    try:
        return int(result.measurement())
    except TraceError:
        return int(result.total_cycles)


def drift_point(
    traces: Mapping[str, Trace], hw: HardwareConfig, engine: str, point: tuple[str, int, int]
) -> dict[str, Any]:
    """A sweep point ``(name, jitter_cycles, seed)`` over named traces (an executor's ``fn``,
    bound with ``functools.partial``): :func:`drift_run`'s row with name and jitter."""
    name, jitter, seed = point
    row = drift_run(traces[name], hw, jitter_cycles=jitter, seed=seed, engine=engine)
    return {"name": name, "jitter_cycles": int(jitter), **row}


def summarize_runs(runs: pd.DataFrame, confidence: float = DEFAULT_CONFIDENCE) -> pd.DataFrame:
    """Rows of :func:`drift_point` (``name``, ``jitter_cycles`` and :data:`RUN_COLUMNS`) to one
    :meth:`DriftEstimate.to_dict` row per (name, jitter), in first-seen order."""
    import pandas as pd

    rows = [
        {"name": name, **DriftEstimate.from_runs(group, jitter, confidence).to_dict()}
        for (name, jitter), group in runs.groupby(["name", "jitter_cycles"], sort=False)
    ]
    return pd.DataFrame(rows)


def _seed_list(seeds: int | Iterable[int]) -> tuple[int, ...]:
    seeds = tuple(range(seeds)) if isinstance(seeds, int) else tuple(int(s) for s in seeds)
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise ConfigError(
            f"seeds: {list(seeds)}: need at least 2 distinct seeds for a confidence interval"
        )
    return seeds


def conflict_rate(
    trace: Trace,
    hw: HardwareConfig,
    *,
    jitter_cycles: int,
    seeds: int | Iterable[int],
    engine: str = "auto",
    confidence: float = DEFAULT_CONFIDENCE,
) -> DriftEstimate:
    """Run ``trace`` under ``uniform`` drift of ``jitter_cycles`` once per seed (``seeds``: a
    count, meaning seeds 0..n-1, or the seeds themselves) and estimate the partition-conflict
    rate and the cycles (see the module docstring)."""
    import pandas as pd

    runs = [
        drift_run(trace, hw, jitter_cycles=jitter_cycles, seed=s, engine=engine)
        for s in _seed_list(seeds)
    ]
    return DriftEstimate.from_runs(pd.DataFrame(runs), jitter_cycles, confidence)


__all__ = [
    "DEFAULT_CONFIDENCE",
    "RUN_COLUMNS",
    "DriftEstimate",
    "MeanCI",
    "conflict_rate",
    "drift_point",
    "drift_run",
    "summarize_runs",
    "t_quantile",
    "with_jitter",
]
