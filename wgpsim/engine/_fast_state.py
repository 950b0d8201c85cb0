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
until it ends. The compiled helpers
take the tuples as borrowed views (``borrowed``: no reference counting) and are inlined into
``run_loop``.

The rows of each warp, in program order (a counting sort by warp):

>>> rows = np.zeros(4, dtype=np.int64)
>>> warp_order(np.array([1, 0, 1, 0], dtype=np.int32), 2, rows).tolist(), rows.tolist()
([0, 2, 4], [1, 3, 0, 2])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

WAKE, BARRIER_DONE, RELEASE = np.int64(0), np.int64(1), np.int64(2)
"""Kinds of warp event: a warp resumes; a barrier's latency ends; the barrier releases."""
NONE = np.int64(-1)
NEVER = np.iinfo(np.int64).max
GRANTED, STALLED = np.int64(0), np.int64(1)
"""``status`` of an event-log row (rows: cycle, pair, port, warp, row, pass, status)."""
TIME, ORDER, KIND, WARP = range(4)
"""Columns of the heaps ``st.events`` and ``st.done`` (which leaves ``KIND`` 0)."""
ARRIVE, ISSUE, FIRST_GRANT, SERVED, COMPLETE, LEAVE, STALL_CYCLES = range(7)
"""Columns of ``st.times`` (``wgpsim.engine.result.OP_TIMES``, in that order)."""
MAX_CYCLE = np.int64(2**62)
"""``wgpsim.engine.limits.MAX_CYCLE``: scheduling anything later sets ``counters.overflow``."""


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


@njit(cache=True)
def warp_order(warp, nwarps, rows):
    """Fill ``rows`` with the trace rows grouped by warp, each warp's in program order (a
    counting sort); returns ``first``: warp w's rows are ``rows[first[w]:first[w + 1]]``."""
    first = np.zeros(nwarps + 1, dtype=np.int64)
    for r in range(len(warp)):
        first[warp[r] + 1] += 1
    for w in range(nwarps):
        first[w + 1] += first[w]
    fill = first[:nwarps].copy()
    for r in range(len(warp)):
        rows[fill[warp[r]]] = r
        fill[warp[r]] += 1
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


@njit(cache=True)
def _start_warps(st, nwarps):
    """simpy starts the warp processes in warp order at time 0."""
    for w in range(nwarps):
        push(st, 0, WAKE, w)


@intrinsic
def borrowed(typingctx, value):
    """``value`` (an array, or a tuple of arrays and scalars) with its arrays viewed without
    a reference (no meminfo): numba then skips their reference counting, which otherwise
    costs an atomic increment and decrement per array argument of every compiled call. The
    views must not outlive the arrays they borrow from, nor leave the compiled code."""

    def strip(context, builder, ty, val):
        if not isinstance(ty, types.Array):
            return val
        view = context.make_array(ty)(context, builder, value=val)
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        return view._getvalue()

    def codegen(context, builder, signature, args):
        ty, val = signature.args[0], args[0]
        if not isinstance(ty, types.BaseTuple):
            return strip(context, builder, ty, val)
        for i, item in enumerate(ty):
            part = strip(context, builder, item, builder.extract_value(val, i))
            val = builder.insert_value(val, part, i)
        return val

    return value(value), codegen


@njit(cache=True, inline="always")
def push(st, time, kind, w):
    """Schedule a warp event; ``seq`` orders events of one cycle as simpy's event ids do."""
    c = st.counters[0]
    if time > MAX_CYCLE or time < 0:  # < 0: 2**62 + 2**62 wrapped around
        c.overflow = 1
    c.events = _push_heap(st.events, c.events, time, c.seq, kind, w)
    c.seq += 1


@njit(cache=True, inline="always")
def complete(st, w, cycle):
    """A load of warp ``w`` completes at ``cycle`` (loads of one cycle retire in creation
    order, as in des)."""
    c = st.counters[0]
    if cycle > MAX_CYCLE or cycle < 0:
        c.overflow = 1
    c.completions = _push_heap(st.done, c.completions, cycle, c.seq, 0, w)
    c.seq += 1


@njit(cache=True, inline="always")
def complete_tensor(st, w, cycle):
    """A TDM instruction of warp ``w`` completes at ``cycle`` (its ``KIND`` 1 in the heap)."""
    c = st.counters[0]
    if cycle > MAX_CYCLE or cycle < 0:
        c.overflow = 1
    c.completions = _push_heap(st.done, c.completions, cycle, c.seq, 1, w)
    c.seq += 1


@njit(cache=True, inline="always")
def _push_heap(heap, n, key, seq, a, b):
    """Add (key, seq, a, b) to the binary min-heap ``heap[:n]`` ordered by (key, seq);
    returns its new size."""
    i = n
    while i > 0:
        parent = (i - 1) // 2
        if heap[parent, 0] < key or (heap[parent, 0] == key and heap[parent, 1] < seq):
            break
        for c in range(4):
            heap[i, c] = heap[parent, c]
        i = parent
    heap[i, 0], heap[i, 1], heap[i, 2], heap[i, 3] = key, seq, a, b
    return n + 1


@njit(cache=True, inline="always")
def pop(heap, n):
    """Remove the smallest entry ``heap[0]`` of the heap ``heap[:n]``; returns its new size."""
    n -= 1
    key, seq, a, b = heap[n, 0], heap[n, 1], heap[n, 2], heap[n, 3]
    i = 0
    while 2 * i + 1 < n:
        child = 2 * i + 1
        if child + 1 < n and _before(heap, child + 1, child):
            child += 1
        if heap[child, 0] > key or (heap[child, 0] == key and heap[child, 1] > seq):
            break
        for c in range(4):
            heap[i, c] = heap[child, c]
        i = child
    heap[i, 0], heap[i, 1], heap[i, 2], heap[i, 3] = key, seq, a, b
    return n


@njit(cache=True, inline="always")
def _before(heap, i, j):
    return heap[i, 0] < heap[j, 0] or (heap[i, 0] == heap[j, 0] and heap[i, 1] < heap[j, 1])


@njit(cache=True, inline="always")
def wrap(x, n):
    """``x % n`` for ``0 <= x < 2n`` (round-robin and ring-buffer indices), without a division."""
    return x - n if x >= n else x
