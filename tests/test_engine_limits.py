"""Both engines skip idle time and stop alike at the bound on cycles (wgpsim.engine.limits)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from wgpsim.engine import simulate
from wgpsim.engine.limits import MAX_CYCLE
from wgpsim.errors import ConfigError, TraceError
from wgpsim.hw import load_hardware
from wgpsim.trace.trace import TraceBuilder

HW = load_hardware()
ENGINES = ("des", "fast")


def three_loads():
    """One warp: clock, three one-pass loads, wait for them, clock."""
    b = TraceBuilder(1)
    b.clock(0, "start")
    b.loads(0, "ds_load_b64", 8 * np.arange(32) + 256 * np.arange(3)[:, None])
    b.wait_ds(0, 0)
    b.clock(0, "end")
    return b.build()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cycles", [10**8, 10**12])
def test_long_waits_cost_no_steps(engine, cycles):
    """A SIMD that may issue every 10**12 cycles, or a load latency of 10**12: the loads issue
    at 0, I, 2I (grant in the issue cycle) and the last completes 1 + latency later."""
    t = HW.timing
    slow_issue = HW.with_overrides(**{"timing.issue_interval": cycles})
    slow_load = HW.with_overrides(**{"timing.lds_latency": cycles})
    simulate(three_loads(), HW, engine=engine)  # compiled (fast) before the clock starts
    start = time.perf_counter()
    issue = simulate(three_loads(), slow_issue, engine=engine).measurement()
    latency = simulate(three_loads(), slow_load, engine=engine).measurement()
    assert time.perf_counter() - start < 30  # cycle by cycle, 10**12 cycles take hours
    assert issue == t.clock_latency + 2 * cycles + 1 + t.lds_latency
    assert latency == t.clock_latency + 2 + 1 + cycles


def delays(*cycles: int):
    b = TraceBuilder(1)
    for n in cycles:
        b.delay(0, n)
    b.clock(0, "end")
    return b.build()


@pytest.mark.parametrize("engine", ENGINES)
def test_cycles_up_to_the_bound_run(engine):
    r = simulate(delays(MAX_CYCLE - 100, 50), HW, engine=engine)
    assert r.clocks["cycle"].tolist() == [MAX_CYCLE - 50]
    assert r.total_cycles == MAX_CYCLE - 50 + HW.timing.clock_latency


@pytest.mark.parametrize("engine", ENGINES)
def test_passing_the_bound_is_one_error_in_both_engines(engine):
    with pytest.raises(TraceError, match=r"^trace row 0: delay 9223372036854775807 is beyond"):
        simulate(delays(2**63 - 1), HW, engine=engine)
    with pytest.raises(TraceError, match=r"^the simulation would run past cycle 2\*\*62"):
        simulate(delays(MAX_CYCLE, MAX_CYCLE), HW, engine=engine)
    with pytest.raises(TraceError, match=r"^the simulation would run past cycle 2\*\*62"):
        simulate(delays(MAX_CYCLE - 2), HW, engine=engine)  # the clock's latency passes it
    late = HW.with_overrides(**{"timing.lds_latency": MAX_CYCLE + 1})
    with pytest.raises(ConfigError, match=r"field 'timing.lds_latency' = \d+ is beyond"):
        simulate(three_loads(), late, engine=engine)
