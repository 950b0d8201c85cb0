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

from contextlib import suppress
from functools import lru_cache

import numpy as np

from wgpsim.engine._fast_backend import Recorded, kernels
from wgpsim.engine._fast_passes import loop_passes
from wgpsim.engine._fast_state import LoopHardware, LoopTrace, new_state, policy_of, warp_order
from wgpsim.engine.des import instruction_counts, jitter, partition_accesses
from wgpsim.engine.limits import check_inputs, overflow
from wgpsim.engine.result import CLOCK_COLUMNS, ClockReads, EventLog, Result
from wgpsim.errors import TraceError
from wgpsim.hw.config import HardwareConfig, load_hardware
from wgpsim.trace.instructions import (
    BARRIER,
    CLOCK,
    DELAY,
    NUM_LDS_OPS,
    OP_ACCESS_BYTES,
    OP_ADDRESSES,
    OP_ALIGNMENT,
    OP_OFFSET_UNIT,
    OPS,
    TDM,
    WAIT_DS,
    WAIT_TENSOR,
)
from wgpsim.trace.validate import MAX_DELAY_CYCLES, is_validated, remember_valid
from wgpsim.trace.validate import validate as check_trace

_CODES = np.array(
    [len(OPS), NUM_LDS_OPS, WAIT_DS, WAIT_TENSOR, TDM, DELAY, CLOCK, BARRIER], dtype=np.int64
)
"""The op codes the rules name, as the kernel takes them (``_fast_check.rows_are_valid``)."""
_PER_OP = np.stack([OP_ACCESS_BYTES, OP_ADDRESSES, OP_ALIGNMENT, OP_OFFSET_UNIT]).astype(np.int64)
"""Per op code: access bytes, addresses per lane, alignment, offset unit (0: none)."""


def trace_is_valid(trace, lds_bytes: int) -> bool:
    """True if ``trace`` breaks none of ``wgpsim.trace.validate``'s rules for an LDS of
    ``lds_bytes`` bytes (what ``validate`` would accept); one compiled sweep."""
    return bool(
        _kernels().rows_are_valid(
            trace.op,
            trace.warp,
            trace.arg,
            trace.addr,
            np.int64(trace.num_warps),
            np.int64(len(trace.labels)),
            np.int64(lds_bytes),
            _CODES,
            _PER_OP,
            np.float64(MAX_DELAY_CYCLES),
        )
    )


EXEMPLARS = ("mi450", "mi450 with an LDS per SIMD pair")
"""The hardware whose kernel argument types a built engine holds (``_fast_backend``): MI450
(six partitions) and the hardware of the loop what-if ``separate_partitions`` (eleven); both,
and gfx950 and gfx942 (one), pass the same types (16-bit partition masks,
``_fast_passes._mask_dtype``), so one variant of each kernel is built."""


def _kernels():
    """The compiled kernels (``_fast_backend.kernels``; built now, on the ``EXEMPLARS``,
    when none were and a C compiler is found)."""
    return kernels(exemplars=_exemplar_runs)


def _exemplar_runs() -> None:
    """Validate and run a small trace on each of ``EXEMPLARS`` (under ``_fast_backend.record``,
    which records the kernels' arguments and stops each run)."""
    from wgpsim.trace.generate import streaming_trace

    trace = streaming_trace(4, 2, "ds_load_b128", lambda w: w * 512, timed=True)
    hw = load_hardware()
    for h in (hw, hw.with_lds_per_pair()):
        trace_is_valid(trace, h.partitions.lds_bytes)
        with suppress(Recorded):
            run(trace, h)


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
    run_loop = _kernels().run_loop  # chosen (or built) before the pass table's kernel runs
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


def bank_conflict_cycles(ops: np.ndarray, addr: np.ndarray, hw: HardwareConfig, distance) -> int:
    """The passes' bank cycles beyond one each, of LDS rows ``ops``/``addr`` (``distance``: a
    2addr form's second address), from the compiled pass table.

    >>> addr = np.stack([512 * (np.arange(32) % 2)])  # lanes alternate between two bank rows
    >>> bank_conflict_cycles(np.array([0]), addr, load_hardware(), np.zeros(1))  # ds_load_b32
    1
    """
    table = loop_passes(ops, addr, hw, index=False, distance=distance)
    return int(table.bank_cycles.sum(dtype=np.int64)) - len(table)


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
