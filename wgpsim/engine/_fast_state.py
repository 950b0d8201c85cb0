"""The fast engine's loop state: its layout, its start, and the queues the loop keeps.

All state lives in a few int64 arrays (``new_state``) that the caller owns, so a stopped loop
resumes where it was (``run_loop`` stops when its event log is full). Field names index them:
``warp[OUTSTANDING, w]`` is warp w's loads in flight, ``pair[LEN, p]`` the instructions in pair
p's queue. Warp events wait in a binary heap ordered by (time, creation order), simpy's order;
load completions in a timing wheel, one bucket per cycle, in creation order. The compiled
helpers take the arrays as borrowed views (``borrowed``: no reference counting) and are
inlined into ``run_loop``.

The rows of each warp, in program order (a counting sort by warp):

>>> rows = np.zeros(4, dtype=np.int64)
>>> warp_order(np.array([1, 0, 1, 0], dtype=np.int32), 2, rows).tolist(), rows.tolist()
([0, 2, 4], [1, 3, 0, 2])
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# the warp events' heap holds (time, creation order, kind, warp); load completions wait in a
# timing wheel: ``wheel[c % len(wheel)]`` lists, in creation order, the warps of the loads
# completing in cycle c (``wheel_len`` of them), for the cycles after ``s[RETIRED]``
WAKE, BARRIER_DONE, RELEASE = np.int64(0), np.int64(1), np.int64(2)
NONE = np.int64(-1)
NEVER = np.iinfo(np.int64).max
# rows of the state arrays (one int64 array each, so the compiled helpers pass few arguments)
SEQ, RETIRED, WAITING, FAVOR, ARRIVED, CLOCKS, LOGGED, EVENTS, COMPLETIONS = range(9)  # ``s``
NOW, LAST_EVENT, LAST_TICK, RESUME = range(9, 13)  # ``s``: the loop's clock, for a resumed call
PC, OUTSTANDING, REQUEST, WAIT_N, JITTERED, FINISHED = range(6)  # ``warp[field, w]``
RR, NEXT_ISSUE = range(2)  # ``simd[field, simd]``: warp index tried first, next issue cycle
FIRST, HEAD, LEN, BUSY_UNTIL, STALLS = range(5)  # ``pair[field, p]``: SIMD slot offered first,
# its queue (ring buffer ``queue[p, slot] = (row, warp, issued, next pass, end pass)``), the
# end of its pass in service (whose partitions are ``held[p]``, 0 = none), its stall cycles
FREE_AT, BUSY = range(2)  # ``port[field, port]``
Q_ROW, Q_WARP, Q_ISSUED, Q_NEXT, Q_END = range(5)
# indices into the ``codes`` and ``timing`` arguments
NUM_LDS, WAIT_DS, BARRIER, CLOCK, DELAY = range(5)
LATENCY, DEPTH, INTERVAL, DSCNT_MAX, CLOCK_LATENCY, BARRIER_LATENCY = range(6)
GRANTED, STALLED = np.int64(0), np.int64(1)


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


@njit(cache=True)
def new_state(trace, hw):
    """The loop's state before cycle 0: ``(s, warp, arrival, releasing, simd, pair, held,
    queue, port, clocks, events, wheel, wheel_len)`` plus the grant's scratch arrays (``heads``,
    ``ports_free``, ``order``, ``decision``); every warp is due to start at cycle 0."""
    warp_rows, warp_first, ops, args, pass_start, pass_parts, pass_cycles, jitter = trace
    simd_warps, simd_nwarps, pair_simds, pair_nsimds, nports, codes, timing, policy = hw
    nwarps, nsimds, npairs = len(warp_first) - 1, len(simd_nwarps), len(pair_nsimds)
    s = np.zeros(13, dtype=np.int64)
    s[LAST_TICK] = s[RETIRED] = -1
    # a load completes 1..lds_latency + its last pass's bank cycles after the step that
    # issues or grants it; in one cycle at most one per pair and one per SIMD (no-pass loads)
    reach = timing[LATENCY] + 1
    for k in range(len(pass_cycles)):
        reach = max(reach, timing[LATENCY] + pass_cycles[k] + 1)
    buckets = 1
    while buckets < reach:
        buckets *= 2
    warp = np.zeros((6, nwarps), dtype=np.int64)
    for w in range(nwarps):
        warp[PC, w] = warp_first[w]
        warp[REQUEST, w] = warp[WAIT_N, w] = -1
    nclocks = 0
    for r in range(len(ops)):
        nclocks += ops[r] == codes[CLOCK]
    events = np.zeros((nwarps + 2, 4), dtype=np.int64)  # a warp waits for one event at most
    for w in range(nwarps):  # simpy starts the warp processes in warp order at time 0
        push(events, s, 0, WAKE, w)
    return (
        s,
        warp,
        np.zeros(nwarps, dtype=np.int64),  # warps at the barrier, in arrival order
        np.zeros(nwarps, dtype=np.int64),  # the warps a barrier releases
        np.zeros((2, nsimds), dtype=np.int64),
        np.zeros((5, npairs), dtype=np.int64),
        np.zeros(npairs, dtype=np.int64),
        np.zeros((npairs, timing[DEPTH], 5), dtype=np.int64),
        np.zeros((2, nports), dtype=np.int64),
        np.zeros((nclocks, 3), dtype=np.int64),
        events,
        np.zeros((buckets, npairs + nsimds), dtype=np.int64),
        np.zeros(buckets, dtype=np.int64),
        np.zeros((3, npairs), dtype=np.int64),  # grant scratch: pair, issued, partitions
        np.zeros(nports, dtype=np.bool_),
        np.zeros(npairs, dtype=np.int64),
        np.zeros((2, 2 * npairs), dtype=np.int64),
    )


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
def push(events, s, time, kind, w):
    """Schedule a warp event; ``s[SEQ]`` orders events of one cycle as simpy's event ids do."""
    s[EVENTS] = __push_heap(events, s[EVENTS], time, s[SEQ], kind, w)
    s[SEQ] += 1


@njit(cache=True, inline="always")
def complete(wheel, wheel_len, s, w, cycle):
    """A load of warp ``w`` completes at ``cycle`` (after the step that retired ``s[RETIRED]``,
    at most ``len(wheel) - 1`` cycles later; ties retire in creation order)."""
    b = cycle & (len(wheel_len) - 1)
    if wheel_len[b] == wheel.shape[1]:
        raise RuntimeError("completion wheel bucket overflow")
    wheel[b, wheel_len[b]] = w
    wheel_len[b] += 1
    s[COMPLETIONS] += 1


@njit(cache=True, inline="always")
def __push_heap(heap, n, key, seq, a, b):
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
