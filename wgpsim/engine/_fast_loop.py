"""The fast engine's event loop, compiled with numba: the des reference's story, step for step.

One call of ``run_loop`` simulates a whole trace. Warps are state machines woken by an event
heap ordered like simpy's queue (time, then creation order), so that warps act, and read
clocks, in the same order as in ``wgpsim.engine.des``; the LDS steps one cycle at a time while
it has work and jumps over cycles in which it can only wait (docs/DESIGN.md, "Engines").

Each LDS cycle t, as in des: retire loads completing at t; free ports whose pass ends at t;
let each SIMD issue; grant head passes (``_fast_rules.grant``). Warps woken by that step act
in cycle t after it, and the LDS sees them from t+1.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from wgpsim.engine._fast_rules import grant

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
    simd_warps, simd_nwarps, pair_simds, pair_nsimds, nports, codes, timing = hw
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
        _push(events, s, 0, WAKE, w)
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


@njit(cache=True)
def run_loop(trace, hw, state, log, record):
    """Simulate from ``state`` (``new_state``) until every warp is done; True then, False
    when ``record`` and ``log`` (rows of cycle, pair, port, warp, row, pass, status; the first
    ``s[LOGGED]`` used) is full: grow it and call again, the loop resumes where it stopped.

    ``trace`` = (warp_rows, warp_first, ops, args, pass_start, pass_parts, pass_cycles,
    jitter): the rows of warp w are ``warp_rows[warp_first[w]:warp_first[w+1]]`` in program
    order, the passes of row r are ``pass_start[r]:pass_start[r+1]``, ``jitter`` is empty
    without drift. ``hw`` = (simd_warps, simd_nwarps, pair_simds, pair_nsimds, nports, codes,
    timing): the warps of each SIMD and the SIMDs of each pair (padded arrays and their
    lengths), op codes and timing constants.

    Every array is used through a borrowed view (``_borrowed``): the caller owns them, and
    the compiled helpers pass them around without reference counting.
    """
    warp_rows, warp_first, ops, args, pass_start, pass_parts, pass_cycles, jitter = _borrowed(trace)
    simd_warps, simd_nwarps, pair_simds, pair_nsimds, nports, codes, timing = _borrowed(hw)
    (
        s,
        warp,
        arrival,
        releasing,
        simd,
        pair,
        held,
        queue,
        port,
        clocks,
        events,
        wheel,
        wheel_len,
        heads,
        ports_free,
        order,
        decision,
    ) = _borrowed(state)
    log = _borrowed(log)
    nwarps, npairs = len(warp_first) - 1, len(pair_nsimds)
    now = s[NOW]
    first_phase = s[RESUME]  # a resumed call continues with the LDS step of ``now``
    s[RESUME] = 0
    while True:
        # warps acting at `now` (simpy priority 1), the LDS step (priority 2), the warps it woke
        for phase in range(first_phase, 2):
            if phase == 1:
                if not _busy(s, pair, held):
                    break
                if record and len(log) - s[LOGGED] < npairs:  # no room for one cycle's rows
                    s[NOW], s[RESUME] = now, 1
                    return False
                _retire(now, s, events, wheel, wheel_len, warp)
                for p in range(npairs):  # free ports whose pass ends now
                    if held[p] and pair[BUSY_UNTIL, p] <= now:
                        held[p] = 0
                if s[WAITING]:
                    _issue(
                        now,
                        s,
                        events,
                        wheel,
                        wheel_len,
                        warp,
                        simd,
                        pair,
                        queue,
                        pass_start,
                        simd_warps,
                        simd_nwarps,
                        pair_simds,
                        pair_nsimds,
                        timing,
                    )
                _grant(
                    now,
                    s,
                    wheel,
                    wheel_len,
                    pair,
                    held,
                    queue,
                    port,
                    pass_parts,
                    pass_cycles,
                    heads,
                    ports_free,
                    order,
                    decision,
                    timing,
                    record,
                    log,
                )
                s[LAST_TICK] = now
            while s[EVENTS] and events[0, 0] == now:
                kind, w = events[0, 2], events[0, 3]
                s[EVENTS] = _pop(events, s[EVENTS])
                s[LAST_EVENT] = now
                if kind == BARRIER_DONE:  # the barrier's timeout fires its release event
                    _push(events, s, now, RELEASE, NONE)
                    continue
                n = 1
                if kind == RELEASE:  # every warp resumes, in arrival order
                    n = nwarps
                    for i in range(nwarps):
                        releasing[i] = arrival[i]
                for i in range(n):
                    _run_warp(
                        releasing[i] if kind == RELEASE else w,
                        now,
                        s,
                        events,
                        warp,
                        arrival,
                        clocks,
                        warp_rows,
                        warp_first,
                        ops,
                        args,
                        jitter,
                        codes,
                        timing,
                    )
        first_phase = 0
        step = events[0, 0] if s[EVENTS] else NEVER
        if _busy(s, pair, held):
            step = min(step, _next_lds_cycle(now, s, wheel_len, pair, held))
        if step == NEVER:
            break
        now = step
    s[NOW] = now
    return True


@intrinsic
def _borrowed(typingctx, value):
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
def _push(events, s, time, kind, w):
    """Schedule a warp event; ``s[SEQ]`` orders events of one cycle as simpy's event ids do."""
    s[EVENTS] = _push_heap(events, s[EVENTS], time, s[SEQ], kind, w)
    s[SEQ] += 1


