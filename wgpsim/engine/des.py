"""The simpy reference engine: one process per warp, one LDS process stepping cycle by cycle.

The story (docs/DESIGN.md, "The hardware model" and "Engine timing rules"): a warp runs its ops
in order; an LDS instruction asks its SIMD to issue it; the SIMD puts the instruction's passes in
its pair's queue; each cycle the arbiter grants the pairs' head passes a port unless they share a
partition; the load completes ``lds_latency`` cycles after its last pass is served, and
``wait_ds`` / ``barrier`` / ``clock`` / ``delay`` do what the hardware's instructions do.

The seed's microbenchmark with all four rows in one partition serializes 256 passes:

>>> from wgpsim.trace.generate import streaming_trace
>>> seed_plain = streaming_trace(4, 32, "ds_load_b128", lambda w: w * 16384, timed=True)
>>> r = run(seed_plain, load_hardware())
>>> r.measurement(), r.passes, r.port_busy_cycles
(323, 256, {'L': 256, 'C': 0})
"""

from __future__ import annotations

import numpy as np
import simpy
from simpy.events import Event

from wgpsim.engine.des_lds import Lds, Warp
from wgpsim.engine.limits import MAX_CYCLE, check_inputs, overflow
from wgpsim.engine.result import OP_TIMES, ClockReads, Result
from wgpsim.errors import TraceError
from wgpsim.hw.config import HardwareConfig, load_hardware  # noqa: F401 (doctest)
from wgpsim.trace.instructions import (
    BARRIER,
    CLOCK,
    DELAY,
    INSTRUCTIONS,
    NUM_LDS_OPS,
    OPS,
    TDM,
    WAIT_DS,
    WAIT_TENSOR,
)


class _Barrier:
    """Every warp of the workgroup waits; all leave ``latency`` cycles after the last arrives."""

    def __init__(self, env: simpy.Environment, size: int, latency: int) -> None:
        self.env, self.size, self.latency = env, size, latency
        self.arrived = 0
        self.release = env.event()

    def arrive(self) -> Event:
        release = self.release
        self.arrived += 1
        if self.arrived == self.size:
            self.arrived, self.release = 0, self.env.event()
            self.env.timeout(later(self.env.now, self.latency)).callbacks.append(
                lambda _: release.succeed()
            )
        return release


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
    env = simpy.Environment()
    lds = Lds(env, trace, hw, record_events, record_ops)
    barrier = _Barrier(env, trace.num_warps, hw.timing.barrier_latency)
    drift = jitter(len(trace), hw, seed)
    delays = None if drift is None else drift.tolist()
    clocks: list[tuple[int, int, int]] = []  # (warp, label index, cycle)
    finished = [False] * trace.num_warps
    ops, args = trace.op.tolist(), trace.arg.tolist()
    rows_of = [np.flatnonzero(trace.warp == w).tolist() for w in range(trace.num_warps)]
    recording = lds.times is not None  # record_ops

    def warp_process(warp: Warp):
        for row in rows_of[warp.id]:
            op = ops[row]
            if recording:
                lds.note(row, "arrive", env.now)
            if op == TDM:
                lds.hand_over(warp, row)
            elif op < NUM_LDS_OPS:
                if delays is not None and delays[row]:
                    yield env.timeout(later(env.now, delays[row]))
                yield lds.request(warp, row)
            elif op == WAIT_DS:
                done = lds.wait(warp, args[row])
                if done is not None:
                    yield done
            elif op == WAIT_TENSOR:
                done = lds.wait_tensor(warp, args[row])
                if done is not None:
                    yield done
            elif op == BARRIER:
                yield barrier.arrive()
            elif op == CLOCK:
                clocks.append((warp.id, int(args[row]), int(env.now)))
                yield env.timeout(later(env.now, hw.timing.clock_latency))
            elif op == DELAY and args[row]:
                yield env.timeout(later(env.now, args[row]))
            if recording:
                lds.note(row, "leave", env.now)
        finished[warp.id] = True

    for warp in lds.warps:
        env.process(warp_process(warp))
    env.run()
    if not all(finished):
        stuck = [w for w, ok in enumerate(finished) if not ok]
        raise TraceError(
            f"warps {stuck} never finished (a barrier or wait_ds that cannot complete)"
        )
    return _result(trace, hw, lds, clocks, int(env.now), seed, record_events)


def _op_log(times: dict[str, list[int]] | None) -> np.ndarray | None:
    """The recorded per-row cycles as ``Result.op_log`` (int64 [rows, OP_TIMES])."""
    if times is None:
        return None
    return np.array([times[c] for c in OP_TIMES], dtype=np.int64).T.copy()


def later(now: float, cycles: int) -> int:
    """``cycles``, the wait of a timeout at ``now``; ``limits.overflow()`` past the bound."""
    if now + cycles > MAX_CYCLE:
        raise overflow()
    return cycles


def jitter(n: int, hw: HardwareConfig, seed: int) -> np.ndarray | None:
    """Drift model ``uniform``: per trace row, 0..jitter_cycles extra cycles before issue
    (int64; None without drift); shared by every engine."""
    if hw.drift.model != "uniform" or hw.drift.jitter_cycles == 0:
        return None
    rng = np.random.default_rng(seed)
    return rng.integers(0, hw.drift.jitter_cycles + 1, size=n, dtype=np.int64)


def instruction_counts(trace) -> dict[str, int]:
    """Instructions by kind: ``load``/``store``/``load_tr`` for LDS ops, the op name otherwise."""
    counts: dict[str, int] = {}
    codes, freq = np.unique(trace.op, return_counts=True)
    for code, count in zip(codes.tolist(), freq.tolist(), strict=True):
        name = OPS[code]
        kind = INSTRUCTIONS[name].kind if name in INSTRUCTIONS else name
        counts[kind] = counts.get(kind, 0) + count
    return counts


def partition_accesses(table, hw: HardwareConfig) -> tuple[int, ...]:
    """Passes touching each physical partition."""
    masks = table.partitions
    return tuple(int(((masks >> p) & 1).sum()) for p in range(hw.partitions.count))


def _clock_reads(clocks: list[tuple[int, int, int]], labels) -> ClockReads:
    """The ``(warp, label index, cycle)`` reads as arrays (``Result.clocks`` is built from them
    when read: a run imports no pandas)."""
    warp, label, cycle = np.array(clocks, dtype=np.int64).reshape(-1, 3).T.copy()
    return ClockReads(warp, label, cycle, tuple(labels))


def _result(trace, hw, lds: Lds, clocks, now: int, seed: int, record: bool) -> Result:
    table = lds.table
    return Result(
        clocks=_clock_reads(clocks, trace.labels),
        total_cycles=now,
        bytes=int(table.bytes.sum()),
        passes=len(table),
        bank_cycles=int(table.bank_cycles.sum()),
        port_busy_cycles=dict(zip(hw.ports.names, lds.port_busy, strict=True)),
        partition_stall_cycles=dict(zip(hw.pair_names, lds.stalls, strict=True)),
        partition_accesses=partition_accesses(table, hw),
        instructions=instruction_counts(trace),
        engine="des",
        seed=seed,
        hardware=hw.name,
        event_log=lds.event_log() if record else None,
        op_log=_op_log(lds.times),
    )
