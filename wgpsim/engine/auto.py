"""The ``auto`` engine: the simpy reference for a process's first small traces, the compiled
``fast`` engine beyond; the two agree cycle for cycle, so the choice changes only the cost.

Built ahead of time (``_fast_backend``: an extension module, made by the first use of the fast
engine on a machine with a C compiler), the fast engine loads in about a millisecond without
numba, and ``auto`` sends every trace to it (``fast_ready``). Without that module, loading it
costs a process about 0.32 CPU-s with numba's cache warm (numba's import and
``wgpsim.engine.fast`` 0.2, its first call loading numba's registries and the cached functions
0.13; ``_fast_backend._skip_scipy_blas_probe`` spares it SciPy's 0.2) and 14-18 CPU-s on a
fresh machine (the compile); ``des`` simulates about 99,000 passes per CPU-s: the two cost the
same near 32,000 passes (2026-12-04, load 0.1-0.5, 8 warps x 200 ``ds_load_b128`` on two
partitions, best of 3; both about twice as costly on a loaded machine). So a job whose traces add up to fewer than
``DES_PASSES`` passes (the AMD blog's microbenchmark, ``wgpsim run configs/lds_bandwidth.yaml``:
12 traces, 1,008 passes) is cheaper on ``des`` than loading ``fast`` at all (that whole warm run:
0.86 CPU-s on ``des``, 1.34 with ``--set engine=fast``), and on a fresh machine its first run
compiles nothing. Once the process has sent that many passes to ``des``, or has the fast engine
loaded already, every trace goes to ``fast``. ``Result.engine`` says which engine ran.

The microbenchmark's 1,008 passes in a fresh process, then a trace past the budget, and any trace
once the fast engine is loaded:

>>> choose(1_008, sent=0, fast_loaded=False), choose(32_000, sent=1_008, fast_loaded=False)
('des', 'fast')
>>> choose(1, sent=0, fast_loaded=True)
'fast'
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

from wgpsim.engine.result import Result
from wgpsim.hw.config import HardwareConfig
from wgpsim.trace.instructions import NUM_LDS_OPS, OPS

DES_PASSES = 32_000
"""Passes a process sends to ``des`` before ``auto`` loads the fast engine: about what ``des``
simulates in the 0.32 CPU-s that loading a warm fast engine costs (99,000 passes per CPU-s,
2026-12-04, the module docstring; it was 40,000 while the load cost 0.6-1.5 CPU-s and ``des``
simulated 28,000-60,000 passes per CPU-s)."""

COLD_DES_PASSES = 500_000
"""Passes ``auto`` sends to ``des`` while numba's cache does not hold the fast engine (a fresh
machine): about 5 CPU-s of ``des`` at 99,000 passes per CPU-s (13 when ``des`` managed 38,000),
about a third of the 14-18 CPU-s the compile costs (``_compile_notice.SECONDS``), so a newcomer's first
hour compiles nothing (``benchmarks/first_hour.py``)."""

_sent = [0]  # passes this process has sent to des through auto


def run(
    trace,
    hw: HardwareConfig,
    *,
    seed: int = 0,
    record_events: bool = False,
    record_ops: bool = False,
) -> Result:
    """Simulate ``trace`` (already validated) on ``hw`` with ``des`` or ``fast`` (see above)."""
    passes = most_passes(trace, hw)
    loaded = fast_ready()
    if choose(passes, _sent[0], loaded, loaded or fast_cache_present()) == "fast":
        from wgpsim.engine import fast as engine
    else:
        from wgpsim.engine import des as engine

        _sent[0] += passes
    options = {"record_ops": True} if record_ops else {}
    return engine.run(trace, hw, seed=seed, record_events=record_events, **options)


def validate(trace, lds_bytes: int):
    """Check ``trace`` as the engine it will most likely run on does: the fast engine's
    compiled sweep once that engine is loaded, else ``wgpsim.trace.validate`` (the same
    errors either way)."""
    if fast_ready():
        from wgpsim.engine.fast import validate as check
    else:
        from wgpsim.trace.validate import validate as check
    return check(trace, lds_bytes)


def choose(passes: int, sent: int, fast_loaded: bool, fast_cached: bool = True) -> str:
    """The engine for a trace of ``passes`` passes (at most) when this process has sent
    ``sent`` passes to des so far, has (or not) the fast engine loaded, and finds (or not) the
    fast engine in numba's cache (without it, loading means compiling: a larger budget).

    >>> choose(32_000, sent=1_008, fast_loaded=False, fast_cached=False)
    'des'
    """
    budget = DES_PASSES if fast_cached else COLD_DES_PASSES
    return "fast" if fast_loaded or sent + passes > budget else "des"


def upfront(passes: int) -> str:
    """The engine for a whole job that will send about ``passes`` passes, chosen before its
    first trace: ``fast`` when that costs nothing more (``fast_ready``) or the job outgrows the
    des budget, else ``des``.

    >>> upfront(10**9)
    'fast'
    """
    if fast_ready():
        return "fast"
    return choose(passes, 0, False, fast_cache_present())


def fast_loaded() -> bool:
    """Whether this process has the fast engine loaded already (using it costs nothing more)."""
    return "wgpsim.engine.fast" in sys.modules


def fast_ready() -> bool:
    """Whether using the fast engine costs this process nothing more than ``des`` would: it is
    loaded already, or its kernels are built ahead of time (``_fast_backend``: loading them
    costs about a millisecond, without numba)."""
    from wgpsim.engine._fast_backend import built_present

    return fast_loaded() or built_present()


def fast_cache_present() -> bool:
    """Whether numba's on-disk cache holds an index of the fast engine's main loop: its
    ``.nbi`` file under ``NUMBA_CACHE_DIR`` when that is set (numba then reads and writes its
    cache there only), else in ``__pycache__`` beside the module. Only a hint: a stale index
    (an engine file changed since) still compiles, with the notice.

    >>> isinstance(fast_cache_present(), bool)
    True
    """
    pattern = "_fast_loop.run_loop-*.nbi"
    root = os.environ.get("NUMBA_CACHE_DIR")
    if root:
        return any(Path(root).glob(f"**/{pattern}"))
    return any((Path(__file__).resolve().parent / "__pycache__").glob(pattern))


def most_passes(trace, hw: HardwareConfig) -> int:
    """An upper bound of ``trace``'s passes: each LDS row's lane groups (control rows: none).

    >>> from wgpsim.trace.generate import streaming_trace
    >>> from wgpsim.hw.config import load_hardware
    >>> most_passes(streaming_trace(4, 32, "ds_load_b128", lambda w: 0), load_hardware())
    256
    """
    return int(_lane_groups(hw)[trace.op].sum(dtype=np.int64))


@lru_cache(maxsize=16)
def _lane_groups(hw: HardwareConfig) -> np.ndarray:
    """Lane groups (passes at most) per op code; 0 for control ops."""
    groups = np.zeros(len(OPS), dtype=np.int64)
    for code in range(NUM_LDS_OPS):
        groups[code] = 1 << len(hw.lane_masks_or_one_pass(OPS[code]))
    return groups