@njit(cache=True, inline="always")
def _busy(s, pair, held):
    """The LDS has work: a request, a load in flight, a queued or served pass (des ``busy``)."""
    if s[WAITING] > 0 or s[COMPLETIONS] > 0:
        return True
    for p in range(len(held)):  # noqa: SIM110 (a loop: no temporary arrays in compiled code)
        if pair[LEN, p] or held[p]:
            return True
    return False


@njit(cache=True, inline="always")
def _next_lds_cycle(now, s, wheel_len, pair, held):
    """The next cycle whose LDS step can change anything: now + 1 while a request waits or a
    pair can present a head; else the next completion or end of a pass in service."""
    if s[WAITING] > 0:
        return now + 1
    step = NEVER
    for p in range(len(held)):
        if held[p]:
            step = min(step, pair[BUSY_UNTIL, p])
        elif pair[LEN, p]:
            return now + 1
    if s[COMPLETIONS]:  # the first non-empty bucket after the last retired cycle
        cycle = s[RETIRED] + 1
        while wheel_len[cycle & (len(wheel_len) - 1)] == 0:
            cycle += 1
        step = min(step, cycle)
    return max(step, now + 1)


@njit(cache=True, inline="always")
def _run_warp(
    w,
    now,
    s,
    events,
    warp,
    arrival,
    clocks,
    warp_rows,
    warp_first,
    ops,
    args,
    jitter,
    codes,
    timing,
):
    """Run warp ``w``'s ops from its program counter until one blocks (des ``warp_process``)."""
    while warp[PC, w] < warp_first[w + 1]:
        row = warp_rows[warp[PC, w]]
        op = ops[row]
        if op < codes[NUM_LDS]:
            if len(jitter) and jitter[row] > 0 and not warp[JITTERED, w]:
                warp[JITTERED, w] = 1
                _push(events, s, now + jitter[row], WAKE, w)
                return
            warp[JITTERED, w] = 0
            warp[REQUEST, w] = row
            s[WAITING] += 1
            warp[PC, w] += 1
            return
        warp[PC, w] += 1
        if op == codes[WAIT_DS]:
            if warp[OUTSTANDING, w] > args[row]:
                warp[WAIT_N, w] = args[row]
                return
        elif op == codes[BARRIER]:
            arrival[s[ARRIVED]] = w
            s[ARRIVED] += 1
            if s[ARRIVED] == len(arrival):
                s[ARRIVED] = 0
                _push(events, s, now + timing[BARRIER_LATENCY], BARRIER_DONE, NONE)
            return
        elif op == codes[CLOCK]:
            k = s[CLOCKS]
            clocks[k, 0], clocks[k, 1], clocks[k, 2] = w, args[row], now
            s[CLOCKS] += 1
            _push(events, s, now + timing[CLOCK_LATENCY], WAKE, w)
            return
        elif op == codes[DELAY] and args[row] > 0:
            _push(events, s, now + args[row], WAKE, w)
            return
    warp[FINISHED, w] = 1


@njit(cache=True, inline="always")
def _retire(now, s, events, wheel, wheel_len, warp):
    """Loads completing by ``now`` (cycle by cycle, each cycle's in creation order) leave
    their warp's count; a satisfied ``wait_ds`` resumes."""
    while s[COMPLETIONS] and s[RETIRED] < now:
        s[RETIRED] += 1
        b = s[RETIRED] & (len(wheel_len) - 1)
        for i in range(wheel_len[b]):
            w = wheel[b, i]
            warp[OUTSTANDING, w] -= 1
            if warp[WAIT_N, w] >= 0 and warp[OUTSTANDING, w] <= warp[WAIT_N, w]:
                warp[WAIT_N, w] = -1
                _push(events, s, now, WAKE, w)
        s[COMPLETIONS] -= wheel_len[b]
        wheel_len[b] = 0
    s[RETIRED] = now


