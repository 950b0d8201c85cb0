"""The fast engine: the des reference's model, compiled, with the same ``Result`` cycle for cycle.

``simulate(trace, hw, engine="fast")`` splits every instruction into passes in one compiled
sweep over the trace (``_fast_passes.loop_passes``) and replays the warps, SIMDs, queues and
arbiter (``_fast_grant.grant``) in one compiled event loop (``_fast_loop.run_loop``) that skips
the cycles in which the LDS can only wait (docs/DESIGN.md, "Engines"). Its rules are its own
compiled statement, independent of ``wgpsim.hw.rules`` (which ``des`` uses).

The seed's microbenchmark with all four rows in one partition, as in ``des``:

>>> from wgpsim.trace.generate import streaming_trace
>>> seed_plain = streaming_trace(4, 32, "ds_load_b128", lambda w: w * 16384, timed=True)
>>> r = run(seed_plain, load_hardware())
>>> r.measurement(), r.passes, r.port_busy_cycles, r.engine
(323, 256, {'L': 256, 'C': 0}, 'fast')
"""

from __future__ import annotations

import hashlib
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

from wgpsim.engine import _compile_notice, _fast_grant, _fast_loop, _fast_state
from wgpsim.engine._fast_check import trace_is_valid
from wgpsim.engine._fast_grant import policy_of
from wgpsim.engine._fast_loop import run_loop
from wgpsim.engine._fast_passes import loop_passes
from wgpsim.engine._fast_state import LoopHardware, LoopTrace, new_state, warp_order
from wgpsim.engine.des import instruction_counts, jitter, partition_accesses
from wgpsim.engine.limits import check_inputs, overflow
from wgpsim.engine.result import CLOCK_COLUMNS, ClockReads, EventLog, Result
from wgpsim.errors import TraceError
from wgpsim.hw.config import HardwareConfig, load_hardware  # noqa: F401 (doctest)
from wgpsim.trace.instructions import (
    BARRIER,
    CLOCK,
    DELAY,
    NUM_LDS_OPS,
    TDM,
    WAIT_DS,
    WAIT_TENSOR,
)
from wgpsim.trace.validate import is_validated, remember_valid
from wgpsim.trace.validate import validate as check_trace


def _drop_stale_loop_cache() -> None:
    """Numba checks a cached function only against its own file, but ``run_loop`` inlines
    ``_fast_grant`` and ``_fast_state``: when any of the three files changed since the cache
    was written, drop the cached loop so that it is compiled again."""
    sources = (_fast_grant.__file__, _fast_state.__file__, _fast_loop.__file__)
    digest = hashlib.sha256(b"".join(Path(f).read_bytes() for f in sources)).hexdigest()
    try:
        cache = Path(run_loop._cache._cache_path)
        stamp = cache / "_fast_loop.sources.sha256"
        if stamp.is_file() and stamp.read_text() == digest:
            return
        for stale in (*cache.glob("_fast_loop.*.nb[ic]"), *cache.glob("_fast_state.*.nb[ic]")):
            stale.unlink(missing_ok=True)
        stamp.write_text(digest)
    except (AttributeError, OSError):  # no cache (or not ours to change): numba decides
        pass


def _skip_scipy_blas_probe() -> None:
    """Load numba's numpy registries without its BLAS probe: on its first dispatch numba
    imports ``numba.np.arraymath``, whose ``_check_blas`` imports ``scipy.linalg`` when SciPy
    is installed (0.2-0.25 CPU-s of a 0.55 CPU-s load, for a BLAS this engine never calls).
    With ``scipy.linalg.cython_blas`` absent for that one import the probe answers "no BLAS",
    which only sends numba's ``np.correlate``/``np.convolve`` to their plain loop in this
    process (``np.dot`` and ``np.linalg`` look for SciPy again when compiled). When the
    process has ``scipy.linalg`` already, numba finds it as usual."""
    name = "scipy.linalg.cython_blas"
    if "scipy.linalg" in sys.modules or "numba.np.arraymath" in sys.modules:
        return
    sys.modules[name] = None  # type: ignore[assignment]  (import of it: ImportError)
    try:
        import numba.np.arraymath  # noqa: F401  (its _check_blas runs once, here)
    finally:
        if sys.modules.get(name, 0) is None:
            del sys.modules[name]


_drop_stale_loop_cache()
_skip_scipy_blas_probe()
_compile_notice.install()  # one line on stderr while numba compiles the engine (cold cache)


def validate(trace, lds_bytes: int):
    """``wgpsim.trace.validate.validate`` (the same errors), but a valid trace costs one
    compiled sweep (``_fast_check``) instead of the numpy checks; returns ``trace``."""
    if is_validated(trace, lds_bytes):
        return trace
    if trace_is_valid(trace, lds_bytes):
        return remember_valid(trace, lds_bytes)
    return check_trace(trace, lds_bytes)  # raises, naming the first bad row


