"""Calibration: what the model predicts each probe measures, and the hardware constants that
make it predict what a device measured (least squares), each with its standard error.

The probes (:mod:`wgpsim.calibration.probes`) time small kernels whose spans are, in the model,
sums of a few constants: a round trip is ``clock_latency + passes + lds_latency``, a run of
barriers ``clock_latency + k x barrier_latency``, the AMD blog's sweep ``clock_latency +
lds_latency + barrier_latency + passes``. The fit treats the model as the function it is:

* **continuous constants** (``CONTINUOUS``: ``lds_latency``, ``barrier_latency``,
  ``clock_latency``): the model is linear in them on these probes, so one Gauss-Newton step from
  the current config, with the Jacobian by finite differences of the simulator, is the least-
  squares answer (a second step checks it). Standard errors are OLS's, ``sigma^2 (J^T J)^-1``
  with ``sigma^2 = RSS / (n - p)``. A constant whose column of J lies in the span of the others
  (only their sum reaches the measurements) is not identified: it keeps its value, and the
  report says so.
* **discrete choices** (``DISCRETE``: ``passes.lane_grouping``, ``banks.count``,
  ``timing.issue_interval``): each candidate is fitted as above and the one with the smallest
  residual sum of squares wins, one choice at a time until none changes (every candidate's RSS
  is reported).

The port rate is no constant of the model (a pass is one port-cycle); the bandwidth family's
steady-state rate (:func:`wgpsim.measures.fit.fit_steady_state`) is reported beside the
model's, for the reader to judge.

Measurements the shipped model predicts fit back to the shipped constants:

>>> from wgpsim.calibration.probes import catalogue
>>> probes = [p for p in catalogue() if p.family in ("round_trip", "barrier")]
>>> fit = fit_constants(predict(probes), probes, discrete=())
>>> {k: round(c.value, 3) for k, c in fit.constants.items()}
{'timing.lds_latency': 56.0, 'timing.barrier_latency': 7.0, 'timing.clock_latency': 4.0}
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from wgpsim.calibration.probe_traces import probe_trace
from wgpsim.calibration.probes import FAMILIES, Probe
from wgpsim.engine import simulate
from wgpsim.errors import ModuleError, did_you_mean, shown
from wgpsim.hw.config import HardwareConfig, load_hardware

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CONTINUOUS",
    "DISCRETE",
    "CalibrationFit",
    "Constant",
    "fit_constants",
    "joined",
    "predict",
    "spans",
]

CONTINUOUS = ("timing.lds_latency", "timing.barrier_latency", "timing.clock_latency")
"""The constants fitted by least squares (cycles)."""

DISCRETE = ("passes.lane_grouping", "banks.count", "timing.issue_interval")
"""The choices fitted by residual, among :func:`candidates`."""

SIGNIFICANT = 9.0
"""A discrete choice beats another only if its residual sum of squares is lower by more than
this many ``sigma^2`` (the residual variance): a likelihood ratio of e^4.5 under Gaussian noise,
a "3 sigma" difference. Closer candidates are not told apart: the choice keeps its value."""

STEP = 8
"""Finite-difference step (cycles) of the Jacobian: the model is piecewise linear in whole
cycles, so any step inside one linear piece gives the exact slope."""


def candidates(key: str, hw: HardwareConfig) -> tuple[Any, ...]:
    """The values a discrete choice may take: the config's lane groupings; 32, 64 or 128 banks;
    an issue interval of 1..4 cycles."""
    if key == "passes.lane_grouping":
        return tuple(name for name, _ in hw.passes.groupings)
    if key == "banks.count":
        return (32, 64, 128)
    if key == "timing.issue_interval":
        return (1, 2, 3, 4)
    raise ModuleError(f"unknown discrete choice {key!r}{did_you_mean(key, DISCRETE)}")


def _get(hw: HardwareConfig, key: str) -> Any:
    section, name = key.split(".")
    return getattr(getattr(hw, section), name)


@lru_cache(maxsize=256)
def _trace(p: Probe):
    return probe_trace(p)


SPAN_CACHE = 1 << 16
"""Spans kept per (probe, config): enough for every candidate of a fit of the whole kit."""


@lru_cache(maxsize=SPAN_CACHE)
def spans(p: Probe, hw: HardwareConfig) -> tuple[int, ...]:
    """Per-warp spans the model gives probe ``p`` on ``hw`` (cached: the fit asks often)."""
    return tuple(int(v) for v in simulate(_trace(p), hw).measurements().to_numpy())


def predict(probes: Iterable[Probe], hw: HardwareConfig | None = None) -> pd.DataFrame:
    """One row per warp per probe: ``probe``, ``warp``, ``cycles`` (what the model measures)."""
    import pandas as pd

    hw = load_hardware() if hw is None else hw
    rows = [(p.name, w, span) for p in probes for w, span in enumerate(spans(p, hw))]
    return pd.DataFrame(rows, columns=["probe", "warp", "cycles"])


# -- the fit -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Constant:
    """One fitted constant: its ``value`` (float for a continuous one) and standard error
    (None for a discrete choice or one not identified), the value it had, whether the probes
    identified it, the families and measurements that carry it, and for a discrete choice the
    residual sum of squares of every candidate."""

    key: str
    value: Any
    stderr: float | None
    previous: Any
    identified: bool
    families: tuple[str, ...] = ()
    measurements: int = 0
    rss: tuple[tuple[Any, float], ...] = ()

    @property
    def written(self) -> Any:
        """The value the hardware YAML gets: the nearest whole cycle for a continuous one."""
        if not self.identified:
            return self.previous
        return int(round(self.value)) if isinstance(self.value, float) else self.value


@dataclass(frozen=True)
class CalibrationFit:
    """The fit: constants by key, the fitted config, residuals per row and per family."""

    constants: dict[str, Constant]
    hw: HardwareConfig = field(repr=False)
    residuals: pd.DataFrame = field(repr=False)
    families: pd.DataFrame = field(repr=False)
    port_rates: pd.DataFrame = field(repr=False)
    sigma: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "constants": {
                k: {
                    "value": c.value,
                    "stderr": c.stderr,
                    "written": c.written,
                    "previous": c.previous,
                    "identified": c.identified,
                    "families": list(c.families),
                    "measurements": c.measurements,
                    **({"rss": {str(v): r for v, r in c.rss}} if c.rss else {}),
                }
                for k, c in self.constants.items()
            },
            "sigma": self.sigma,
            "families": self.families.to_dict(orient="records"),
            "port_rates": self.port_rates.to_dict(orient="records"),
        }


def joined(measured: pd.DataFrame, probes: Sequence[Probe]) -> tuple[list[Probe], np.ndarray]:
    """The probes measured (manifest order) and, per measured row, its index into the
    model's rows (probe, warp); a row naming an unknown probe or warp is a ModuleError."""
    by_name = {p.name: p for p in probes}
    unknown = sorted(set(measured["probe"]) - set(by_name))
    if unknown:
        raise ModuleError(
            f"measurements: probe {shown(unknown[0])} is not in the manifest"
            f"{did_you_mean(unknown[0], by_name)}"
        )
    used = [p for p in probes if p.name in set(measured["probe"])]
    start, offset = 0, {}
    for p in used:
        offset[p.name] = start
        start += p.warps
    index = np.empty(len(measured), dtype=np.int64)
    for i, (name, warp) in enumerate(zip(measured["probe"], measured["warp"], strict=True)):
        if warp >= by_name[name].warps:
            raise ModuleError(
                f"measurements: probe {shown(name)} has {by_name[name].warps} warps, row {i + 2} "
                f"names warp {warp}"
            )
        index[i] = offset[name] + warp
    return used, index


