"""The fast engine's event loop, compiled with numba: the des reference's story, step for step.

One call of ``run_loop`` simulates a whole trace. Warps are state machines woken by an event
heap ordered like simpy's queue (time, then creation order), so that warps act, and read
clocks, in the same order as in ``wgpsim.engine.des``; the LDS steps one cycle at a time while
it has work and jumps over cycles in which it can only wait (docs/DESIGN.md, "Engines").

Each LDS cycle t, as in des: retire loads completing at t; free ports whose pass ends at t;
let each SIMD issue; grant head passes (``_fast_grant.grant``, the fast engine's own
statement of ``wgpsim.hw.rules.grant``). Warps woken by that step act in cycle t after it, and
the LDS sees them from t+1. Every helper takes the named tuples of ``_fast_state``: ``st``
(``LoopState``), ``tr`` (``LoopTrace``), ``hw`` (``LoopHardware``).
"""

from __future__ import annotations

from numba import njit

from wgpsim.engine._fast_grant import grant
from wgpsim.engine._fast_heaps import borrowed, complete, complete_tensor, pop, push, wrap
from wgpsim.engine._fast_state import (
    ARRIVE,
    BARRIER_DONE,
    COMPLETE,
    FIRST_GRANT,
    GRANTED,
    ISSUE,
    KIND,
    LEAVE,
    NEVER,
    NONE,
    RELEASE,
    SERVED,
    STALL_CYCLES,
    STALLED,
    TIME,
    WAKE,
    WARP,
)


@njit(cache=True)
def run_loop(tr, hw, st, log, record):
    """Simulate from ``st`` (``new_state``) until every warp is done; True then, False when
    ``record`` and ``log`` (rows of cycle, pair, port, warp, row, pass, status; the first
    ``counters.logged`` used) is full: grow it and call again, the loop resumes where it
    stopped.

    Every array is used through a borrowed view (``borrowed``): the caller owns them, and
    the compiled helpers pass them around without reference counting.
    """
    tr, hw, st, log = borrowed(tr), borrowed(hw), borrowed(st), borrowed(log)
    c = st.counters[0]
    nwarps, npairs = len(tr.warp_first) - 1, len(hw.pair_nsimds)
    now = c.now
    first_phase = c.resume  # a resumed call continues with the LDS step of ``now``
    c.resume = 0
    while True:
        # warps acting at `now` (simpy priority 1), the LDS step (priority 2), the warps it woke
        for phase in range(first_phase, 2):
            if phase == 1:
                if not _busy(st):
                    break
                if record and len(log) - c.logged < npairs:  # no room for one cycle's rows
                    c.now, c.resume = now, 1
                    return False
                _retire(now, st)
                for p in range(npairs):  # free ports whose pass ends now
                    if st.held[p] and st.pairs[p].busy_until <= now:
                        st.held[p] = 0
                _issue(now, st, tr, hw)
                _grant(now, st, tr, hw, record, log)
                c.last_tick = now
            while c.events and st.events[0, TIME] == now:
                kind, w = st.events[0, KIND], st.events[0, WARP]
                c.events = pop(st.events, c.events)
                c.last_event = now
                if kind == BARRIER_DONE:  # the barrier's timeout fires its release event
                    push(st, now, RELEASE, NONE)
                    continue
                n = 1
                if kind == RELEASE:  # every warp resumes, in arrival order
                    n = nwarps
                    for i in range(nwarps):
                        st.releasing[i] = st.arrival[i]
                for i in range(n):
                    _run_warp(st.releasing[i] if kind == RELEASE else w, now, st, tr, hw)
        first_phase = 0
        step = st.events[0, TIME] if c.events else NEVER
        if _busy(st):
            step = min(step, _next_lds_cycle(now, st, hw))
        if step == NEVER or c.overflow:
            break
        now = step
    c.now = now
    return True


@njit(cache=True, inline="always")
def _busy(st):
    """The LDS has work: a request, a load in flight, a queued or served pass (des ``busy``)."""
    c = st.counters[0]
    if c.waiting > 0 or c.completions > 0:
        return True
    for p in range(len(st.held)):  # noqa: SIM110 (a loop: no temporary arrays in compiled code)
        if st.pairs[p].len or st.held[p] or st.pairs[p].copy_len:
            return True
    return False


@njit(cache=True, inline="always")
def _next_lds_cycle(now, st, hw):
    """The next cycle whose LDS step can change anything (des ``next_cycle``): now + 1 while
    a pair can present a head; else the first end of a pass in service, completion, or cycle
    in which a SIMD with a warp able to issue may issue."""
    c = st.counters[0]
    step = NEVER
    for p in range(len(st.held)):
        if st.held[p]:
            step = min(step, st.pairs[p].busy_until)
        elif st.pairs[p].len:
            return now + 1
    for p in range(len(st.held)):
        if st.pairs[p].copy_len:
            return now + 1  # TDM rows waiting for their queue (des: checked every cycle)
    if c.completions:
        step = min(step, st.done[0, TIME])
    if c.waiting and step > now + 1:
        for sd in range(len(hw.simd_nwarps)):
            for j in range(hw.simd_nwarps[sd]):
                warp = st.warps[hw.simd_warps[sd, j]]
                if warp.request >= 0 and warp.outstanding < hw.dscnt_max:
                    step = min(step, st.simds[sd].next_issue)
                    break
    return max(step, now + 1)


