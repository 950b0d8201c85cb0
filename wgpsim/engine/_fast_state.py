"""The fast engine's loop state, trace and hardware as named fields, and the queues the loop keeps.

Three named tuples hold everything the compiled loop reads or changes: ``LoopTrace`` (the trace's
columns and its passes), ``LoopHardware`` (the config's topology and constants) and ``LoopState``
(``new_state``). The state's tables are numpy structured arrays, one record per warp, SIMD,
pair, port and queue slot, so the loop reads ``st.warps[w].outstanding`` and
``st.pairs[p].busy_until``; the loop's own scalars (its clock, the arbiter's ``favor``, the
counts of events and completions) are the one record ``st.counters[0]``. The caller owns all
arrays, so a stopped loop resumes where it was (``run_loop`` stops when its event log is full).

Warp events and load completions wait in two binary heaps ordered by (time, creation order):
simpy's order for events, des's for completions; so a long latency or delay costs nothing
until it ends (``_fast_heaps`` keeps them, compiled). This module is plain numpy: a process
whose compiled kernels come from the built extension (``_fast_backend``) never imports numba.

The rows of each warp, in program order (a stable sort by warp):

>>> rows = np.zeros(4, dtype=np.int64)
>>> warp_order(np.array([1, 0, 1, 0], dtype=np.int32), 2, rows).tolist(), rows.tolist()
([0, 2, 4], [1, 3, 0, 2])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

WAKE, BARRIER_DONE, RELEASE = np.int64(0), np.int64(1), np.int64(2)
"""Kinds of warp event: a warp resumes; a barrier's latency ends; the barrier releases."""
NONE = np.int64(-1)
NEVER = np.int64(np.iinfo(np.int64).max)
GRANTED, STALLED = np.int64(0), np.int64(1)
"""``status`` of an event-log row (rows: cycle, pair, port, warp, row, pass, status)."""
TIME, ORDER, KIND, WARP = range(4)
"""Columns of the heaps ``st.events`` and ``st.done`` (which leaves ``KIND`` 0)."""
ARRIVE, ISSUE, FIRST_GRANT, SERVED, COMPLETE, LEAVE, STALL_CYCLES = range(7)
"""Columns of ``st.times`` (``wgpsim.engine.result.OP_TIMES``, in that order)."""
MAX_CYCLE = np.int64(2**62)
"""``wgpsim.engine.limits.MAX_CYCLE``: scheduling anything later sets ``counters.overflow``."""


PAIR, ISSUED, PARTS = range(3)
"""Rows of the ``heads`` argument of ``grant``."""
OLDEST_FIRST, ROUND_ROBIN, FIXED_PRIORITY = range(3)
POLICY_CODES = {
    "oldest_first": OLDEST_FIRST,
    "round_robin": ROUND_ROBIN,
    "fixed_priority": FIXED_PRIORITY,
}
"""``arbiter.grant_policy`` names as ``grant`` takes them."""


def policy_of(hw) -> np.ndarray:
    """``grant``'s ``policy`` argument for config ``hw``: (policy code, alternate ties, 1 if
    heads can conflict on a partition: the LDS has more than one)."""
    arbiter = hw.arbiter
    alternate = arbiter.tie_break == "alternate"
    partitioned = hw.partitions.count > 1
    return np.array([POLICY_CODES[arbiter.grant_policy], alternate, partitioned], dtype=np.int64)


def _fields(**names: type) -> np.dtype:
    return np.dtype([(name, t) for name, t in names.items()])


