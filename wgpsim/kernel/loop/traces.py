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
    clocks = sum(s.op == "clock" for s in program.steps)
    lanes = {low.lowering.lanes for low in program.lowerings.values() if low.modelled}
    b = TraceBuilder(num_warps=program.num_warps, lanes=max(lanes, default=hw.wgp.warp_size))
    it_col, step_col = [], []
    for w in range(program.num_warps):
        for i in range(n):
            for j, s in enumerate(program.steps):
                if s.op == "wait_ds":
                    b.wait_ds(w, s.arg)
                elif s.op == "barrier":
                    b.barrier([w])
                elif s.op == "clock":
                    b.clock(w, _clock_label(s.arg, clocks, n, i))
                elif s.op == "delay":
                    b.delay(w, s.arg)
                elif s.op == "wait_tensor":
                    b.wait_tensor(w, s.arg)
                elif s.op == "tensor_load_to_lds":
                    first, per = program.tdm[s.op_index]
                    rows = per[(first + i * program.unrolled + s.copy) % len(per)]
                    b.tdm(w, rows[w][s.issued])
                    extra = len(rows[w][s.issued]) - 1  # one trace row per 256 B written
                    it_col += [i] * extra
                    step_col += [j] * extra
                else:
                    issued = _lowering(program, s, i).lowering.issued
                    b.lds(w, s.op, issued.addresses[w, s.issued], int(issued.distance[s.issued]))
                it_col.append(i)
                step_col.append(j)
    trace = b.build(lds_bytes=hw.partitions.lds_bytes)
    return KernelLoopTrace(
        program, trace, n, np.asarray(it_col, dtype=np.int32), np.asarray(step_col, np.int32)
    )


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