@njit(cache=True, inline="always")
def _run_warp(w, now, st, tr, hw):
    """Run warp ``w``'s ops from its program counter until one blocks (des ``warp_process``)."""
    c, warp = st.counters[0], st.warps[w]
    times = len(st.times) > 0
    if times and warp.pc > tr.warp_first[w]:  # resumed: the op it blocked in ends now
        last = tr.warp_rows[warp.pc - 1]
        if st.times[last, LEAVE] < 0:
            st.times[last, LEAVE] = now
    while warp.pc < tr.warp_first[w + 1]:
        row = tr.warp_rows[warp.pc]
        op = tr.ops[row]
        if times and not warp.jittered:
            st.times[row, ARRIVE] = now
        if op == hw.tdm:  # handed to the copy engine of its pair; the warp goes on
            _hand_over(w, row, st, tr, hw)
            warp.pc += 1
            if times:
                st.times[row, LEAVE] = now
            continue
        if op < hw.num_lds_ops:
            if len(tr.jitter) and tr.jitter[row] > 0 and not warp.jittered:
                warp.jittered = 1
                push(st, now + tr.jitter[row], WAKE, w)
                return
            warp.jittered = 0
            warp.request = row
            c.waiting += 1
            warp.pc += 1
            return
        warp.pc += 1
        if op == hw.wait_ds:
            if warp.outstanding > tr.args[row]:
                warp.wait_n = tr.args[row]
                return
        elif op == hw.wait_tensor:
            if warp.tensors > tr.args[row]:
                warp.wait_t = tr.args[row]
                return
        elif op == hw.barrier:
            st.arrival[c.arrived] = w
            c.arrived += 1
            if c.arrived == len(st.arrival):
                c.arrived = 0
                push(st, now + hw.barrier_latency, BARRIER_DONE, NONE)
            return
        elif op == hw.clock:
            read = st.clocks[c.clocks]
            read.warp, read.label, read.cycle = w, tr.args[row], now
            c.clocks += 1
            push(st, now + hw.clock_latency, WAKE, w)
            return
        elif op == hw.delay and tr.args[row] > 0:
            push(st, now + tr.args[row], WAKE, w)
            return
        if times:  # did not block
            st.times[row, LEAVE] = now
    warp.finished = 1


@njit(cache=True, inline="always")
def _retire(now, st):
    """Loads completing by ``now`` (by cycle, then in creation order) leave their warp's
    count; a satisfied ``wait_ds`` resumes."""
    c = st.counters[0]
    while c.completions and st.done[0, TIME] <= now:
        w, kind = st.done[0, WARP], st.done[0, KIND]
        c.completions = pop(st.done, c.completions)
        warp = st.warps[w]
        if kind == 1:  # a TDM instruction
            warp.tensors -= 1
            if warp.wait_t >= 0 and warp.tensors <= warp.wait_t:
                warp.wait_t = -1
                push(st, now, WAKE, w)
            continue
        warp.outstanding -= 1
        if warp.wait_n >= 0 and warp.outstanding <= warp.wait_n:
            warp.wait_n = -1
            push(st, now, WAKE, w)


@njit(cache=True, inline="always")
def _issue(now, st, tr, hw):
    """Each pair offers its queue to its SIMDs, round robin; a SIMD issues its first ready
    warp's instruction (round robin), unless the queue is full (des ``issue``)."""
    c = st.counters[0]
    depth = hw.queue_depth
    for p in range(len(hw.pair_nsimds)):
        pair = st.pairs[p]
        if pair.copy_len and pair.len < depth:  # the copy engine takes the queue first
            _copy_in(now, p, st, tr, hw)
            continue
        if c.waiting == 0:
            continue
        n = hw.pair_nsimds[p]
        for k in range(n):
            # as des: the round-robin start is re-read after an issue (DESIGN, "Engines")
            slot = wrap(pair.first + k, n)
            sd = hw.pair_simds[p, slot]
            simd = st.simds[sd]
            if now < simd.next_issue:
                continue
            nw = hw.simd_nwarps[sd]
            for j in range(nw):
                index = wrap(simd.rr + j, nw)
                w = hw.simd_warps[sd, index]
                warp = st.warps[w]
                if warp.request < 0 or warp.outstanding >= hw.dscnt_max:
                    continue
                row = warp.request
                start, end = tr.pass_start[row], tr.pass_start[row + 1]
                if start < end and pair.len >= depth:
                    break  # no room in the pair's queue for any warp of this SIMD
                if start < end:
                    q = st.queue[p, wrap(pair.head + pair.len, depth)]
                    q.row, q.warp, q.issued, q.next, q.end = row, w, now, start, end
                    pair.len += 1
                else:  # no active lane: nothing to serve, completes after the latency
                    complete(st, w, now + hw.lds_latency)
                    if len(st.times):
                        st.times[row, SERVED] = now
                        st.times[row, COMPLETE] = now + hw.lds_latency
                if len(st.times):
                    st.times[row, ISSUE] = now
                warp.outstanding += 1
                warp.request = -1
                c.waiting -= 1
                simd.rr = wrap(index + 1, nw)
                simd.next_issue = now + hw.issue_interval
                push(st, now, WAKE, w)
                pair.first = wrap(slot + 1, n)
                break


