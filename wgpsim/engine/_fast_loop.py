"""The fast engine's event loop, compiled with numba: the des reference's story, step for step.

One call of ``run_loop`` simulates a whole trace. Warps are state machines woken by an event
heap ordered like simpy's queue (time, then creation order), so that warps act, and read
clocks, in the same order as in ``wgpsim.engine.des``; the LDS steps one cycle at a time while
it has work and jumps over cycles in which it can only wait (docs/DESIGN.md, "Engines").

Each LDS cycle t, as in des: retire loads completing at t; free ports whose pass ends at t;
let each SIMD issue; grant head passes (``_fast_grant.grant``, the fast engine's own
statement of ``wgpsim.hw.rules.grant``). Warps woken by that step act in cycle t after it, and the LDS sees
them from t+1.
"""

from __future__ import annotations

from numba import njit

from wgpsim.engine._fast_grant import grant
from wgpsim.engine._fast_state import (
    ARRIVED,
    BARRIER,
    BARRIER_DONE,
    BARRIER_LATENCY,
    BUSY,
    BUSY_UNTIL,
    CLOCK,
    CLOCK_LATENCY,
    CLOCKS,
    COMPLETIONS,
    DELAY,
    DEPTH,
    DSCNT_MAX,
    EVENTS,
    FAVOR,
    FINISHED,
    FIRST,
    FREE_AT,
    GRANTED,
    HEAD,
    INTERVAL,
    JITTERED,
    LAST_EVENT,
    LAST_TICK,
    LATENCY,
    LEN,
    LOGGED,
    NEVER,
    NEXT_ISSUE,
    NONE,
    NOW,
    NUM_LDS,
    OUTSTANDING,
    PC,
    Q_END,
    Q_ISSUED,
    Q_NEXT,
    Q_ROW,
    Q_WARP,
    RELEASE,
    REQUEST,
    RESUME,
    RETIRED,
    RR,
    STALLED,
    STALLS,
    WAIT_DS,
    WAIT_N,
    WAITING,
    WAKE,
    borrowed,
    complete,
    pop,
    push,
    wrap,
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
    timing, policy): the warps of each SIMD and the SIMDs of each pair (padded arrays and their
    lengths), op codes and timing constants.

    Every array is used through a borrowed view (``borrowed``): the caller owns them, and
    the compiled helpers pass them around without reference counting.
    """
    warp_rows, warp_first, ops, args, pass_start, pass_parts, pass_cycles, jitter = borrowed(trace)
    simd_warps, simd_nwarps, pair_simds, pair_nsimds, nports, codes, timing, policy = borrowed(hw)
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
    ) = borrowed(state)
    log = borrowed(log)
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
                    policy,
                    record,
                    log,
                )
                s[LAST_TICK] = now
            while s[EVENTS] and events[0, 0] == now:
                kind, w = events[0, 2], events[0, 3]
                s[EVENTS] = pop(events, s[EVENTS])
                s[LAST_EVENT] = now
                if kind == BARRIER_DONE:  # the barrier's timeout fires its release event
                    push(events, s, now, RELEASE, NONE)
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
                push(events, s, now + jitter[row], WAKE, w)
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
                push(events, s, now + timing[BARRIER_LATENCY], BARRIER_DONE, NONE)
            return
        elif op == codes[CLOCK]:
            k = s[CLOCKS]
            clocks[k, 0], clocks[k, 1], clocks[k, 2] = w, args[row], now
            s[CLOCKS] += 1
            push(events, s, now + timing[CLOCK_LATENCY], WAKE, w)
            return
        elif op == codes[DELAY] and args[row] > 0:
            push(events, s, now + args[row], WAKE, w)
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
                push(events, s, now, WAKE, w)
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
            slot = wrap(pair[FIRST, p] + k, n)
            sd = pair_simds[p, slot]
            if now < simd[NEXT_ISSUE, sd]:
                continue
            nw = simd_nwarps[sd]
            for j in range(nw):
                index = wrap(simd[RR, sd] + j, nw)
                w = simd_warps[sd, index]
                if warp[REQUEST, w] < 0 or warp[OUTSTANDING, w] >= timing[DSCNT_MAX]:
                    continue
                row = warp[REQUEST, w]
                start, end = pass_start[row], pass_start[row + 1]
                if start < end and pair[LEN, p] >= depth:
                    break  # no room in the pair's queue for any warp of this SIMD
                if start < end:
                    q = wrap(pair[HEAD, p] + pair[LEN, p], depth)
                    queue[p, q, Q_ROW], queue[p, q, Q_WARP], queue[p, q, Q_ISSUED] = row, w, now
                    queue[p, q, Q_NEXT], queue[p, q, Q_END] = start, end
                    pair[LEN, p] += 1
                else:  # no active lane: nothing to serve, completes after the latency
                    complete(wheel, wheel_len, s, w, now + timing[LATENCY])
                warp[OUTSTANDING, w] += 1
                warp[REQUEST, w] = -1
                s[WAITING] -= 1
                simd[RR, sd] = wrap(index + 1, nw)
                simd[NEXT_ISSUE, sd] = now + timing[INTERVAL]
                push(events, s, now, WAKE, w)
                pair[FIRST, p] = wrap(slot + 1, n)
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
    policy,
    record,
    log,
):
    """Present each idle pair's head pass to the arbiter (``_fast_grant.grant``) and
    start the granted passes; a load completes ``lds_latency`` after its last pass is served."""
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
    granted, stalled, favor = grant(
        heads, nheads, held, ports_free, s[FAVOR], policy, order, decision
    )
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
            pair[HEAD, p] = wrap(h + 1, timing[DEPTH])
            pair[LEN, p] -= 1
            complete(wheel, wheel_len, s, queue[p, h, Q_WARP], now + cycles + timing[LATENCY])
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
def _log(log, s, now, pair, port, warp, row, k, status):
    """Append one event-log row (the caller made room)."""
    i = s[LOGGED]
    log[i, 0], log[i, 1], log[i, 2], log[i, 3] = now, pair, port, warp
    log[i, 4], log[i, 5], log[i, 6] = row, k, status
    s[LOGGED] += 1
