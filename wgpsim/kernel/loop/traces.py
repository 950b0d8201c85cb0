"""The per-warp traces of a loop program: every warp of the workgroup running N iterations of
the body (`wgpsim.kernel.loop.program.LoopProgram`), with per row the iteration and the step it
came from (so the TTGIR op, its location and the assembly mnemonic).

The AMD blog's microbenchmark is one iteration of its whole kernel, 32 ``ds_load_b128`` per
warp, four warps:

>>> from wgpsim.frontend.sources import read_kernel
>>> from wgpsim.kernel.loop.program import loop_program
>>> k = read_kernel("tests/corpus/fixtures/lds_bandwidth_plain/kernel.ttgir")
>>> prog = loop_program(k, open("tests/corpus/fixtures/lds_bandwidth_plain/kernel.amdgcn").read())
>>> lt = loop_trace(prog)
>>> lt.iterations, lt.trace.num_warps, lt.trace.count_by_op()["ds_load_b128"]
(1, 4, 128)
>>> lt.counts(warp=0)["ds_load_b128"], sorted(set(lt.label[lt.trace.warp == 0]) - {None})[0]
(32, '%x local_load (gluon_bandwidth.py:25)')
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from wgpsim.errors import TraceError
from wgpsim.hw.config import HardwareConfig, target_hardware
from wgpsim.kernel.loop.program import LoopProgram, Step
from wgpsim.kernel.lowering import OpLowering
from wgpsim.trace.instructions import (
    BARRIER,
    CLOCK,
    DELAY,
    TDM,
    WAIT_DS,
    WAIT_TENSOR,
    instruction,
    op_code,
)
from wgpsim.trace.trace import Trace, TraceBuilder

__all__ = ["DEFAULT_ITERATIONS", "KernelLoopTrace", "loop_trace"]

DEFAULT_ITERATIONS = 4
"""Iterations timed when the loop's bounds are not constants and none are given (a choice:
enough for the warps to settle into a steady state; the output says so)."""


@dataclass(frozen=True, eq=False)
class KernelLoopTrace:
    """Every warp's trace over ``iterations`` of the body, with per-row provenance: ``iteration``
    and ``step`` (index into ``program.steps``) for each row of ``trace``."""

    program: LoopProgram
    trace: Trace
    iterations: int
    iteration: np.ndarray = field(repr=False)
    step: np.ndarray = field(repr=False)

    def _per_step(self, attr: str) -> np.ndarray:
        values = np.array([getattr(s, attr) for s in self.program.steps] + [None], dtype=object)
        return values[self.step]

    @property
    def op_index(self) -> np.ndarray:
        """TTGIR op index per row (-1 where the row is not an op's LDS instruction)."""
        idx = [-1 if s.op_index is None else s.op_index for s in self.program.steps]
        return np.asarray(idx, dtype=np.int64)[self.step]

    @property
    def op_name(self) -> np.ndarray:
        """SSA name of the row's TTGIR op (None where there is none)."""
        return self._per_step("name")

    @property
    def label(self) -> np.ndarray:
        """What the loop table calls the row's op (`Step.label`; None for other work)."""
        return self._per_step("label")

    @property
    def loc(self) -> np.ndarray:
        """``file:line`` of the row's own assembly instruction."""
        return self._per_step("loc")

    @property
    def what(self) -> np.ndarray:
        """The class of the row's work (``lds``, ``tdm``, ``wmma``, ``alu``, ``wait_ds`` ...)."""
        return self._per_step("what")

    @property
    def mnemonic(self) -> np.ndarray:
        """The row's own assembly mnemonic (the last of its step's ``asm``)."""
        names = np.array([s.asm[-1] if s.asm else "" for s in self.program.steps], dtype=object)
        return names[self.step]

    def counts(self, warp: int = 0, iteration: int = 0) -> dict[str, int]:
        """Assembly mnemonic -> count that warp ``warp`` runs in ``iteration``."""
        rows = (self.trace.warp == warp) & (self.iteration == iteration)
        # each step once: a TDM instruction's step spans one row per 256 B it writes
        got = Counter(m for s in np.unique(self.step[rows]) for m in self.program.steps[s].asm)
        return dict(sorted(got.items()))


def loop_trace(
    program: LoopProgram, iterations: int | None = None, hw: HardwareConfig | None = None
) -> KernelLoopTrace:
    """Every warp of the workgroup running ``iterations`` of the body (default: the loop's
    constant trip count, else `DEFAULT_ITERATIONS`), with per-row provenance. Clock rows are
    labelled ``start``/``end`` when the body is one iteration with two clock reads (the
    microbenchmark's measurement), else ``clock<k>@iter<i>``; no clock is added."""
    hw = target_hardware(program.target) if hw is None else hw
    n = iterations if iterations is not None else program.iterations
    if n is None:
        n = DEFAULT_ITERATIONS
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise TraceError(f"iterations {n!r}: expected a positive integer")
    lanes = {low.lowering.lanes for low in program.lowerings.values() if low.modelled}
    b = TraceBuilder(num_warps=program.num_warps, lanes=max(lanes, default=hw.wgp.warp_size))
    rows = _Rows(program, n, b)
    it_col, step_col = [], []
    for w in range(program.num_warps):
        for i in range(n):
            counts, ops, args, addr = rows.of(w, i)
            b.rows(w, ops, args, addr)
            it_col.append(np.full(len(ops), i, np.int32))
            step_col.append(np.repeat(np.arange(len(counts), dtype=np.int32), counts))
    trace = b.build(lds_bytes=hw.partitions.lds_bytes)
    return KernelLoopTrace(program, trace, n, np.concatenate(it_col), np.concatenate(step_col))


_CONTROL = {
    "wait_ds": WAIT_DS,
    "barrier": BARRIER,
    "clock": CLOCK,
    "delay": DELAY,
    "wait_tensor": WAIT_TENSOR,
    "tensor_load_to_lds": TDM,
}


class _Rows:
    """The trace rows of one warp's iteration of the body, as numpy columns (`of`): a row per
    step, a TDM step's one per 256 B it writes. Per step: its op code, and its operand (a
    wait's count, a delay's cycles; a barrier's 0); an LDS step's addresses and 2addr distance
    from its lowering (its stage's, per iteration); a clock's label (``start``/``end`` when
    the body is one iteration with two clock reads, the microbenchmark's measurement, else
    ``clock<k>@iter<i>``), registered with the builder in row order."""

    def __init__(self, program: LoopProgram, iterations: int, builder: TraceBuilder):
        self.program, self.n, self.builder = program, iterations, builder
        steps = program.steps
        self.code = np.array(
            [
                _CONTROL[s.op] if s.op in _CONTROL else op_code(instruction(s.op).name)
                for s in steps
            ],
            dtype=np.int64,
        )
        self.arg = np.array([s.arg if s.op in _CONTROL else 0 for s in steps], dtype=np.int64)
        self.arg[self.code == BARRIER] = 0
        self.lds = [j for j, s in enumerate(steps) if s.op not in _CONTROL]
        self.tdm = [j for j, s in enumerate(steps) if s.op == "tensor_load_to_lds"]
        self.clocks = [j for j, s in enumerate(steps) if s.op == "clock"]
        self.groups: dict[int, list[tuple[np.ndarray, np.ndarray, object]]] = {}

    def _groups(self, i: int) -> list[tuple[np.ndarray, np.ndarray, object]]:
        """Iteration ``i``'s LDS steps per lowering they read: (steps, issued indices, issued)."""
        if i not in self.groups:
            found: dict[int, tuple[list, list, object]] = {}
            for j in self.lds:
                s = self.program.steps[j]
                issued = _lowering(self.program, s, i).lowering.issued
                group = found.setdefault(id(issued), ([], [], issued))
                group[0].append(j)
                group[1].append(s.issued)
            self.groups[i] = [(np.array(js), np.array(ks), iss) for js, ks, iss in found.values()]
        return self.groups[i]

    def of(self, w: int, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Warp ``w``'s rows of iteration ``i``: (rows per step, op codes, operands, addresses)."""
        program, steps, lanes = self.program, self.program.steps, self.builder.lanes
        counts = np.ones(len(steps), np.int64)
        granules = {}
        for j in self.tdm:
            s = steps[j]
            first, per = program.tdm[s.op_index]
            granules[j] = np.asarray(
                per[(first + i * program.unrolled + s.copy) % len(per)][w][s.issued]
            )
            counts[j] = len(granules[j])
        start = np.cumsum(counts) - counts
        ops, args = np.repeat(self.code, counts), np.repeat(self.arg, counts)
        addr = np.full((int(counts.sum()), lanes), -1, np.int64)
        for j in self.clocks:
            label = _clock_label(steps[j].arg, len(self.clocks), self.n, i)
            args[start[j]] = self.builder.label_index(label)
        for js, ks, issued in self._groups(i):
            if issued.addresses.shape[2] != lanes:  # as TraceBuilder.lds refuses it
                TraceBuilder(1, lanes).lds(0, steps[js[0]].op, issued.addresses[w, ks[0]])
            addr[start[js]] = issued.addresses[w, ks]
            args[start[js]] = issued.distance[ks]
        for j, rows in granules.items():
            addr[start[j] : start[j] + len(rows)] = rows
            args[start[j] : start[j] + len(rows)] = np.arange(len(rows)) == len(rows) - 1
        return counts, ops, args, addr


def _lowering(program: LoopProgram, step: Step, iteration: int) -> OpLowering:
    """The lowering a row of ``iteration`` reads through: its stage's, if staged."""
    staged = program.staged.get(step.op_index)
    if staged is None:
        return program.lowerings[step.op_index]
    first, per = staged
    return per[(first + iteration * program.unrolled + step.copy) % len(per)]


def _clock_label(k: int, clocks: int, iterations: int, i: int) -> str:
    if iterations == 1 and clocks == 2:
        return ("start", "end")[k]
    return f"clock{k}@iter{i}"