@njit(cache=True, inline="always")
def _issue(
    now,
    s,
    events,
    wheel,
    wheel_len,
    warp,
    simd,
    pair,
    queue,
    pass_start,
    simd_warps,
    simd_nwarps,
    pair_simds,
    pair_nsimds,
    timing,
):
    """Each pair offers its queue to its SIMDs, round robin; a SIMD issues its first ready
    warp's instruction (round robin), unless the queue is full (des ``issue``)."""
    depth = timing[DEPTH]
    for p in range(len(pair_nsimds)):
        n = pair_nsimds[p]
        for k in range(n):
            # as des: the round-robin start is re-read after an issue (DESIGN, "Engines")
            slot = _wrap(pair[FIRST, p] + k, n)
            sd = pair_simds[p, slot]
            if now < simd[NEXT_ISSUE, sd]:
                continue
            nw = simd_nwarps[sd]
            for j in range(nw):
                index = _wrap(simd[RR, sd] + j, nw)
                w = simd_warps[sd, index]
                if warp[REQUEST, w] < 0 or warp[OUTSTANDING, w] >= timing[DSCNT_MAX]:
                    continue
                row = warp[REQUEST, w]
                start, end = pass_start[row], pass_start[row + 1]
                if start < end and pair[LEN, p] >= depth:
                    break  # no room in the pair's queue for any warp of this SIMD
                if start < end:
                    q = _wrap(pair[HEAD, p] + pair[LEN, p], depth)
                    queue[p, q, Q_ROW], queue[p, q, Q_WARP], queue[p, q, Q_ISSUED] = row, w, now
                    queue[p, q, Q_NEXT], queue[p, q, Q_END] = start, end
                    pair[LEN, p] += 1
                else:  # no active lane: nothing to serve, completes after the latency
                    _complete(wheel, wheel_len, s, w, now + timing[LATENCY])
                warp[OUTSTANDING, w] += 1
                warp[REQUEST, w] = -1
                s[WAITING] -= 1
                simd[RR, sd] = _wrap(index + 1, nw)
                simd[NEXT_ISSUE, sd] = now + timing[INTERVAL]
                _push(events, s, now, WAKE, w)
                pair[FIRST, p] = _wrap(slot + 1, n)
                break


@njit(cache=True, inline="always")
def _grant(
    now,
    s,
    wheel,
    wheel_len,
    pair,
    held,
    queue,
    port,
    pass_parts,
    pass_cycles,
    heads,
    ports_free,
    order,
    decision,
    timing,
    record,
    log,
):
    """Present each idle pair's head pass to the arbiter (``_fast_rules.grant``) and start the
    granted passes; a load completes ``lds_latency`` after its last pass is served."""
    nheads = 0
    for p in range(len(held)):
        if pair[LEN, p] and not held[p]:
            h = pair[HEAD, p]
            heads[0, nheads], heads[1, nheads] = p, queue[p, h, Q_ISSUED]
            heads[2, nheads] = pass_parts[queue[p, h, Q_NEXT]]
            nheads += 1
    if nheads == 0:
        return
    for i in range(len(ports_free)):
        ports_free[i] = port[FREE_AT, i] <= now
    granted, stalled, favor = grant(heads, nheads, held, ports_free, s[FAVOR], order, decision)
    s[FAVOR] = favor
    for i in range(granted):
        p, pt = decision[0, 2 * i], decision[0, 2 * i + 1]
        h = pair[HEAD, p]
        k = queue[p, h, Q_NEXT]
        cycles = pass_cycles[k]
        pair[BUSY_UNTIL, p] = port[FREE_AT, pt] = now + cycles
        held[p] = pass_parts[k]
        port[BUSY, pt] += cycles
        if record:
            _log(log, s, now, p, pt, queue[p, h, Q_WARP], queue[p, h, Q_ROW], k, GRANTED)
        queue[p, h, Q_NEXT] += 1
        if queue[p, h, Q_NEXT] == queue[p, h, Q_END]:
            pair[HEAD, p] = _wrap(h + 1, timing[DEPTH])
            pair[LEN, p] -= 1
            _complete(wheel, wheel_len, s, queue[p, h, Q_WARP], now + cycles + timing[LATENCY])
    for i in range(stalled):
        p = decision[1, i]
        pair[STALLS, p] += 1
        if record:
            h = pair[HEAD, p]
            _log(
                log,
                s,
                now,
                p,
                NONE,
                queue[p, h, Q_WARP],
                queue[p, h, Q_ROW],
                queue[p, h, Q_NEXT],
                STALLED,
            )


@njit(cache=True, inline="always")
def _complete(wheel, wheel_len, s, w, cycle):
    """A load of warp ``w`` completes at ``cycle`` (after the step that retired ``s[RETIRED]``,
    at most ``len(wheel) - 1`` cycles later; ties retire in creation order)."""
    b = cycle & (len(wheel_len) - 1)
    if wheel_len[b] == wheel.shape[1]:
        raise RuntimeError("completion wheel bucket overflow")
    wheel[b, wheel_len[b]] = w
    wheel_len[b] += 1
    s[COMPLETIONS] += 1


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
def _pop(heap, n):
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
def _log(log, s, now, pair, port, warp, row, k, status):
    """Append one event-log row (the caller made room)."""
    i = s[LOGGED]
    log[i, 0], log[i, 1], log[i, 2], log[i, 3] = now, pair, port, warp
    log[i, 4], log[i, 5], log[i, 6] = row, k, status
    s[LOGGED] += 1


@njit(cache=True, inline="always")
def _wrap(x, n):
    """``x % n`` for ``0 <= x < 2n`` (round-robin and ring-buffer indices), without a division."""
    return x - n if x >= n else x