def _model(probes: Sequence[Probe], hw: HardwareConfig) -> np.ndarray:
    return np.array([s for p in probes for s in spans(p, hw)], dtype=float)


def _with(hw: HardwareConfig, values: dict[str, Any]) -> HardwareConfig:
    return hw.with_overrides(**values) if values else hw


@dataclass(frozen=True)
class _Linear:
    """One least-squares fit of the continuous constants at fixed discrete choices."""

    theta: np.ndarray
    stderr: np.ndarray
    identified: np.ndarray
    rss: float
    sigma: float
    jacobian: np.ndarray


def _fit_linear(probes, index, y, hw: HardwareConfig, keys: Sequence[str]) -> _Linear:
    theta = np.array([float(_get(hw, k)) for k in keys])
    for iteration in range(3):  # Gauss-Newton; exact in one step where the model is linear
        base_values = {k: max(1, int(round(t))) for k, t in zip(keys, theta, strict=True)}
        base_hw = _with(hw, base_values)
        f0 = _model(probes, base_hw)[index]
        cols = []
        for k in keys:
            bumped = _with(base_hw, {k: base_values[k] + STEP})
            cols.append((_model(probes, bumped)[index] - f0) / STEP)
        jac = np.stack(cols, axis=1) if cols else np.zeros((len(y), 0))
        base = np.array([base_values[k] for k in keys], dtype=float)
        identified = _identified(jac)
        step = np.zeros(len(keys))
        if identified.any():
            sub = jac[:, identified]
            step[identified] = np.linalg.lstsq(sub, y - f0, rcond=None)[0]
        new = base + step
        new[~identified] = theta[~identified]
        converged = iteration > 0 and np.allclose(np.round(new), np.round(theta))
        theta = new
        if converged:
            break
    residual = y - f0 - jac @ (theta - base)
    rss = float(residual @ residual)
    p = int(identified.sum())
    dof = max(len(y) - p, 1)
    sigma2 = rss / dof
    stderr = np.full(len(keys), np.nan)
    if p:
        sub = jac[:, identified]
        cov = sigma2 * np.linalg.pinv(sub.T @ sub)
        stderr[identified] = np.sqrt(np.clip(np.diag(cov), 0, None))
    return _Linear(theta, stderr, identified, rss, float(np.sqrt(sigma2)), jac)