def run(
    trace,
    hw: HardwareConfig,
    *,
    seed: int = 0,
    record_events: bool = False,
    record_ops: bool = False,
) -> Result:
    """Simulate ``trace`` (already validated) on ``hw``; see ``wgpsim.engine.simulate``."""
    check_inputs(trace, hw)
    table = loop_passes(trace.op, trace.addr, hw, index=record_events, distance=trace.arg)
    warp_rows = np.empty(len(trace), np.int32 if len(trace) < 2**31 else np.int64)
    warp_first = warp_order(trace.warp, trace.num_warps, warp_rows)
    delays = jitter(len(trace), hw, seed)
    tr = LoopTrace(
        warp_rows=warp_rows,
        warp_first=warp_first,
        ops=trace.op,
        args=trace.arg,
        pass_start=table.start,
        pass_parts=table.partitions,
        pass_cycles=table.bank_cycles,
        jitter=np.zeros(0, dtype=np.int64) if delays is None else delays,
    )
    loop_hw = loop_hardware(hw, trace.num_warps)
    st = new_state(tr, loop_hw, times=record_ops)
    # a row per granted pass, and per stall (a few: the loop stops when full and resumes)
    log = np.zeros((len(table) + len(hw.pair_names) if record_events else 0, 7), np.int64)
    while not run_loop(tr, loop_hw, st, log, record_events):
        log = np.concatenate([log, np.zeros_like(log)])  # full: twice the room, and resume
    counters = st.counters[0]
    if counters["overflow"]:
        raise overflow()
    finished = st.warps["finished"] == 1
    if not finished.all():
        stuck = np.flatnonzero(~finished).tolist()
        raise TraceError(
            f"warps {stuck} never finished (a barrier or wait_ds that cannot complete)"
        )
    return Result(
        clocks=_clocks(st.clocks[: counters["clocks"]], trace.labels),
        total_cycles=int(max(counters["last_event"], counters["last_tick"] + 1)),
        bytes=table.bytes,
        passes=len(table),
        bank_cycles=int(table.bank_cycles.sum(dtype=np.int64)),
        port_busy_cycles=dict(zip(hw.ports.names, st.ports["busy"].tolist(), strict=True)),
        partition_stall_cycles=dict(zip(hw.pair_names, st.pairs["stalls"].tolist(), strict=True)),
        partition_accesses=partition_accesses(table, hw),
        instructions=instruction_counts(trace),
        engine="fast",
        seed=seed,
        hardware=hw.name,
        event_log=_events(log[: counters["logged"]], trace, table, hw) if record_events else None,
        op_log=st.times if record_ops else None,
    )


@lru_cache(maxsize=64)
def loop_hardware(hw: HardwareConfig, num_warps: int) -> LoopHardware:
    """The hardware as ``run_loop`` takes it: SIMD -> warps and pair -> SIMDs (padded), ports,
    op codes, timing constants and the grant policy."""
    simd_of = np.array([hw.simd_of_warp(w) for w in range(num_warps)], dtype=np.int64)
    simd_warps, simd_nwarps = _padded([np.flatnonzero(simd_of == s) for s in range(hw.wgp.simds)])
    pair_simds, pair_nsimds = _padded([np.array(simds) for _, simds in hw.wgp.pairs])
    t = hw.timing
    return LoopHardware(
        simd_warps=simd_warps,
        simd_nwarps=simd_nwarps,
        pair_simds=pair_simds,
        pair_nsimds=pair_nsimds,
        pair_of=np.array([hw.pair_of_warp(w) for w in range(num_warps)], dtype=np.int64),
        nports=hw.num_ports,
        num_lds_ops=NUM_LDS_OPS,
        wait_ds=WAIT_DS,
        barrier=BARRIER,
        clock=CLOCK,
        delay=DELAY,
        tdm=TDM,
        wait_tensor=WAIT_TENSOR,
        lds_latency=t.lds_latency,
        queue_depth=t.queue_depth,
        issue_interval=t.issue_interval,
        dscnt_max=t.dscnt_max,
        clock_latency=t.clock_latency,
        barrier_latency=t.barrier_latency,
        policy=policy_of(hw),
    )


def _padded(groups: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Ragged int lists as (array [n, longest] padded with -1, lengths)."""
    lengths = np.array([len(g) for g in groups], dtype=np.int64)
    out = np.full((len(groups), max(lengths.max(initial=0), 1)), -1, dtype=np.int64)
    for i, g in enumerate(groups):
        out[i, : len(g)] = g
    return out, lengths


def _clocks(clocks: np.ndarray, labels: tuple[str, ...]) -> ClockReads:
    """The clock reads (warp, label, cycle) as arrays: ``Result.clocks`` is the table des
    reports, built only when read."""
    warp, label, cycle = (np.ascontiguousarray(clocks[f]) for f in CLOCK_COLUMNS)
    return ClockReads(warp, label, cycle, tuple(labels))


def _events(log: np.ndarray, trace, table, hw: HardwareConfig) -> EventLog:
    """The arbiter log as des records it (``Result.events()`` builds the table when read)."""
    return EventLog(
        np.ascontiguousarray(log, dtype=np.int64),
        trace.op,
        table.index,
        table.partitions,
        table.bank_cycles,
        tuple(hw.pair_names),
        tuple(hw.ports.names),
    )
