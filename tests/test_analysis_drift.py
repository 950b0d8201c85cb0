"""Partition conflicts under drift (``wgpsim.measures.drift``): rate, interval, determinism.

Traces are small: four warps (two per SIMD pair) each read ``loads`` rows of 32 lanes. Whether
the pairs can conflict is set by where their rows lie: in separate partitions they never can,
whatever the timing; in one shared partition they do in lock step.
"""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.errors import ConfigError
from wgpsim.hw import load_hardware
from wgpsim.measures.drift import (
    MeanCI,
    conflict_rate,
    drift_point,
    drift_run,
    summarize_runs,
    t_quantile,
)
from wgpsim.trace.instructions import INSTRUCTIONS
from wgpsim.trace.trace import TraceBuilder

HW = load_hardware()
PART = HW.partitions.size
OPS = ("ds_load_b32", "ds_load_b64", "ds_load_b128")


def rows_trace(partition_of_pair, *, op="ds_load_b64", loads=8, row_stride=4096, seed=0):
    """Warps w read ``loads`` contiguous rows in partition ``partition_of_pair[pair of w]``;
    lanes are shuffled within a row (``seed``), the rows of different warps never overlap."""
    width = INSTRUCTIONS[op].bytes_per_lane
    lanes = np.random.default_rng(seed).permutation(32) * width
    b = TraceBuilder(num_warps=4)
    b.barrier()
    for w in range(4):
        base = partition_of_pair[HW.pair_of_warp(w)] * PART + w * row_stride
        b.clock(w, "start")
        b.loads(w, op, base + np.arange(loads)[:, None] * 32 * width + lanes[None, :])
        b.wait_ds(w, 0)
        b.clock(w, "end")
    return b.build()


SHARED = rows_trace((0, 0))
APART = rows_trace((0, 1))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    pa=st.integers(0, len(HW.partitions.lds) - 1),
    shift=st.integers(1, len(HW.partitions.lds) - 1),
    op=st.sampled_from(OPS),
    loads=st.integers(1, 12),
    jitter=st.integers(0, 40),
    first_seed=st.integers(0, 1000),
    lane_seed=st.integers(0, 1000),
)
def test_separated_partitions_never_conflict_whatever_the_jitter(
    pa, shift, op, loads, jitter, first_seed, lane_seed
):
    pb = (pa + shift) % len(HW.partitions.lds)
    trace = rows_trace((pa, pb), op=op, loads=loads, seed=lane_seed)
    est = conflict_rate(trace, HW, jitter_cycles=jitter, seeds=range(first_seed, first_seed + 3))
    assert est.conflict_rate.mean == est.conflict_rate.low == est.conflict_rate.high == 0.0
    assert (est.runs["partition_stall_cycles"] == 0).all()
    assert (est.runs["passes"] > 0).all()


def test_a_shared_partition_conflicts_in_lock_step():
    est = conflict_rate(SHARED, HW, jitter_cycles=0, seeds=4)
    # Lock step: every seed is the same run, so the interval is one point, and it is not 0.
    assert est.conflict_rate.mean > 0
    assert est.conflict_rate.std == 0
    assert est.conflict_rate.low == est.conflict_rate.mean == est.conflict_rate.high
    # jitter 0 under `uniform` is the engine's default lock step (drift off).
    off = drift_run(SHARED, HW, jitter_cycles=0, seed=0)
    assert off["partition_stall_cycles"] == est.runs["partition_stall_cycles"].iloc[0]
    assert est.runs["conflict_rate"].iloc[0] == off["partition_stall_cycles"] / off["passes"]


@pytest.mark.parametrize("jitter", [2, 8, 32])
def test_the_interval_brackets_the_mean_and_matches_scipy(jitter):
    stats = pytest.importorskip("scipy.stats")
    est = conflict_rate(SHARED, HW, jitter_cycles=jitter, seeds=8)
    for ci, column in ((est.conflict_rate, "conflict_rate"), (est.cycles, "cycles")):
        assert ci.low <= ci.mean <= ci.high
        values = est.runs[column].to_numpy(dtype=float)
        assert ci.mean == pytest.approx(values.mean())
        low, high = stats.t.interval(0.95, len(values) - 1, values.mean(), stats.sem(values))
        if values.std() > 0:
            assert (ci.low, ci.high) == pytest.approx((low, high), rel=1e-4)
    assert est.runs["seed"].tolist() == list(range(8))