def _identified(jac: np.ndarray, tol: float = 1e-9) -> np.ndarray:
    """Per column: does it add to the rank (is it outside the span of the others)?"""
    if jac.shape[1] == 0:
        return np.zeros(0, dtype=bool)
    rank = np.linalg.matrix_rank(jac, tol=tol * max(1.0, float(np.abs(jac).max())))
    out = []
    for j in range(jac.shape[1]):
        rest = np.delete(jac, j, axis=1)
        rest_rank = np.linalg.matrix_rank(rest, tol=tol * max(1.0, float(np.abs(jac).max())))
        out.append(bool(np.abs(jac[:, j]).max() > 0) and rest_rank < rank)
    return np.array(out, dtype=bool)


def fit_constants(
    measured: pd.DataFrame,
    probes: Sequence[Probe],
    hw: HardwareConfig | None = None,
    *,
    continuous: Sequence[str] = CONTINUOUS,
    discrete: Sequence[str] = DISCRETE,
) -> CalibrationFit:
    """Fit ``continuous`` and ``discrete`` constants of ``hw`` (default: the shipped config) to
    ``measured`` (columns probe, warp, cycles; several rows per warp are several runs)."""
    hw = load_hardware() if hw is None else hw
    used, index = joined(measured, probes)
    y = measured["cycles"].to_numpy(dtype=float)
    choice = {k: _get(hw, k) for k in discrete}
    rss_of: dict[str, dict[Any, float]] = {k: {} for k in discrete}

    def trial(values: dict[str, Any]) -> _Linear:
        return _fit_linear(used, index, y, _with(hw, values), continuous)

    best = trial(choice)
    for _ in range(3):  # one discrete choice at a time, until none changes
        changed = False
        for key in discrete:
            for value in candidates(key, hw):
                attempt = best if value == choice[key] else trial({**choice, key: value})
                rss_of[key][value] = attempt.rss
                if attempt.rss < best.rss - _margin(best):
                    best, choice, changed = attempt, {**choice, key: value}, True
        if not changed:
            break
    constants = _constants(hw, measured, used, index, best, continuous, choice, rss_of)
    fitted = _with(hw, {k: c.written for k, c in constants.items()})
    residuals = measured[["probe", "warp", "cycles"]].copy()
    residuals["model"] = _model(used, fitted)[index]
    residuals["residual"] = residuals["cycles"] - residuals["model"]
    residuals["family"] = residuals["probe"].map({p.name: p.family for p in used})
    return CalibrationFit(
        constants,
        fitted,
        residuals,
        _family_errors(residuals),
        _port_rates(measured, used, fitted),
        best.sigma,
    )


