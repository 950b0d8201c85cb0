"""The steady-state fit recovers the model it is given, and reports its uncertainty."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.measures import fit_steady_state


@settings(max_examples=60, deadline=None)
@given(
    rate=st.floats(min_value=16, max_value=4096),
    fixed=st.floats(min_value=0, max_value=500),
    bursts=st.lists(st.integers(1, 64), min_size=2, max_size=12, unique=True),
)
def test_exact_model_is_recovered(rate, fixed, bursts):
    nbytes = np.array(bursts) * 2048
    cycles = fixed + nbytes / rate
    fit = fit_steady_state(nbytes, cycles)
    assert fit.rate == pytest.approx(rate, rel=1e-6)
    assert fit.fixed == pytest.approx(fixed, abs=1e-6 * (1 + fixed + nbytes.max() / rate))
    assert fit.r_squared == pytest.approx(1.0)
    assert fit.num_points == len(bursts)
    assert fit.bandwidth(nbytes) == pytest.approx(nbytes / cycles)


def test_noise_gives_standard_errors_that_cover_the_truth():
    rng = np.random.default_rng(7)
    nbytes = np.arange(1, 33) * 2048.0
    cycles = 67 + nbytes / 256 + rng.normal(0, 2, nbytes.size)
    fit = fit_steady_state(nbytes, cycles)
    assert 0 < fit.rate_stderr < 5
    assert 0 < fit.fixed_stderr < 5
    assert abs(fit.rate - 256) < 4 * fit.rate_stderr
    assert abs(fit.fixed - 67) < 4 * fit.fixed_stderr
    assert 0.99 < fit.r_squared < 1


def test_rate_stderr_is_the_propagated_slope_error():
    from scipy import stats

    nbytes = np.array([2048, 4096, 8192, 16384, 32768, 65536], dtype=float)
    cycles = np.array([75, 83, 99, 131, 195, 323], dtype=float) + [0, 1, -1, 2, 0, -1]
    reg = stats.linregress(nbytes, cycles)
    fit = fit_steady_state(nbytes, cycles)
    assert fit.rate == pytest.approx(1 / reg.slope)
    assert fit.rate_stderr == pytest.approx(reg.stderr / reg.slope**2)
    assert fit.fixed_stderr == pytest.approx(reg.intercept_stderr)


def test_needs_two_distinct_sizes():
    with pytest.raises(ValueError, match="2 distinct"):
        fit_steady_state([4096, 4096], [80, 81])
    with pytest.raises(ValueError, match="3 byte counts but 2"):
        fit_steady_state([1, 2, 3], [1, 2])


def test_flat_cycles_give_infinite_rate():
    fit = fit_steady_state([1024, 2048], [70, 70])
    assert math.isinf(fit.rate)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 64), min_size=3, max_size=12, unique=True),  # burst lengths
    st.floats(0.5, 600),
    st.floats(0, 200),
    st.integers(0, 2**32 - 1),
)
def test_statistics_equal_scipy_and_least_squares(nbytes, rate, fixed, seed):
    from scipy import stats

    rng = np.random.default_rng(seed)
    x = 2048.0 * np.array(nbytes)  # 4 warps x 512 B per load
    y = fixed + x / rate + rng.normal(0, 3, x.size)
    reg = stats.linregress(x, y)
    fit = fit_steady_state(x, y)
    if reg.slope <= 0:
        return
    assert fit.rate == pytest.approx(1 / reg.slope, rel=1e-9)
    assert fit.fixed == pytest.approx(reg.intercept, rel=1e-9, abs=1e-6)
    assert fit.r_squared == pytest.approx(reg.rvalue**2, rel=1e-9, abs=1e-12)
    # Standard errors from the covariance of the least-squares estimate, s^2 (X^T X)^-1.
    design = np.column_stack([np.ones_like(x), x])
    coef, rss, *_ = np.linalg.lstsq(design, y, rcond=None)
    residual = y - design @ coef
    cov = (residual @ residual) / (x.size - 2) * np.linalg.inv(design.T @ design)
    slope_stderr, fixed_stderr = math.sqrt(cov[1, 1]), math.sqrt(cov[0, 0])
    assert fit.rate_stderr == pytest.approx(slope_stderr / coef[1] ** 2, rel=1e-5, abs=1e-12)
    assert fit.fixed_stderr == pytest.approx(fixed_stderr, rel=1e-5, abs=1e-9)
