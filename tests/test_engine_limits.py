"""Both engines skip idle time and stop alike at the bound on cycles (wgpsim.engine.limits)."""

from __future__ import annotations

import numpy as np
import pytest

from wgpsim.engine import simulate
from wgpsim.engine.limits import MAX_CYCLE
from wgpsim.errors import ConfigError, TraceError
from wgpsim.hw import load_hardware
from wgpsim.trace.trace import TraceBuilder
from wgpsim.trace.validate import MAX_DELAY_CYCLES

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
def test_long_waits_cost_no_steps(engine):
    """A SIMD that may issue only every 65,536 cycles (the largest valid issue_interval), or a
    load latency as long: the loads issue at 0, I, 2I (grant in the issue cycle) and the last
    completes 1 + latency later. Idle stretches are skipped, not stepped (the 10**12-cycle
    delays below would never finish otherwise)."""
    t = HW.timing
    cycles = 1 << 16
    slow_issue = HW.with_overrides(**{"timing.issue_interval": cycles})
    slow_load = HW.with_overrides(**{"timing.lds_latency": cycles})
    issue = simulate(three_loads(), slow_issue, engine=engine).measurement()
    latency = simulate(three_loads(), slow_load, engine=engine).measurement()
    assert issue == t.clock_latency + 2 * cycles + 1 + t.lds_latency
    assert latency == t.clock_latency + 2 + 1 + cycles


def delays(*cycles: int, check: bool = True):
    b = TraceBuilder(1)
    for n in cycles:
        b.delay(0, n)
    b.clock(0, "end")
    return b.build(check=check)


@pytest.mark.parametrize("engine", ENGINES)
def test_cycles_up_to_the_bound_run(engine):
    """A warp may delay up to MAX_DELAY_CYCLES (2**48) in all: both engines reach that cycle
    at once (idle time skipped) and exactly."""
    r = simulate(delays(MAX_DELAY_CYCLES - 100, 50), HW, engine=engine)
    assert r.clocks["cycle"].tolist() == [MAX_DELAY_CYCLES - 50]
    assert r.total_cycles == MAX_DELAY_CYCLES - 50 + HW.timing.clock_latency


@pytest.mark.parametrize("engine", ENGINES)
def test_passing_the_bound_is_one_error_in_both_engines(engine):
    for too_long in ((2**63 - 1,), (MAX_DELAY_CYCLES, 1)):
        with pytest.raises(TraceError, match=r"^row 0 \(warp 0, delay\): .*valid: at most"):
            simulate(delays(*too_long, check=False), HW, engine=engine)
    with pytest.raises(ConfigError, match=r"field 'timing.lds_latency'.*valid: 1\.\.65536"):
        HW.with_overrides(**{"timing.lds_latency": MAX_CYCLE + 1})
