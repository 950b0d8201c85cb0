"""The simpy reference engine's LDS process: SIMD issue, the pairs' queues, the arbiter and
load completion, stepped cycle by cycle (``Lds``); ``wgpsim.engine.des`` runs the warps
around it.

Each cycle t, in this order: retire loads completing at t; free ports whose pass ends at t;
each SIMD issues at most one waiting instruction; the arbiter grants head passes
(``wgpsim.hw.rules.grant``). A one-warp load of 256 B is one pass, granted the cycle it
issues and done ``lds_latency`` cycles later:

>>> import numpy as np
>>> from wgpsim.hw.config import load_hardware
>>> from wgpsim.trace.trace import TraceBuilder
>>> b = TraceBuilder(1)
>>> b.load(0, "ds_load_b64", 8 * np.arange(32))
>>> env = simpy.Environment()
>>> lds = Lds(env, b.build(), load_hardware(), record=True, times=False)
>>> _ = env.process(_one_load(env, lds))
>>> env.run()
>>> lds.event_log().frame()[["cycle", "pair", "port", "status"]].values.tolist()
[[0, 'A', 'L', 'granted']]
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

import numpy as np
import simpy
from simpy.events import Event

from wgpsim.engine.limits import MAX_CYCLE, overflow
from wgpsim.engine.result import LOG_COLUMNS, OP_TIMES, EventLog
from wgpsim.hw.config import HardwareConfig
from wgpsim.hw.rules import ArbiterState, Head, grant, pass_table
from wgpsim.trace.instructions import NUM_LDS_OPS, TDM

__all__ = ["LATE", "Lds", "Warp"]

LATE = 2
"""simpy priority of the LDS tick: after every ordinary (priority 1) event of the same cycle."""


class _Late(Event):
    """A timeout that fires after all ordinary events of its cycle (so the LDS tick of cycle t
    sees every request the warps made at t)."""

    def __init__(self, env: simpy.Environment, delay: int) -> None:
        # Event.__init__ inlined, as simpy's own Timeout does (one of these per simulated cycle)
        self.env, self.callbacks, self._ok, self._value = env, [], True, None
        env.schedule(self, LATE, delay)


@dataclass
class _Instr:
    """An issued instruction in its pair's queue: passes ``next..end`` still to be granted."""

    row: int
    warp: int
    issued: int
    next: int
    end: int


class Warp:
    """One warp as the LDS sees it: its id, SIMD, pair and outstanding loads and TDM copies."""

    def __init__(self, wid: int, simd: int, pair: int) -> None:
        self.id, self.simd, self.pair = wid, simd, pair
        self.outstanding = 0
        self.request: tuple[int, Event] | None = None  # (row, issued event)
        self.waiter: tuple[int, Event] | None = None  # (n of wait_ds, event)
        self.tensors = 0  # TDM instructions outstanding (s_wait_tensorcnt's counter)
        self.tensor_waiter: tuple[int, Event] | None = None  # (n of wait_tensor, event)


class _Pair:
    def __init__(self, simds: tuple[int, ...]) -> None:
        self.simds = simds
        self.first = 0  # index into simds offered queue room first (round robin)
        self.queue: deque[_Instr] = deque()
        self.copies: deque[tuple[int, int]] = deque()  # TDM rows handed over: (row, warp)
        self.busy_until = 0  # a pass in service until this cycle
        self.held = 0  # its partitions
        self.port = -1


