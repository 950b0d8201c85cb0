"""The seed's steady-state model of a burst of LDS loads: ``cycles = fixed + bytes / rate``.

A measured run divides the bytes by every cycle the clock counted, including a fixed startup and
drain cost (two clock reads, a barrier, one un-overlapped LDS round trip) that does not grow with
the burst. Fitting cycles against bytes over several burst lengths separates the two: the rate is
the reciprocal slope, the fixed cost the intercept (seed, "Steady-state bandwidth").

>>> fit = fit_steady_state([8192, 32768, 65536], [99, 195, 323])
>>> round(fit.rate, 1), round(fit.fixed, 1), round(fit.r_squared, 4)
(256.0, 67.0, 1.0)
>>> round(fit.bandwidth(65536), 1)            # the raw B/cycle the model predicts at 64 KiB
202.9
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SteadyStateFit:
    """``cycles = fixed + bytes / rate``, with standard errors and the goodness of fit.

    ``rate`` is in bytes per cycle, ``fixed`` in cycles. ``rate_stderr`` is propagated from the
    slope's standard error (``rate = 1 / slope`` so ``d rate = d slope / slope**2``).
    """

    rate: float
    rate_stderr: float
    fixed: float
    fixed_stderr: float
    r_squared: float
    num_points: int

    def cycles(self, nbytes):
        """Cycles the model predicts for a burst of ``nbytes`` (scalar or array)."""
        return _scalar_or_array(self.fixed + np.asarray(nbytes, dtype=float) / self.rate)

    def bandwidth(self, nbytes):
        """Raw B/cycle the model predicts for a burst of ``nbytes``: bytes / predicted cycles."""
        nbytes = np.asarray(nbytes, dtype=float)
        return _scalar_or_array(nbytes / (self.fixed + nbytes / self.rate))

    def to_dict(self) -> dict[str, float]:
        return {
            "rate": self.rate,
            "rate_stderr": self.rate_stderr,
            "fixed": self.fixed,
            "fixed_stderr": self.fixed_stderr,
            "r_squared": self.r_squared,
            "num_points": self.num_points,
        }


def _scalar_or_array(value: np.ndarray):
    return float(value) if np.ndim(value) == 0 else value


def fit_steady_state(nbytes, cycles) -> SteadyStateFit:
    """Least-squares fit of ``cycles = fixed + bytes / rate`` (scipy's ``linregress`` statistics).

    Needs at least two distinct byte counts. With exactly two points the standard errors are 0.

    >>> fit_steady_state([1024], [70])
    Traceback (most recent call last):
    ...
    ValueError: steady-state fit needs at least 2 distinct byte counts, got [1024]
    """
    x = np.asarray(nbytes, dtype=float).ravel()
    y = np.asarray(cycles, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"steady-state fit: {x.size} byte counts but {y.size} cycle counts")
    if np.unique(x).size < 2:
        raise ValueError(
            f"steady-state fit needs at least 2 distinct byte counts, got {x.astype(int).tolist()}"
        )
    slope, intercept, slope_stderr, intercept_stderr, r = _linregress(x, y)
    rate = 1.0 / slope if slope > 0 else math.inf
    rate_stderr = slope_stderr / slope**2 if slope > 0 else math.inf
    r_squared = r**2 if np.isfinite(r) else 1.0
    return SteadyStateFit(
        rate=rate,
        rate_stderr=rate_stderr,
        fixed=intercept,
        fixed_stderr=intercept_stderr,
        r_squared=r_squared,
        num_points=int(x.size),
    )


def _linregress(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float, float]:
    """Slope, intercept, their standard errors and r: the statistics of ``scipy.stats.linregress``.

    Written with numpy so that ``wgpsim run`` does not pay scipy.stats' import (~0.9 s);
    The residual sum of squares is summed directly, which keeps the standard errors accurate on
    the near-perfect fits a deterministic model gives. ``tests/test_analysis_fit.py`` checks the
    estimates against ``scipy.stats.linregress`` and the errors against ``numpy.linalg.lstsq``.
    """
    n = x.size
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy, sxy = float(dx @ dx), float(dy @ dy), float(dx @ dy)
    slope = sxy / sxx
    intercept = float(y.mean()) - slope * float(x.mean())
    r = 1.0 if syy == 0.0 else max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))
    res = dy - slope * dx
    residual = float(res @ res)  # directly, not (1 - r**2) * syy: near-perfect fits are the rule
    slope_stderr = math.sqrt(residual / sxx / (n - 2)) if n > 2 else 0.0
    intercept_stderr = slope_stderr * math.sqrt(sxx / n + float(x.mean()) ** 2)
    return slope, intercept, slope_stderr, intercept_stderr, r