COUNTERS = _fields(
    now=np.int64,  # the loop's clock, kept for a resumed call
    resume=np.int64,  # 1: a resumed call continues with the LDS step of ``now``
    last_event=np.int64,  # the last cycle a warp event fired
    last_tick=np.int64,  # the last cycle the LDS stepped
    seq=np.int64,  # events created so far (orders events of one cycle as simpy's ids do)
    events=np.int64,  # size of the event heap
    completions=np.int64,  # size of the completion heap (loads in flight)
    overflow=np.int64,  # 1: something was scheduled past MAX_CYCLE; the loop stops
    waiting=np.int64,  # warps with an issue request
    favor=np.int64,  # the arbiter's tie-break pair (``rules.grant``)
    arrived=np.int64,  # warps at the barrier
    clocks=np.int64,  # clock reads recorded
    logged=np.int64,  # event-log rows written
)
WARP_FIELDS = _fields(
    pc=np.int64,  # index into ``LoopTrace.warp_rows`` of its next op
    outstanding=np.int64,  # loads in flight
    request=np.int64,  # the LDS row it asks to issue, -1 none
    wait_n=np.int64,  # n of the ``wait_ds n`` it waits in, -1 none
    jittered=np.int64,  # 1 once it has waited its drift before its request
    finished=np.int64,
    tensors=np.int64,  # TDM instructions outstanding (s_wait_tensorcnt's counter)
    wait_t=np.int64,  # n of the ``wait_tensor n`` it waits in, -1 none
)
SIMD_FIELDS = _fields(rr=np.int64, next_issue=np.int64)  # warp index tried first; cycle
PAIR_FIELDS = _fields(
    first=np.int64,  # SIMD slot offered the queue first
    head=np.int64,  # ring-buffer index of the queue's head
    len=np.int64,  # instructions in the queue
    busy_until=np.int64,  # end of its pass in service (whose partitions are ``st.held[p]``)
    stalls=np.int64,  # partition-conflict stall cycles
    copy_head=np.int64,  # ring-buffer index of the copy engine's oldest TDM row (``st.copies``)
    copy_len=np.int64,  # TDM rows handed over, not yet in the queue
)
PORT_FIELDS = _fields(free_at=np.int64, busy=np.int64)
SLOT_FIELDS = _fields(row=np.int64, warp=np.int64, issued=np.int64, next=np.int64, end=np.int64)
"""A queued instruction: its trace row, warp, issue cycle, next pass to grant, end pass."""
CLOCK_FIELDS = _fields(warp=np.int64, label=np.int64, cycle=np.int64)


class LoopTrace(NamedTuple):
    """The trace as the loop reads it: the rows of warp w are ``warp_rows[warp_first[w]:
    warp_first[w+1]]`` in program order, the passes of row r are ``pass_start[r]:
    pass_start[r+1]`` (partition masks ``pass_parts``, ``pass_cycles`` bank cycles);
    ``jitter`` is empty without drift."""

    warp_rows: np.ndarray
    warp_first: np.ndarray
    ops: np.ndarray
    args: np.ndarray
    pass_start: np.ndarray
    pass_parts: np.ndarray
    pass_cycles: np.ndarray
    jitter: np.ndarray


class LoopHardware(NamedTuple):
    """The config as the loop reads it: the warps of each SIMD and the SIMDs of each pair
    (padded with -1, and their counts), the op codes, the timing constants and the grant
    policy (``_fast_grant.policy_of``)."""

    simd_warps: np.ndarray
    simd_nwarps: np.ndarray
    pair_simds: np.ndarray
    pair_nsimds: np.ndarray
    pair_of: np.ndarray
    nports: int
    num_lds_ops: int
    wait_ds: int
    barrier: int
    clock: int
    delay: int
    tdm: int
    wait_tensor: int
    lds_latency: int
    queue_depth: int
    issue_interval: int
    dscnt_max: int
    clock_latency: int
    barrier_latency: int
    policy: np.ndarray


class LoopState(NamedTuple):
    """Everything the loop changes (``new_state``)."""

    counters: np.ndarray  # one COUNTERS record
    warps: np.ndarray  # WARP_FIELDS per warp
    simds: np.ndarray  # SIMD_FIELDS per SIMD
    pairs: np.ndarray  # PAIR_FIELDS per pair
    held: np.ndarray  # partitions held by each pair's pass in service (0 = none)
    queue: np.ndarray  # SLOT_FIELDS [pair, queue_depth]: each pair's ring buffer
    ports: np.ndarray  # PORT_FIELDS per port
    arrival: np.ndarray  # warps at the barrier, in arrival order
    releasing: np.ndarray  # the warps a barrier releases
    clocks: np.ndarray  # CLOCK_FIELDS per clock read
    events: np.ndarray  # the warp events' heap [n, (TIME, ORDER, KIND, WARP)]
    done: np.ndarray  # the load completions' heap [n, (TIME, ORDER, _, WARP)]
    heads: np.ndarray  # grant scratch: pair, issued, partitions of each head
    ports_free: np.ndarray  # grant scratch
    order: np.ndarray  # grant scratch
    decision: np.ndarray  # grant scratch: grants and stalls
    times: np.ndarray  # per trace row its cycles [rows, ARRIVE..STALL_CYCLES]; [0, 7]: not kept
    copies: np.ndarray  # per pair the copy engine's ring buffer of (row, warp) [pair, n, 2]