class Lds:
    """SIMD issue, the pairs' queues, the arbiter and load completion, stepped by one process.

    Each cycle t, in this order: retire loads completing at t; free ports whose pass ends at t;
    each SIMD issues at most one waiting instruction; the arbiter grants head passes
    (``wgpsim.hw.rules.grant``). The process skips the cycles whose tick would change nothing
    (``next_cycle``) and sleeps when nothing is pending.
    """

    def __init__(
        self, env: simpy.Environment, trace, hw: HardwareConfig, record: bool, times: bool
    ) -> None:
        self.env, self.hw, self.record = env, hw, record
        # the OP_TIMES columns (record_ops), one list per column indexed by row: cycles -1 where
        # they do not apply
        self.times: dict[str, list[int]] | None = None
        if times:
            self.times = {c: [-1] * len(trace) for c in OP_TIMES}
            self.times["stall_cycles"] = [0] * len(trace)
        t = hw.timing
        self.latency, self.depth, self.interval, self.dscnt_max = (
            t.lds_latency,
            t.queue_depth,
            t.issue_interval,
            t.dscnt_max,
        )
        lds_rows = np.flatnonzero(trace.op < NUM_LDS_OPS)
        table = pass_table(trace.op[lds_rows], trace.addr[lds_rows], hw, trace.arg[lds_rows])
        rows = lds_rows[table.row]
        starts = np.searchsorted(rows, np.arange(len(trace)), side="left")
        ends = np.searchsorted(rows, np.arange(len(trace)), side="right")
        self.pass_start, self.pass_end = starts.tolist(), ends.tolist()
        # an LDS instruction with no active lane issues without room in its pair's queue
        self.passless = bool((starts[lds_rows] == ends[lds_rows]).any())
        self.pass_parts = table.partitions.tolist()
        self.pass_cycles = table.bank_cycles.tolist()
        self.table = table
        self.tdm_last = ((trace.op == TDM) & (trace.arg == 1)).tolist()
        self.is_tdm = (trace.op == TDM).tolist()
        self.warps = [
            Warp(w, hw.simd_of_warp(w), hw.pair_of_warp(w)) for w in range(trace.num_warps)
        ]
        self.simd_warps = [[w for w in self.warps if w.simd == s] for s in range(hw.wgp.simds)]
        self.simd_rr = [0] * hw.wgp.simds
        self.simd_next = [0] * hw.wgp.simds
        self.pairs = [_Pair(simds) for _, simds in hw.wgp.pairs]
        self.port_free_at = [0] * hw.num_ports
        self.port_busy = [0] * hw.num_ports
        self.favor = 0
        self.stalls = [0] * hw.num_pairs
        self.completions: list[tuple[int, int, int]] = []  # (cycle, seq, warp)
        self.seq = 0
        self.waiting = 0  # warps with an issue request
        self.asleep: Event | None = None
        self.log: list[tuple[int, ...]] = []  # LOG_COLUMNS (record)
        self.op = trace.op
        env.process(self.run())

    # -- what the warps call -------------------------------------------------------------------
    def request(self, warp: Warp, row: int) -> Event:
        """Ask warp's SIMD to issue LDS instruction ``row``; the event fires when it issues."""
        issued = self.env.event()
        warp.request = (row, issued)
        self.waiting += 1
        self.wake()
        return issued

    def hand_over(self, warp: Warp, row: int) -> None:
        """A TDM row goes to the copy engine of the warp's pair; the warp does not wait."""
        self.pairs[warp.pair].copies.append((row, warp.id))
        if self.tdm_last[row]:
            warp.tensors += 1
        self.wake()

    def wait_tensor(self, warp: Warp, n: int) -> Event | None:
        """``wait_tensor n``: an event that fires once at most ``n`` TDM instructions are
        outstanding."""
        if warp.tensors <= n:
            return None
        done = self.env.event()
        warp.tensor_waiter = (n, done)
        return done

    def wait(self, warp: Warp, n: int) -> Event | None:
        """``wait_ds n``: an event that fires once at most ``n`` loads are outstanding."""
        if warp.outstanding <= n:
            return None
        done = self.env.event()
        warp.waiter = (n, done)
        return done

    def wake(self) -> None:
        if self.asleep is not None:
            self.asleep.succeed()
            self.asleep = None

    # -- the per-cycle process -------------------------------------------------------------------
    def run(self):
        """Tick, then wait for the next cycle whose tick can change anything (``next_cycle``) or
        for a warp's request: a request made at t is seen by the tick of t, after every warp of
        t, or by that of t + 1 if it came after the tick of t."""
        env = self.env
        until = None  # the cycle of the next tick (None: nothing was pending after the last)
        while True:
            if until is None and not self.busy():  # idle: wait for a request
                self.asleep = env.event()
                yield self.asleep
                yield _Late(env, 0)
            now = int(env.now)
            self.tick(now)
            until = self.next_cycle(now)
            if until is None or until == now + 1:
                yield _Late(env, 1)
                continue
            self.asleep = env.event()
            yield env.any_of([self.asleep, _Late(env, until - now)])
            if self.asleep is None:  # woken by a request
                yield _Late(env, 1 if env.now == now else 0)
            self.asleep = None

    def busy(self) -> bool:
        if self.waiting or self.completions:
            return True
        for p in self.pairs:  # noqa: SIM110 (a loop, not any(): asked every cycle)
            if p.queue or p.held or p.copies:
                return True
        return False

    def next_cycle(self, now: int) -> int | None:
        """The next cycle after ``now`` in which a tick can issue, grant, release or retire
        (None: nothing is pending). Cycles before it are skipped: their ticks would change
        nothing, so long waits (a large ``issue_interval``) cost no steps."""
        for p in self.pairs:
            if (p.queue and not p.held) or p.copies:
                # a head to present, or TDM rows waiting for their queue (assumption: checked
                # every cycle)
                return now + 1
        if not self.busy():
            return None
        times = [p.busy_until for p in self.pairs if p.held]
        if self.completions:
            times.append(self.completions[0][0])
        for simd, warps in enumerate(self.simd_warps):
            if any(w.request is not None and w.outstanding < self.dscnt_max for w in warps):
                times.append(self.simd_next[simd])  # a warp that can issue once its SIMD may
        return max(min(times), now + 1)

    def tick(self, now: int) -> None:
        """Cycle ``now``: retire, free the ports whose pass ends, issue, arbitrate."""
        self.retire(now)
        for pair in self.pairs:
            if pair.held and pair.busy_until <= now:
                pair.held, pair.port = 0, -1
            # the copy engine first, then the SIMDs (docs: "TDM writes"); a full queue takes
            # only instructions without a pass
            if pair.copies and self.copy_in(pair, now):
                continue
            if self.waiting and (self.room(pair) or self.passless):
                self.issue(pair, now)
        self.arbitrate(now)

    def retire(self, now: int) -> None:
        while self.completions and self.completions[0][0] <= now:
            _, _, wid, tensor = heapq.heappop(self.completions)
            warp = self.warps[wid]
            if tensor:
                warp.tensors -= 1
                if warp.tensor_waiter is not None and warp.tensors <= warp.tensor_waiter[0]:
                    warp.tensor_waiter[1].succeed()
                    warp.tensor_waiter = None
                continue
            warp.outstanding -= 1
            if warp.waiter is not None and warp.outstanding <= warp.waiter[0]:
                warp.waiter[1].succeed()
                warp.waiter = None

    def issue(self, pair: _Pair, now: int) -> None:
        """Offer the pair's queue to its SIMDs, round robin: it accepts one instruction a cycle."""
        n = len(pair.simds)
        for k in range(n):
            slot = (pair.first + k) % n
            simd = pair.simds[slot]
            if now >= self.simd_next[simd] and self.issue_from_simd(pair, simd, now):
                pair.first = (slot + 1) % n
                return

    def issue_from_simd(self, pair: _Pair, simd: int, now: int) -> bool:
        """SIMD ``simd`` (free to issue at ``now``) issues its next waiting warp's instruction,
        round robin, into the pair's queue if it has room."""
        warps = self.simd_warps[simd]
        n = len(warps)
        for k in range(n):
            index = (self.simd_rr[simd] + k) % n
            warp = warps[index]
            if warp.request is None or warp.outstanding >= self.dscnt_max:
                continue
            row, issued = warp.request
            start, end = self.pass_start[row], self.pass_end[row]
            if start < end and not self.room(pair):
                return False  # no room in the pair's queue for any warp of this SIMD
            if start < end:
                pair.queue.append(_Instr(row, warp.id, now, start, end))
            else:  # no active lane: nothing to serve, completes after the latency
                self.complete(warp.id, now + self.latency)
                self.note_served(row, now)
            self.note(row, "issue", now)
            warp.outstanding += 1
            warp.request = None
            self.waiting -= 1
            self.simd_rr[simd] = (index + 1) % n
            self.simd_next[simd] = now + self.interval
            issued.succeed()
            return True
        return False

    def note(self, row: int, column: str, cycle: int) -> None:
        """Record ``cycle`` in column ``column`` (of ``OP_TIMES``) of trace row ``row``
        (``record_ops``)."""
        if self.times is not None:
            self.times[column][row] = cycle

    def note_served(self, row: int, cycle: int) -> None:
        """Record that row ``row``'s last pass is served at ``cycle``: it completes
        ``lds_latency`` later."""
        if self.times is not None:
            self.times["served"][row] = cycle
            self.times["complete"][row] = cycle + self.latency

    def room(self, pair: _Pair) -> bool:
        """Whether the pair's queue has room for one more instruction (``queue_depth``)."""
        return len(pair.queue) < self.depth

    def copy_in(self, pair: _Pair, now: int) -> bool:
        """The copy engine's oldest TDM row (there is one) enters the pair's queue if it has
        room."""
        if not self.room(pair):
            return False
        row, wid = pair.copies.popleft()
        start, end = self.pass_start[row], self.pass_end[row]
        self.note(row, "issue", now)
        if start < end:
            pair.queue.append(_Instr(row, wid, now, start, end))
        else:  # no active lane: nothing to write
            self.note_served(row, now)
            if self.tdm_last[row]:
                self.complete(wid, now + self.latency, tensor=True)
        return True

    def complete(self, wid: int, cycle: int, tensor: bool = False) -> None:
        if cycle > MAX_CYCLE:
            raise overflow()
        heapq.heappush(self.completions, (cycle, self.seq, wid, tensor))
        self.seq += 1

    def arbitrate(self, now: int) -> None:
        """Each pair not serving a pass presents its head pass; ``rules.grant`` decides."""
        heads = tuple(
            [
                Head(i, p.queue[0].issued, self.pass_parts[p.queue[0].next])
                for i, p in enumerate(self.pairs)
                if p.queue and not p.held
            ]
        )
        if not heads:
            return
        held = tuple([p.held for p in self.pairs])
        free = tuple([at <= now for at in self.port_free_at])
        decision = grant(heads, ArbiterState(held, free, self.favor), self.hw)
        self.favor = decision.favor
        for index, port in decision.granted:
            self.serve(index, port, now)
        for index in decision.stalled:
            self.stalls[index] += 1
            instr = self.pairs[index].queue[0]
            if self.times is not None:
                self.times["stall_cycles"][instr.row] += 1
            if self.record:
                self.log.append((now, index, -1, instr.warp, instr.row, instr.next, 1))

    def serve(self, index: int, port: int, now: int) -> None:
        """Pair ``index``'s head pass holds ``port`` and its partitions for its bank cycles; the
        instruction leaves the queue with its last pass (a load completes ``lds_latency`` after)."""
        pair = self.pairs[index]
        instr = pair.queue[0]
        k = instr.next
        cycles = self.pass_cycles[k]
        pair.busy_until = self.port_free_at[port] = now + cycles
        pair.held, pair.port = self.pass_parts[k], port
        self.port_busy[port] += cycles
        if k == self.pass_start[instr.row]:
            self.note(instr.row, "granted", now)
        if self.record:
            self.log.append((now, index, port, instr.warp, instr.row, k, 0))
        instr.next += 1
        if instr.next == instr.end and self.is_tdm[instr.row]:
            pair.queue.popleft()
            if self.tdm_last[instr.row]:  # the TDM instruction is done
                self.complete(instr.warp, now + cycles + self.latency, tensor=True)
            self.note_served(instr.row, now + cycles)
        elif instr.next == instr.end:
            pair.queue.popleft()
            self.complete(instr.warp, now + cycles + self.latency)
            self.note_served(instr.row, now + cycles)

    def event_log(self) -> EventLog:
        """The recorded arbiter log (``Result.events()`` builds its table when read)."""
        log = np.array(self.log, dtype=np.int64).reshape(-1, len(LOG_COLUMNS))
        t, hw = self.table, self.hw
        names = tuple(hw.pair_names), tuple(hw.ports.names)
        return EventLog(log, self.op, t.index, t.partitions, t.bank_cycles, *names)


def _one_load(env: simpy.Environment, lds: Lds):
    """The doctest's warp 0: its one load (row 0) and nothing else."""
    yield lds.request(lds.warps[0], 0)