def _margin(fit: _Linear) -> float:
    """How much lower a rival's RSS must be to win (``SIGNIFICANT`` sigma^2; a hair when the
    fit is exact)."""
    return max(SIGNIFICANT * fit.sigma**2, 1e-9 * max(1.0, fit.rss))


def _constants(hw, measured, used, index, best, continuous, choice, rss_of) -> dict[str, Constant]:
    family_of = measured["probe"].map({p.name: p.family for p in used}).to_numpy()
    out: dict[str, Constant] = {}
    for j, key in enumerate(continuous):
        carried = np.abs(best.jacobian[:, j]) > 0 if best.jacobian.size else np.zeros(0, bool)
        families = tuple(f for f in FAMILIES if (family_of[carried] == f).any())
        ok = bool(best.identified[j])
        out[key] = Constant(
            key,
            float(best.theta[j]) if ok else _get(hw, key),
            float(best.stderr[j]) if ok else None,
            _get(hw, key),
            ok,
            families,
            int(carried.sum()),
        )
    fitted = _with(hw, choice)
    for key, value in choice.items():
        rss = tuple(sorted(rss_of[key].items(), key=lambda kv: kv[1]))
        rival = next((v for v, _ in rss if v != value), None)
        separated = rival is not None and rss_of[key][rival] - rss_of[key][value] > _margin(best)
        families: tuple[str, ...] = ()
        rows = 0
        if separated:  # the families whose spans differ between the choice and its rival
            differ = _model(used, fitted)[index] != _model(used, _with(fitted, {key: rival}))[index]
            families = tuple(f for f in FAMILIES if (family_of[differ] == f).any())
            rows = int(np.isin(family_of, families).sum())
        out[key] = Constant(
            key,
            value if separated else _get(hw, key),
            None,
            _get(hw, key),
            separated,
            families,
            rows,
            rss,
        )
    return out


def _family_errors(residuals: pd.DataFrame) -> pd.DataFrame:
    """Per family: measurements, mean and RMS residual, mean absolute percentage error."""
    import pandas as pd

    rows = []
    for family in FAMILIES:
        part = residuals[residuals["family"] == family]
        if not len(part):
            continue
        res = part["residual"].to_numpy(dtype=float)
        meas = part["cycles"].to_numpy(dtype=float)
        rows.append(
            {
                "family": family,
                "measurements": len(part),
                "mean_residual": float(res.mean()),
                "rms_residual": float(np.sqrt((res**2).mean())),
                "mape_percent": float(100 * np.mean(np.abs(res) / np.maximum(meas, 1))),
            }
        )
    return pd.DataFrame(
        rows, columns=["family", "measurements", "mean_residual", "rms_residual", "mape_percent"]
    )


def _port_rates(measured, used, hw) -> pd.DataFrame:
    """The bandwidth family's steady-state rate per (layout, warps): measured and model."""
    import pandas as pd

    from wgpsim.measures.fit import fit_steady_state

    rows = []
    sweeps: dict[tuple[str, int], list[Probe]] = {}
    for p in used:
        if p.family == "bandwidth":
            sweeps.setdefault((p.param("layout"), p.warps), []).append(p)
    means = measured.groupby("probe")["cycles"].max()
    for (layout, warps), sweep in sweeps.items():
        if len({p.param("burst") for p in sweep}) < 2:
            continue
        nbytes = [p.param("burst") * 512 * p.warps for p in sweep]
        got = fit_steady_state(nbytes, [float(means[p.name]) for p in sweep])
        model = fit_steady_state(nbytes, [max(spans(p, hw)) for p in sweep])
        rows.append(
            {
                "layout": layout,
                "warps": warps,
                "rate": got.rate,
                "rate_stderr": got.rate_stderr,
                "fixed": got.fixed,
                "model_rate": model.rate,
                "model_fixed": model.fixed,
            }
        )
    return pd.DataFrame(
        rows,
        columns=["layout", "warps", "rate", "rate_stderr", "fixed", "model_rate", "model_fixed"],
    )