def test_drift_lowers_the_rate_of_a_shared_partition():
    lockstep = conflict_rate(SHARED, HW, jitter_cycles=0, seeds=2).conflict_rate
    drifted = conflict_rate(SHARED, HW, jitter_cycles=32, seeds=12).conflict_rate
    assert drifted.high < lockstep.mean
    assert drifted.low > 0  # lower, not strictly zero (seed, Note in Part II)


def test_same_seeds_give_the_same_numbers():
    a = conflict_rate(SHARED, HW, jitter_cycles=8, seeds=[3, 7, 11])
    b = conflict_rate(SHARED, HW, jitter_cycles=8, seeds=[3, 7, 11])
    pd.testing.assert_frame_equal(a.runs, b.runs)
    assert a.conflict_rate == b.conflict_rate and a.cycles == b.cycles
    # and the runs differ from seed to seed (the jitter is drawn per seed)
    assert a.runs["cycles"].nunique() > 1 or a.runs["partition_stall_cycles"].nunique() > 1


def test_more_seeds_narrow_the_interval():
    few = conflict_rate(SHARED, HW, jitter_cycles=8, seeds=4).conflict_rate
    many = conflict_rate(SHARED, HW, jitter_cycles=8, seeds=40).conflict_rate
    assert many.high - many.low < few.high - few.low
    assert many.low <= few.mean + (few.high - few.low)


def test_engines_agree_on_the_estimate():
    fast = conflict_rate(SHARED, HW, jitter_cycles=8, seeds=3, engine="fast")
    des = conflict_rate(SHARED, HW, jitter_cycles=8, seeds=3, engine="des")
    pd.testing.assert_frame_equal(fast.runs, des.runs)


def test_points_and_summary_rows():
    traces = {"shared": SHARED, "apart": APART}
    rows = [
        drift_point(traces, HW, "fast", (name, j, s))
        for name in traces
        for j in (0, 8)
        for s in range(3)
    ]
    table = summarize_runs(pd.DataFrame(rows))
    assert table[["name", "jitter_cycles"]].values.tolist() == [
        ["shared", 0],
        ["shared", 8],
        ["apart", 0],
        ["apart", 8],
    ]
    assert (table["seeds"] == 3).all()
    direct = conflict_rate(SHARED, HW, jitter_cycles=8, seeds=3).to_dict()
    assert table.iloc[1].drop("name").to_dict() == pytest.approx(direct)
    assert (table.loc[table["name"] == "apart", "conflict_rate_ci_high"] == 0).all()


@settings(max_examples=40, deadline=None, derandomize=True)
@given(df=st.integers(1, 2000))
def test_t_table_matches_scipy(df):
    stats = pytest.importorskip("scipy.stats")
    assert t_quantile(0.95, df) == pytest.approx(stats.t.ppf(0.975, df), rel=5e-5)


def test_other_confidence_levels_use_scipy():
    stats = pytest.importorskip("scipy.stats")
    assert t_quantile(0.9, 7) == pytest.approx(stats.t.ppf(0.95, 7))
    wide = MeanCI.of([1.0, 2.0, 4.0], confidence=0.99)
    narrow = MeanCI.of([1.0, 2.0, 4.0], confidence=0.8)
    assert narrow.low > wide.low and narrow.high < wide.high
    half = stats.t.ppf(0.995, 2) * np.std([1, 2, 4], ddof=1) / math.sqrt(3)
    assert wide.high - wide.mean == pytest.approx(half)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: conflict_rate(SHARED, HW, jitter_cycles=4, seeds=1), "seeds: .*at least 2"),
        (lambda: conflict_rate(SHARED, HW, jitter_cycles=4, seeds=[1, 1]), "seeds: .*distinct"),
        (lambda: conflict_rate(SHARED, HW, jitter_cycles=-1, seeds=2), "jitter_cycles"),
        (lambda: MeanCI.of([0.5]), "seeds: 1 run"),
        (lambda: t_quantile(1.5, 3), "confidence: 1.5"),
    ],
)
def test_errors_name_the_argument(call, message):
    with pytest.raises(ConfigError, match=message):
        call()
