"""Timing engines. One signature: ``simulate(trace, hw, *, engine, seed, record_events,
record_ops) -> Result``.

An engine is a module ``wgpsim.engine.<name>`` with a function ``run(trace, hw, *, seed,
record_events, record_ops=False) -> Result``; ``des`` (simpy) is the reference that faster engines must match cycle
for cycle.

>>> import numpy as np
>>> from wgpsim.trace.trace import TraceBuilder
>>> b = TraceBuilder(num_warps=1)
>>> b.clock(0, "start")
>>> b.load(0, "ds_load_b64", 8 * np.arange(32))
>>> b.wait_ds(0, 0)
>>> b.clock(0, "end")
>>> r = simulate(b.build())
>>> r.passes, r.bytes, r.measurement()  # clock + 1 pass + LDS latency
(1, 256, 61)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from wgpsim.errors import ConfigError, shown
from wgpsim.lazy import exports

if TYPE_CHECKING:
    from wgpsim.engine.result import Result
    from wgpsim.hw.config import HardwareConfig

ENGINES = ("des", "fast", "auto")
"""Engines known to this package (a module ``wgpsim.engine.<name>`` may add more); ``auto``
runs ``des`` for a process's first small traces and ``fast`` beyond (``wgpsim.engine.auto``)."""

DEFAULT_ENGINE = "auto"
"""The engine ``simulate()``, every CLI verb, every experiment and every function of the
Python API use unless told otherwise: ``des`` for a process's first small traces, ``fast``
beyond (the two agree cycle for cycle), so no first hour compiles the fast engine."""

SEED_RANGE = (0, 2**32 - 1)
"""Valid seeds of the drift model's generator (numpy's ``default_rng`` takes seeds >= 0; the
bound keeps a seed an ordinary 32-bit number)."""

__all__ = ["DEFAULT_ENGINE", "ENGINES", "SEED_RANGE", "Result", "check_seed", "simulate"]
# Result is imported on first use: the CLI reads ENGINES to build its parser without numpy
__getattr__, _ = exports(__name__, {"Result": "wgpsim.engine.result"})


def check_seed(seed: int, name: str = "seed") -> int:
    """``seed`` if it is in :data:`SEED_RANGE`, else a ConfigError naming ``name``.

    >>> check_seed(-1, "--seed")
    Traceback (most recent call last):
    ...
    wgpsim.errors.ConfigError: --seed -1: out of range (valid: 0..4294967295)
    """
    low, high = SEED_RANGE
    if isinstance(seed, bool) or not isinstance(seed, int) or not low <= seed <= high:
        raise ConfigError(f"{name} {shown(seed)}: out of range (valid: {low}..{high})")
    return seed


def simulate(
    trace,
    hw: HardwareConfig | None = None,
    *,
    engine: str = DEFAULT_ENGINE,
    seed: int = 0,
    record_events: bool = False,
    record_ops: bool = False,
) -> Result:
    """Validate ``trace`` against ``hw`` (default: ``configs/mi450.yaml``) and simulate it.

    ``record_events``: the arbiter's per-cycle log (``Result.events()``); ``record_ops``: every
    row's cycles (``Result.ops(trace)``, columns ``wgpsim.engine.result.OP_TIMES``)."""
    from wgpsim.hw.config import load_hardware
    from wgpsim.trace.validate import check_lanes, validate

    hw = load_hardware() if hw is None else hw
    check_seed(seed)
    check_lanes(trace, hw.wgp.warp_size, hw.source)
    module = _engine(engine)  # an engine may check traces its own way (fast: compiled)
    getattr(module, "validate", validate)(trace, hw.partitions.lds_bytes)
    hw.require(_used_ops(trace))
    run = module.run
    if record_ops:
        return run(trace, hw, seed=seed, record_events=record_events, record_ops=True)
    return run(trace, hw, seed=seed, record_events=record_events)


def _used_ops(trace) -> list[str]:
    """Names of the ops ``trace`` uses, in op-code order."""
    import numpy as np

    from wgpsim.trace.instructions import OPS

    # a count per op code, not np.unique: numpy 2's unique imports numpy.ma (0.015 CPU-s)
    return [OPS[code] for code in np.flatnonzero(np.bincount(np.asarray(trace.op)))]


def _engine(name: str):
    if not isinstance(name, str) or not name.isidentifier() or name == "result":
        raise ConfigError(f"unknown engine {name!r} (valid: {', '.join(ENGINES)})")
    try:
        module = importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError:
        raise ConfigError(f"unknown engine {name!r} (valid: {', '.join(ENGINES)})") from None
    if not callable(getattr(module, "run", None)):
        raise ConfigError(f"unknown engine {name!r} (valid: {', '.join(ENGINES)})")
    return module
