"""The stages of a multi-buffered loop: which buffer an op reads or writes in iteration t.

A ``local_load`` that reads a multi-buffered alloc through a computed or loop-carried stage
index reads another buffer each iteration (`staged_lowerings`: its lowering for every stage),
and a TDM copy writes granules into the stage it prefetches (`TdmRows`: the rows of granules
per stage, `wgpsim.kernel.tdm_writes`). The loop program keeps both, and its traces read the
stage of each iteration (`wgpsim.kernel.loop.traces`).

>>> from wgpsim.frontend.sources import read_kernel
>>> from wgpsim.kernel.loop.program import loop_program
>>> prog = loop_program(read_kernel("tests/fixtures/async_copy/masked_fp16_s2"))
>>> {i: (first, len(per)) for i, (first, per) in prog.staged.items()}
{2: (1, 2), 3: (0, 2), 4: (1, 2), 5: (0, 2)}
"""

from __future__ import annotations

from typing import Any

from wgpsim.errors import WgpsimError
from wgpsim.frontend.model import Kernel, LdsOp
from wgpsim.hw.config import HardwareConfig
from wgpsim.kernel.loop.matching import Assigner
from wgpsim.kernel.lowering import (
    ASYNC_COPY,
    KernelAllocation,
    carried_stage,
    computed_stage,
    lower_op,
    shared_view,
)
from wgpsim.kernel.tdm_writes import block_rows
from wgpsim.trace.instructions import INSTRUCTIONS
from wgpsim.trace.trace import TraceBuilder

__all__ = ["TdmRows", "staged_lowerings", "tdm_timed"]


def tdm_timed() -> bool:
    """Whether the engines time TDM writes (a ``tensor_load_to_lds`` trace op and
    ``wait_tensor``); until they do, a TDM instruction is a ``delay`` of its issue."""
    return "tensor_load_to_lds" in INSTRUCTIONS and hasattr(TraceBuilder, "wait_tensor")


class TdmRows:
    """The granules each TDM copy op writes, per stage (`wgpsim.kernel.tdm_writes`)."""

    def __init__(self, kernel: Kernel, alloc: KernelAllocation, notes: list[str]):
        self.kernel, self.alloc, self.notes = kernel, alloc, notes
        self.cache: dict[tuple[int, int], Any] = {}
        self.seen: dict[int, int] = {}

    def rows(self, op: LdsOp, stage: int):
        key = (op.index, stage)
        if key not in self.cache:
            try:
                view, _ = shared_view(self.kernel, op, stage)
                bases = self.alloc.offsets[op.buffer]
                md = op.memdesc
                self.cache[key] = block_rows(
                    view,
                    md.shape,
                    md.elem_bits // 8,
                    list(bases) if len(bases) > 1 else bases[0],
                    num_warps=self.kernel.num_warps,
                )
            except (WgpsimError, KeyError, AttributeError) as err:
                self.notes.append(f"{op.name} ({op.loc.short}): TDM writes not traced: {err}")
                self.cache[key] = None
        return self.cache[key]

    def stages(self, loop: bool) -> dict[int, tuple[int, tuple]]:
        """Per op traced: (first stage, rows per stage). A copy into a computed stage of a
        multi-buffered alloc writes stage (stages - 1 + t) mod stages in TTGIR iteration t
        (assumption: it prefetches for the loads stages - 1 iterations ahead, as the Gluon
        GEMM's ``index(1 - s)`` and Triton's pipeliner do)."""
        out = {}
        for index in self.seen:
            op = self.kernel.ops[index]
            stages = self.kernel.buffer(op.buffer).stages
            if not loop or not computed_stage(op) or stages < 2:
                out[index] = (0, (self.rows(op, 0),))
                continue
            per = tuple(self.rows(op, s) for s in range(stages))
            out[index] = (stages - 1, per) if all(p is not None for p in per) else (0, per[:1])
        return out


def staged_lowerings(
    kernel: Kernel,
    assigner: Assigner,
    alloc: KernelAllocation,
    hw: HardwareConfig,
    notes: list[str],
) -> dict[int, tuple[int, tuple]]:
    """Per op that reads a multi-buffered alloc through a computed stage index or a
    loop-carried view: (first stage, its lowering for every stage). Assumption: the index
    advances by one stage per iteration, so TTGIR iteration t reads stage (first + t) mod
    stages (the Gluon GEMM's ``s = k % 2`` from 0; Triton's pipeliner carries the view of
    ``memdesc_index`` at an index it increments modulo the buffers, from the prologue's). An
    async copy's ``other`` store into a computed stage writes stage (stages - 1 + t) mod
    stages, as a TDM copy does (`TdmRows.stages`)."""
    out = {}
    for index, low in assigner.low.items():
        op = low.op
        carried = carried_stage(op)
        if low.lowering is None or not (computed_stage(op) or carried is not None):
            continue
        stages = kernel.buffer(op.buffer).stages
        if stages < 2:
            continue
        first = 0 if carried is None else carried
        if op.op == ASYNC_COPY and carried is None:
            first = stages - 1
        view = _view(kernel, op, None)
        per = tuple(
            low
            if view is not None and _view(kernel, op, s) == view
            else assigner.fit(op, lower_op(kernel, op, alloc, hw, stage=s))
            for s in range(stages)
        )
        if any(p.lowering is None or p.lowering.issued.ops != low.lowering.issued.ops for p in per):
            continue
        out[index] = (first, per)
        how = "computed" if carried is None else "loop-carried"
        verb = "writes" if op.direction == "store" else "reads"
        notes.append(
            f"{op.name or op.op} ({op.loc.short}): the stage index is {how}: TTGIR iteration t "
            f"{verb} stage ({first} + t) mod {stages} (assumption: it advances one per iteration)"
        )
    return out


def _view(kernel: Kernel, op: LdsOp, stage: int | None) -> Any:
    """The shared view ``op`` reaches at ``stage`` (None if there is none). `lower_op` reads a
    stage only through it: at a stage whose view is the unstaged one's (stage 0 of a computed
    index, the first stage of a loop-carried view), the op's lowering is its unstaged one,
    not lowered again (the attention example: 4 of 8)."""
    try:
        return shared_view(kernel, op, stage)[0]
    except WgpsimError:
        return None
