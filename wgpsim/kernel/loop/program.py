"""A compiled kernel's loop as the hardware runs it: the assembly's instruction stream joined to
the TTGIR's LDS ops, and the per-warp traces of N iterations.

`loop_program(kernel, asm)` reads the loop body of the assembly (`wgpsim.frontend.amdgcn_loops`)
into `Step`\\ s, one per trace row: every ``ds_*`` becomes an LDS row whose lane addresses come
from the layouts (the op's `wgpsim.kernel.lowering.lower_op`), the waits and barriers
become ``wait_ds`` / ``barrier`` rows, a clock read a ``clock`` row, and the other work ``delay``
rows of the issue cycles in ``costs:`` of `configs/mi450.yaml` (a ``v_wmma_*`` one row each,
runs of VALU/SALU/memory instructions one row per run). Instructions that cost nothing (hints
such as ``s_wait_alu``, ``s_barrier_signal``, the memory waits) ride on the next row, so every
instruction of the body is counted by exactly one step. A kernel without a loop is one
"iteration" of its whole body. Without assembly the body is built from the TTGIR order
(`ttgir_program`, a documented rule for the waits). `loop_trace(program, iterations)` repeats the
body for every warp and keeps, per row, the iteration and the step (so the TTGIR op, its
location and the assembly mnemonic).

The matching (docs/DESIGN.md, "The loop, from the assembly"): a ``ds_*`` instruction under
``.loc FILE:LINE`` belongs to a TTGIR LDS op of that line (in the loop the assembly's loop maps
to: the ``scf.for`` on the back-branch's line); several ops on one line are served in program
order, each up to the instructions of that mnemonic its lowering issues. Within one op, the
assembly's instructions are matched to the lowering's by their immediate offsets (one base
register per group: the offsets must be the lowering's address differences); where they are not,
in the lowering's order, and the program says so. A ``ds_*`` that no op of its line can take is
``unmatched``: a one-line note, timed as one cycle of issue, never given another op's addresses.

The AMD blog's microbenchmark (its Gluon kernel, compiled for gfx1250): barrier, clock, 32
``ds_load_b128``, wait, barrier, clock; the body is the whole kernel:

>>> from wgpsim.frontend.sources import read_kernel
>>> k = read_kernel("tests/corpus/fixtures/lds_bandwidth_plain/kernel.ttgir")
>>> prog = loop_program(k, open("tests/corpus/fixtures/lds_bandwidth_plain/kernel.amdgcn").read())
>>> prog.label, prog.source, prog.unmatched
('lds_bandwidth', 'assembly', ())
>>> [s.op for s in prog.steps if s.op != "delay"][:4], prog.counts()["ds_load_b128"]
(['barrier', 'clock', 'ds_load_b128', 'ds_load_b128'], 32)
>>> lt = loop_trace(prog)
>>> lt.iterations, lt.trace.num_warps, lt.trace.count_by_op()["ds_load_b128"]
(1, 4, 128)
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from wgpsim.errors import TraceError, WgpsimError
from wgpsim.frontend.amdgcn_loops import AsmBody, AsmInstr, loops, straight
from wgpsim.frontend.model import Kernel, LdsOp
from wgpsim.hw.config import HardwareConfig, load_hardware, target_hardware  # noqa: F401 (doctest)
from wgpsim.kernel.loop.matching import Assigner, Unmatched, by_line, ops_at
from wgpsim.kernel.lowering import (
    ASYNC_COPY,
    KernelAllocation,
    OpLowering,
    allocate_kernel,
    carried_stage,
    computed_stage,
    lower_op,
    shared_view,
    writes_with_ds,
)
from wgpsim.kernel.tdm_writes import block_rows
from wgpsim.trace.instructions import INSTRUCTIONS
from wgpsim.trace.trace import Trace, TraceBuilder

__all__ = [
    "DEFAULT_ITERATIONS",
    "KernelLoopTrace",
    "LoopProgram",
    "Step",
    "loop_program",
    "loop_trace",
    "op_label",
    "ttgir_program",
    "unmatched_label",
    "wmma_cost",
]

DEFAULT_ITERATIONS = 4
"""Iterations timed when the loop's bounds are not constants and none are given (a choice:
enough for the warps to settle into a steady state; the output says so)."""

TDM_NOTE = "tensor_load_to_lds / tensor_store_from_lds: issue cycles only, not timed as LDS writes"
ASYNC_NOTE = "global_load_async_to_lds: issue cycles only, not timed as LDS writes"
PERMUTE_NOTE = (
    "lane permutes through the LDS crossbar (a warp shuffle: no LDS memory access), issue "
    "cycles only, not timed as LDS traffic; s_wait_dscnt counts them as done"
)
_OTHER = ("valu", "salu", "global", "smem", "branch")
TDM_OPS = ("amdg.async_tdm_copy_global_to_local", "amdg.async_tdm_copy_local_to_global")
ASYNC_OPS = ("ttg.async_copy_global_to_local",)
COPIES = TDM_OPS + ASYNC_OPS
_LOOPS = ("scf.for", "scf.while", "cf.loop")


@dataclass(frozen=True)
class Step:
    """One trace row of the body: ``op`` is the trace op (an LDS instruction, ``wait_ds``,
    ``barrier``, ``clock`` or ``delay``), ``arg`` its operand (wait count, delay cycles; for
    a clock its index among the body's clocks); ``asm`` the assembly mnemonics it stands for
    (its own last, the free ones before it first); ``what`` the class of its work (``lds``,
    ``wmma``, ``alu``, ``tdm``, ``unmatched`` ...); ``op_index`` / ``name`` / ``loc`` the TTGIR
    op of an LDS row, or of a TDM / async copy row (the one copy op of its line), else None; ``issued`` the row's instruction in that op's lowering;
    ``line`` the assembly line of its own instruction; ``copy`` which of the body's copies of
    the TTGIR iteration it belongs to (0 unless LLVM unrolled the loop); ``label`` what the
    loop table calls the row's op (`op_label`; `unmatched_label` for an unmatched ``ds_*``)."""

    op: str
    arg: int
    asm: tuple[str, ...]
    what: str
    loc: str = "?"
    line: int = 0
    op_index: int | None = None
    name: str | None = None
    issued: int | None = None
    copy: int = 0
    label: str | None = None


@dataclass(frozen=True)
class LoopProgram:
    """The body of one loop (or of a straight-line kernel), ready to be traced."""

    kernel: str
    num_warps: int
    label: str
    source: str  # "assembly" or "ttgir"
    steps: tuple[Step, ...]
    iterations: int | None
    notes: tuple[str, ...] = ()
    unmatched: tuple[Unmatched, ...] = ()
    asm_counts: dict[str, int] = field(default_factory=dict)
    lowerings: dict[int, OpLowering] = field(default_factory=dict, repr=False, compare=False)
    #: per op whose stage index is computed or loop-carried: (first stage, its lowering for
    #: each stage of its buffer)
    staged: dict[int, tuple[int, tuple[OpLowering, ...]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    unrolled: int = 1
    #: the module's ``ttg.target`` (its hardware file when none is given)
    target: str = ""
    #: per TDM copy op: (first stage, per stage ``rows[warp][instruction]`` of granules)
    tdm: dict[int, tuple[int, tuple]] = field(default_factory=dict, repr=False, compare=False)

    def counts(self) -> dict[str, int]:
        """Assembly mnemonic -> count over the steps (equals ``asm_counts`` by construction of
        the assembly path: every instruction rides on exactly one step)."""
        return dict(sorted(Counter(m for s in self.steps for m in s.asm).items()))


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


def op_label(op: LdsOp) -> str:
    """The op and its source line, as the loop table names a row: its SSA name, else its kind
    and index (a ``local_store`` has no result), and its ``.loc``.

    >>> from wgpsim.frontend.sources import read_kernel
    >>> k = read_kernel("tests/fixtures/async_copy/masked_fp16_s2")
    >>> op_label(k.ops[2]), op_label(k.ops[3])
    ('%a_84 async_copy_global_to_local (kernels.py:34)', '%a_86 local_load (kernels.py:34)')
    """
    return row_label(op.name, op.op, op.index, op.loc.short if op.loc is not None else None)


def row_label(name: str | None, op: str, index: int, loc: str | None) -> str:
    """The loop table's name of an op from its fields (a report op's ``name``, ``op``,
    ``index`` and ``loc``), as :func:`op_label` names it.

    >>> row_label(None, "ttg.local_store", 5, "kernels.py:114")
    'local_store #5 (kernels.py:114)'
    """
    kind = op.split(".", 1)[-1]
    who = f"{name} {kind}" if name else f"{kind} #{index}"
    return f"{who} ({loc})" if loc is not None else who


def unmatched_label(u: Unmatched) -> str:
    """The loop table's name for an unmatched ``ds_*``: its mnemonic and source line."""
    return f"unmatched {u.mnemonic} ({u.loc})"


# ---- costs ------------------------------------------------------------------------------------

_WMMA_2PASS = re.compile(r"^v_s?wmmac?_.*_(fp8|bf8|bf16|f16)$")
_WMMA_4PASS = re.compile(r"^v_s?wmmac?_.*_(iu8|iu4)$")
_F8_FMT = re.compile(r"matrix_[ab]_fmt:MATRIX_FMT_(FP8|BF8)\b")


def wmma_cost(instr: AsmInstr, hw: HardwareConfig) -> tuple[int, str]:
    """Issue cycles of one ``v_wmma_*`` by LLVM's GFX1250SpeedModel classes (its ``InstRW``
    patterns), and a note if the mnemonic is in none of them.

    >>> from wgpsim.frontend.amdgcn_loops import stream
    >>> i = stream("k:\\n v_wmma_f32_16x16x32_f16 v[0:7], v[8:15], v[16:23], v[0:7]")[1][1]
    >>> wmma_cost(i, load_hardware())
    (8, '')
    """
    c, m = hw.costs, instr.mnemonic
    if m.startswith("v_wmma_f32_16x16x4_f32"):
        return c.wmma_valu_4pass, ""
    if "_16x16x128_f8f6f4" in m:  # f8 unless both formats are given as something else
        fmts = re.findall(r"matrix_[ab]_fmt:\w+", instr.operands)
        f8 = len(fmts) < 2 or bool(_F8_FMT.search(instr.operands))
        return (c.wmma_xdl_4pass if f8 else c.wmma_xdl_2pass), ""
    if "_f32_32x16x128_f4" in m or _WMMA_2PASS.match(m):
        return c.wmma_xdl_2pass, ""
    if _WMMA_4PASS.match(m):
        return c.wmma_xdl_4pass, ""
    return c.wmma_xdl_2pass, f"{m}: in no LLVM GFX1250 class, taken as a 2-pass WMMA"


def _cost(instr: AsmInstr, hw: HardwareConfig) -> int:
    c, k = hw.costs, instr.kind
    if k == "hint":
        if instr.mnemonic != "s_nop":
            return 0
        m = re.match(r"\s*(0x[0-9a-fA-F]+|\d+)", instr.operands)
        return int(m.group(1), 0) + 1 if m else 1  # ISA: s_nop N waits N + 1 cycles
    return {
        "valu": c.valu,
        "salu": c.salu,
        "branch": c.branch,
        "global": c.global_issue,
        "smem": c.smem_issue,
        "tdm": c.tdm_issue,
        "async": c.async_issue,
        "wait_load": c.memory_wait,
        "wait_tensor": c.memory_wait,
        "wait_async": c.memory_wait,
    }.get(k, 0)


# ---- matching ---------------------------------------------------------------------------------


def _ttgir_loop(kernel: Kernel, body: AsmBody) -> tuple[int | None, str | None]:
    """The TTGIR loop the assembly's loop is: the loop op on the back-branch's line."""
    if not body.is_loop:
        return None, None
    b = body.branch
    cands: list = []
    for frame in b.frames or ((b.src_file, b.src_line),):  # innermost first
        cands = cands or [
            lp
            for lp in kernel.loops
            if lp.kind in _LOOPS
            and lp.loc is not None
            and (lp.loc.short.split(":")[0], lp.loc.line) == frame
        ]
    if len(cands) == 1:
        return cands[0].id, None
    why = "no" if not cands else f"{len(cands)}"
    return None, (
        f"{why} TTGIR loop(s) at the back-branch's line {b.loc}: ds_* matched to the ops of "
        "every loop"
    )


def _inner_loops(kernel: Kernel, asm: str, body: AsmBody):
    """Assembly line -> the TTGIR loop of the innermost loop nested in ``body`` that holds
    it (None outside any, or for a nested loop no TTGIR loop matches)."""
    inner = sorted(
        (b.lines, _ttgir_loop(kernel, b)[0])
        for b in loops(asm)
        if body.is_loop
        and b.function == body.function
        and body.lines[0] < b.lines[0]
        and b.lines[1] <= body.lines[1]
    )

    def scope(line: int) -> int | None:
        held = [(hi - lo, lp) for (lo, hi), lp in inner if lo <= line <= hi and lp is not None]
        return min(held)[1] if held else None

    return scope


def _iterations(kernel: Kernel, loop_id: int | None) -> int | None:
    if loop_id is None:
        return 1
    lp = next(lp for lp in kernel.loops if lp.id == loop_id)
    try:
        lb, ub, step = (int(v) for v in lp.bounds or ())
    except ValueError:
        return None
    return max(0, math.ceil((ub - lb) / step)) if step > 0 else None


def _candidates(
    kernel: Kernel, body: AsmBody, loop_id: int | None, kinds: tuple[str, ...] | None = None
) -> list[LdsOp]:
    """The LDS ops of the body's loop (every op without a loop): those that issue ``ds_*``
    (`writes_with_ds`), or those of ``kinds``."""
    ops = [
        op
        for op in kernel.ops
        if (writes_with_ds(op) if kinds is None else op.op in kinds) and op.loc is not None
    ]
    if not body.is_loop:
        return ops
    if loop_id is not None:
        return [op for op in ops if loop_id in op.loops]
    return [op for op in ops if op.loops]


# ---- programs ---------------------------------------------------------------------------------


def pick_body(asm: str, loop: str | int | None = None) -> AsmBody:
    """The body to time: the named loop (label or index), else the loop with the most ``ds_*``,
    else the whole (first) function."""
    bodies = loops(asm)
    if isinstance(loop, int):
        if not 0 <= loop < len(bodies):
            raise TraceError(f"loop {loop}: the assembly has {len(bodies)} loop(s)")
        return bodies[loop]
    if isinstance(loop, str):
        for b in bodies:
            if b.label == loop:
                return b
        labels = ", ".join(b.label for b in bodies) or "none"
        raise TraceError(f"loop {loop!r}: not a loop label of the assembly (labels: {labels})")
    if not bodies:
        return straight(asm)
    return max(bodies, key=lambda b: (sum(i.kind == "ds" for i in b.instructions), -b.lines[0]))


def loop_program(
    kernel: Kernel,
    asm: str | None = None,
    *,
    loop: str | int | None = None,
    hw: HardwareConfig | None = None,
    alloc: KernelAllocation | None = None,
) -> LoopProgram:
    """The body of ``kernel``'s loop (see the module docstring); ``asm`` defaults to the
    kernel's own assembly, and without any, `ttgir_program`."""
    hw = target_hardware(kernel.target) if hw is None else hw
    asm = kernel.assembly if asm is None else asm
    alloc = allocate_kernel(kernel, hw) if alloc is None else alloc
    if asm is None:
        return ttgir_program(kernel, hw=hw, alloc=alloc)
    body = pick_body(asm, loop)
    loop_id, note = _ttgir_loop(kernel, body)
    notes = [note] if note else []
    ds = [i for i in body.instructions if i.kind == "ds"]
    assigner = Assigner(kernel, _candidates(kernel, body, loop_id), alloc, hw, ds)
    scope = _inner_loops(kernel, asm, body)
    owners = {i.line: assigner.take(i, scope(i.line)) for i in ds if i.src_line}
    owners |= {i.line: assigner.take_unlined(i) for i in ds if not i.src_line}
    issued_at = assigner.issued_indices(notes)
    unrolled = assigner.unrolled()
    if unrolled > 1:
        notes.append(f"the body holds {unrolled} iterations of the TTGIR loop (LLVM unrolled it)")
    copies = _candidates(kernel, body, loop_id, COPIES)

    def copy_op(instr: AsmInstr) -> LdsOp | None:
        """The TTGIR copy op of a TDM / async instruction: the one copy op of its line (of its
        kind), else None and a note."""
        kind = TDM_OPS if instr.kind == "tdm" else ASYNC_OPS
        mine = ops_at(instr, by_line(op for op in copies if op.op in kind))[1]
        if len(mine) == 1:
            return mine[0]
        note = (
            f"{instr.mnemonic} at {instr.chain}: {len(mine)} TTGIR copy ops on its line, none named"
        )
        notes.extend([note] if note not in notes else [])
        return None

    steps: list[Step] = []
    pending: list[str] = []  # free instructions riding on the next step
    run: list[AsmInstr] = []  # a run of other work: one delay row
    clocks = 0

    def flush_run() -> None:
        if run:
            cycles = sum(_cost(i, hw) for i in run)
            if cycles:
                steps.append(
                    Step(
                        "delay",
                        cycles,
                        (*pending, *(i.mnemonic for i in run)),
                        "alu",
                        run[-1].loc,
                        run[-1].line,
                    )
                )
                pending.clear()
            else:
                pending.extend(i.mnemonic for i in run)
            run.clear()

    def add(op: str, arg: int, instr: AsmInstr, what: str, **kw) -> None:
        flush_run()
        steps.append(Step(op, arg, (*pending, instr.mnemonic), what, instr.loc, instr.line, **kw))
        pending.clear()

    unmatched, seen_tdm, seen_async = [], False, False
    permutes: dict[str, int] = {}
    tdm = _TdmRows(kernel, alloc, notes)
    for instr in body.instructions:
        k = instr.kind
        if k == "wait_tensor" and tdm_timed():
            add("wait_tensor", instr.count or 0, instr, "wait_tensor")
        elif k in _OTHER or k in ("hint", "wait_load", "wait_tensor", "wait_async"):
            run.append(instr)
        elif k == "barrier":
            if instr.mnemonic in ("s_barrier_wait", "s_barrier"):  # gfx9: one s_barrier
                add("barrier", 0, instr, "barrier")
            else:
                flush_run()
                pending.append(instr.mnemonic)
        elif k == "wait_ds":
            add("wait_ds", instr.count or 0, instr, "wait_ds")
        elif k == "permute":
            add("delay", hw.costs.lane_permute_issue, instr, "permute", label=instr.mnemonic)
            permutes[instr.mnemonic] = permutes.get(instr.mnemonic, 0) + 1
        elif k == "clock":
            add("clock", clocks, instr, "clock")
            clocks += 1
        elif k == "wmma":
            cycles, note = wmma_cost(instr, hw)
            if note and note not in notes:
                notes.append(note)
            add("delay", cycles, instr, "wmma")
        elif k in ("tdm", "async"):
            seen_async |= k == "async"
            op = copy_op(instr)
            name = op.name if op is not None else None
            index = op.index if op is not None else None
            per = tdm.rows(op, 0) if k == "tdm" and op is not None and tdm_timed() else None
            if per is not None and instr.mnemonic == "tensor_load_to_lds":
                n = tdm.seen.get(index, 0)
                tdm.seen[index] = n + 1
                add(
                    "tensor_load_to_lds",
                    0,
                    instr,
                    k,
                    op_index=index,
                    name=name,
                    issued=n % len(per[0]),
                    copy=n // len(per[0]),
                    label=op_label(op),
                )
            else:
                seen_tdm |= k == "tdm"
                label = op_label(op) if op is not None else None
                add("delay", _cost(instr, hw), instr, k, op_index=index, name=name, label=label)
        elif k == "ds":
            op, why = owners[instr.line]
            if op is None or instr.mnemonic not in INSTRUCTIONS:
                why = why or Unmatched(instr.mnemonic, instr.line, instr.chain, "not modelled")
                unmatched.append(why)
                add("delay", hw.costs.valu, instr, "unmatched", label=unmatched_label(why))
            else:
                add(
                    instr.mnemonic,
                    0,
                    instr,
                    "lds",
                    op_index=op.index,
                    name=op.name,
                    label=op_label(op),
                    issued=issued_at[instr.line],
                    copy=assigner.copy_of[instr.line],
                )
        else:  # pragma: no cover - every kind is handled above
            raise AssertionError(k)
    flush_run()
    if pending:  # free instructions at the end ride on the last step
        if steps:
            steps[-1] = replace(steps[-1], asm=(*steps[-1].asm, *pending))
        else:
            steps.append(Step("delay", 0, tuple(pending), "alu"))
    notes += assigner.notes + assigner.leftovers(unrolled)
    if seen_tdm:
        notes.append(TDM_NOTE)
    if seen_async:
        notes.append(ASYNC_NOTE)
    notes += [f"{n} {m}: {PERMUTE_NOTE}" for m, n in permutes.items()]
    staged = _staged(kernel, assigner, alloc, hw, notes) if body.is_loop else {}
    lowered = [
        lo
        for i, lo in assigner.low.items()
        if lo.note and lo.lowering is not None and i not in staged
    ]
    notes += [f"{lo.op.name or lo.op.op} ({lo.op.loc.short}): {lo.note}" for lo in lowered]
    iterations = _iterations(kernel, loop_id) if body.is_loop else 1
    if iterations is not None and unrolled > 1:
        iterations = math.ceil(iterations / unrolled)
    return LoopProgram(
        kernel=kernel.name,
        target=kernel.target,
        num_warps=kernel.num_warps,
        label=body.label,
        source="assembly",
        steps=tuple(steps),
        iterations=iterations,
        notes=tuple(notes),
        unmatched=tuple(unmatched),
        asm_counts=body.counts(),
        lowerings=dict(assigner.low),
        staged=staged,
        unrolled=unrolled,
        tdm=tdm.stages(body.is_loop),
    )


def _staged(kernel, assigner, alloc, hw, notes: list[str]) -> dict[int, tuple[int, tuple]]:
    """Per op that reads a multi-buffered alloc through a computed stage index or a
    loop-carried view: (first stage, its lowering for every stage). Assumption: the index
    advances by one stage per iteration, so TTGIR iteration t reads stage (first + t) mod
    stages (the Gluon GEMM's ``s = k % 2`` from 0; Triton's pipeliner carries the view of
    ``memdesc_index`` at an index it increments modulo the buffers, from the prologue's). An
    async copy's ``other`` store into a computed stage writes stage (stages - 1 + t) mod
    stages, as a TDM copy does (`_TdmRows.stages`)."""
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
        per = tuple(
            assigner.fit(op, lower_op(kernel, op, alloc, hw, stage=s)) for s in range(stages)
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


def ttgir_program(
    kernel: Kernel, *, hw: HardwareConfig | None = None, alloc: KernelAllocation | None = None
) -> LoopProgram:
    """The loop body from the TTGIR alone (no assembly), by a rule (docs/DESIGN.md): the LDS
    ops of the loop with the most of them (the whole kernel if none) in module order, each op's
    instructions as its lowering issues them; a load op is followed by ``wait_ds 0`` (its
    registers are used next); a store op by ``wait_ds 0`` and a ``barrier`` (Triton's membar
    analysis separates a write from other warps' reads of the buffer); TDM and async copies are
    one cycle of issue; no WMMA or other work (the kernel model holds only the LDS ops)."""
    hw = target_hardware(kernel.target) if hw is None else hw
    alloc = allocate_kernel(kernel, hw) if alloc is None else alloc
    loops_ = [lp for lp in kernel.loops if lp.kind in _LOOPS]
    per_loop = Counter(i for op in kernel.ops for i in op.loops)
    best = max(loops_, key=lambda lp: per_loop[lp.id], default=None)
    loop_id = best.id if best is not None and per_loop[best.id] else None
    ops = [op for op in kernel.ops if loop_id is None or loop_id in op.loops]
    steps: list[Step] = []
    lowerings: dict[int, OpLowering] = {}
    notes = [
        "no assembly: the body is the TTGIR's LDS ops in module order, waits by rule, "
        "no WMMA or other work"
    ]
    for op in ops:
        loc = op.loc.short if op.loc is not None else "?"
        if not writes_with_ds(op):
            steps.append(
                Step("delay", hw.costs.tdm_issue, (), "tdm", loc, op_index=op.index, name=op.name)
            )
            continue
        low = lower_op(kernel, op, alloc, hw)
        lowerings[op.index] = low
        if low.lowering is None:
            notes.append(f"{op.name or op.op} ({loc}): not lowered: {low.note}")
            continue
        label = op_label(op)
        barriers = list(getattr(low.lowering, "barriers_after", ()))
        for k, name in enumerate(low.lowering.issued.ops):
            while barriers and barriers[0] == k:  # a scratch op's store, barrier, load
                steps += [
                    Step("wait_ds", 0, (), "wait_ds", loc),
                    Step("barrier", 0, (), "barrier", loc),
                ]
                barriers.pop(0)
            steps.append(
                Step(name, 0, (name,), "lds", loc, op_index=op.index, name=op.name, issued=k,
                     label=label)
            )  # fmt: skip
        steps.append(Step("wait_ds", 0, (), "wait_ds", loc))
        if op.direction == "store":
            steps.append(Step("barrier", 0, (), "barrier", loc))
    if any(s.what == "tdm" for s in steps):
        notes.append(TDM_NOTE)
    return LoopProgram(
        kernel=kernel.name,
        target=kernel.target,
        num_warps=kernel.num_warps,
        label="ttgir",
        source="ttgir",
        steps=tuple(steps),
        iterations=_iterations(kernel, loop_id),
        notes=tuple(notes),
        lowerings=lowerings,
    )


# ---- traces -----------------------------------------------------------------------------------


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
    b = TraceBuilder(num_warps=program.num_warps, lanes=hw.wgp.warp_size)
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


def tdm_timed() -> bool:
    """Whether the engines time TDM writes (a ``tensor_load_to_lds`` trace op and
    ``wait_tensor``); until they do, a TDM instruction is a ``delay`` of its issue."""
    return "tensor_load_to_lds" in INSTRUCTIONS and hasattr(TraceBuilder, "wait_tensor")


class _TdmRows:
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
