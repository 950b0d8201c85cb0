"""The engines' one bound on time: no cycle beyond ``MAX_CYCLE`` = 2**62.

Both engines count cycles in 64-bit integers (``fast``) or must report them as such (``des``).
Every constant a cycle is advanced by (a ``delay``, the drift's jitter, a timing constant) is at
most ``MAX_CYCLE`` (``check_inputs``, before a run), and a run that would schedule anything
beyond ``MAX_CYCLE`` stops with ``overflow()`` (during a run): so ``now + step`` never exceeds
2**63 - 1, and both engines fail alike, with one line, instead of one wrapping around.

>>> from wgpsim.trace.trace import TraceBuilder
>>> b = TraceBuilder(num_warps=1)
>>> b.delay(0, 2**63 - 1)
>>> check_inputs(b.build(check=False), load_hardware())  # a trace no validation saw
Traceback (most recent call last):
...
wgpsim.errors.TraceError: trace row 0: delay 9223372036854775807 is beyond the engines' bound of 2**62 cycles
"""

from __future__ import annotations

import numpy as np

from wgpsim.errors import ConfigError, TraceError
from wgpsim.hw.config import HardwareConfig, load_hardware  # noqa: F401 (doctest)
from wgpsim.trace.instructions import DELAY

MAX_CYCLE = 2**62
"""The last cycle a simulation may reach."""

TIMING = ("issue_interval", "lds_latency", "clock_latency", "barrier_latency")


def check_inputs(trace, hw: HardwareConfig) -> None:
    """TraceError/ConfigError naming the first delay or timing constant beyond ``MAX_CYCLE``."""
    for name in (*TIMING, "drift.jitter_cycles"):
        section, _, field = name.rpartition(".")
        value = getattr(hw.drift if section else hw.timing, field)
        if value > MAX_CYCLE:
            key = name if section else f"timing.{name}"
            raise ConfigError(
                f"{hw.source}: field {key!r} = {value} is beyond the engines' bound of 2**62 cycles"
            )
    too_long = np.flatnonzero((trace.op == DELAY) & (trace.arg > MAX_CYCLE))
    if len(too_long):
        row = int(too_long[0])
        raise TraceError(
            f"trace row {row}: delay {int(trace.arg[row])} is beyond the engines' bound of 2**62 cycles"
        )


def overflow() -> TraceError:
    """The error of a run that would pass ``MAX_CYCLE``."""
    return TraceError(
        "the simulation would run past cycle 2**62, the engines' bound "
        "(the delays and latencies of the trace add up to more)"
    )