@njit(cache=True, inline="always")
def _grant(now, st, tr, hw, record, log):
    """Present each idle pair's head pass to the arbiter (``_fast_grant.grant``) and start
    the granted passes; a load completes ``lds_latency`` after its last pass is served."""
    c = st.counters[0]
    nheads = 0
    for p in range(len(st.held)):
        pair = st.pairs[p]
        if pair.len and not st.held[p]:
            head = st.queue[p, pair.head]
            st.heads[0, nheads], st.heads[1, nheads] = p, head.issued
            st.heads[2, nheads] = tr.pass_parts[head.next]
            nheads += 1
    if nheads == 0:
        return
    for i in range(len(st.ports_free)):
        st.ports_free[i] = st.ports[i].free_at <= now
    granted, stalled, favor = grant(
        st.heads, nheads, st.held, st.ports_free, c.favor, hw.policy, st.order, st.decision
    )
    c.favor = favor
    for i in range(granted):
        p, pt = st.decision[0, 2 * i], st.decision[0, 2 * i + 1]
        pair, port = st.pairs[p], st.ports[pt]
        head = st.queue[p, pair.head]
        k = head.next
        cycles = tr.pass_cycles[k]
        pair.busy_until = port.free_at = now + cycles
        st.held[p] = tr.pass_parts[k]
        port.busy += cycles
        if record:
            _log(log, c, now, p, pt, head.warp, head.row, k, GRANTED)
        times = len(st.times) > 0
        if times and k == tr.pass_start[head.row]:
            st.times[head.row, FIRST_GRANT] = now
        head.next += 1
        if head.next == head.end and tr.ops[head.row] == hw.tdm:
            pair.head = wrap(pair.head + 1, hw.queue_depth)
            pair.len -= 1
            if tr.args[head.row] == 1:  # the TDM instruction's last row: it is done
                complete_tensor(st, head.warp, now + cycles + hw.lds_latency)
            if times:
                st.times[head.row, SERVED] = now + cycles
                st.times[head.row, COMPLETE] = now + cycles + hw.lds_latency
        elif head.next == head.end:
            pair.head = wrap(pair.head + 1, hw.queue_depth)
            pair.len -= 1
            complete(st, head.warp, now + cycles + hw.lds_latency)
            if times:
                st.times[head.row, SERVED] = now + cycles
                st.times[head.row, COMPLETE] = now + cycles + hw.lds_latency
    for i in range(stalled):
        p = st.decision[1, i]
        st.pairs[p].stalls += 1
        if len(st.times):
            st.times[st.queue[p, st.pairs[p].head].row, STALL_CYCLES] += 1
        if record:
            head = st.queue[p, st.pairs[p].head]
            _log(log, c, now, p, NONE, head.warp, head.row, head.next, STALLED)


@njit(cache=True, inline="always")
def _hand_over(w, row, st, tr, hw):
    """TDM row ``row`` of warp ``w`` joins its pair's copy engine (des ``hand_over``)."""
    p = hw.pair_of[w]
    pair, cap = st.pairs[p], st.copies.shape[1]
    i = wrap(pair.copy_head + pair.copy_len, cap)
    st.copies[p, i, 0], st.copies[p, i, 1] = row, w
    pair.copy_len += 1
    if tr.args[row] == 1:
        st.warps[w].tensors += 1


@njit(cache=True, inline="always")
def _copy_in(now, p, st, tr, hw):
    """The copy engine's oldest TDM row enters pair ``p``'s queue (des ``copy_in``)."""
    pair = st.pairs[p]
    row, w = st.copies[p, pair.copy_head, 0], st.copies[p, pair.copy_head, 1]
    pair.copy_head = wrap(pair.copy_head + 1, st.copies.shape[1])
    pair.copy_len -= 1
    start, end = tr.pass_start[row], tr.pass_start[row + 1]
    times = len(st.times) > 0
    if times:
        st.times[row, ISSUE] = now
    if start < end:
        q = st.queue[p, wrap(pair.head + pair.len, hw.queue_depth)]
        q.row, q.warp, q.issued, q.next, q.end = row, w, now, start, end
        pair.len += 1
    else:  # no active lane: nothing to write
        if times:
            st.times[row, SERVED] = now
            st.times[row, COMPLETE] = now + hw.lds_latency
        if tr.args[row] == 1:
            complete_tensor(st, w, now + hw.lds_latency)


@njit(cache=True, inline="always")
def _log(log, c, now, pair, port, warp, row, k, status):
    """Append one event-log row (the caller made room)."""
    i = c.logged
    log[i, 0], log[i, 1], log[i, 2], log[i, 3] = now, pair, port, warp
    log[i, 4], log[i, 5], log[i, 6] = row, k, status
    c.logged += 1