def warp_order(warp: np.ndarray, nwarps: int, rows: np.ndarray) -> np.ndarray:
    """Fill ``rows`` with the trace rows grouped by warp, each warp's in program order (a
    stable sort by warp); returns ``first``: warp w's rows are ``rows[first[w]:first[w + 1]]``."""
    rows[:] = np.argsort(warp, kind="stable")
    first = np.zeros(nwarps + 1, dtype=np.int64)
    np.cumsum(np.bincount(warp, minlength=nwarps), out=first[1:])
    return first


def new_state(tr: LoopTrace, hw: LoopHardware, times: bool = False) -> LoopState:
    """The loop's state before cycle 0; every warp is due to start at cycle 0. ``times``:
    keep every row's cycles (``record_ops``)."""
    nwarps, nsimds, npairs = len(tr.warp_first) - 1, len(hw.simd_nwarps), len(hw.pair_nsimds)
    counters = np.zeros(1, COUNTERS)
    counters["last_tick"] = -1
    # loads in flight: at most dscnt_max per warp, and at most the trace's LDS rows
    tdm_rows = int((tr.ops == hw.tdm).sum())
    tdm_ends = int(((tr.ops == hw.tdm) & (tr.args == 1)).sum())
    ds_rows = int((tr.ops < hw.num_lds_ops).sum()) - tdm_rows
    # in flight: at most dscnt_max ds loads per warp (and the trace's), and every TDM end
    in_flight = min(ds_rows, nwarps * hw.dscnt_max) + tdm_ends + 1
    warps = np.zeros(nwarps, WARP_FIELDS)
    warps["pc"] = tr.warp_first[:-1]
    warps["request"] = warps["wait_n"] = warps["wait_t"] = -1
    st = LoopState(
        counters=counters,
        warps=warps,
        simds=np.zeros(nsimds, SIMD_FIELDS),
        pairs=np.zeros(npairs, PAIR_FIELDS),
        held=np.zeros(npairs, np.int64),
        queue=np.zeros((npairs, hw.queue_depth), SLOT_FIELDS),
        ports=np.zeros(hw.nports, PORT_FIELDS),
        arrival=np.zeros(nwarps, np.int64),
        releasing=np.zeros(nwarps, np.int64),
        clocks=np.zeros(int((tr.ops == hw.clock).sum()), CLOCK_FIELDS),
        events=np.zeros((nwarps + 2, 4), np.int64),  # a warp waits for one event at most
        done=np.zeros((in_flight, 4), np.int64),
        heads=np.zeros((3, npairs), np.int64),
        ports_free=np.zeros(hw.nports, np.bool_),
        order=np.zeros(npairs, np.int64),
        decision=np.zeros((2, 2 * npairs), np.int64),
        times=np.full((len(tr.ops) if times else 0, STALL_CYCLES + 1), -1, np.int64),
        copies=np.zeros((npairs, tdm_rows + 1, 2), np.int64),
    )
    if times:
        st.times[:, STALL_CYCLES] = 0
    _start_warps(st, nwarps)
    return st


def _start_warps(st: LoopState, nwarps: int) -> None:
    """simpy starts the warp processes in warp order at time 0: the event heap holds (0, w,
    WAKE, w) for each warp w, in that order (each pushed after the one before it, no smaller:
    a heap already), and the next event is number ``nwarps``."""
    st.events[:nwarps, TIME] = 0
    st.events[:nwarps, ORDER] = st.events[:nwarps, WARP] = np.arange(nwarps)
    st.events[:nwarps, KIND] = WAKE
    st.counters["events"] = st.counters["seq"] = nwarps
