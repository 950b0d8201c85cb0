"""A compiled kernel's loop as the hardware runs it: the assembly's instruction stream joined to
the TTGIR's LDS ops (the per-warp traces of N iterations are `wgpsim.kernel.loop.traces`).

`loop_program(kernel, asm)` reads the loop body of the assembly (`wgpsim.frontend.amdgcn_loops`)
into `Step`\\ s, one per trace row: every ``ds_*`` becomes an LDS row whose lane addresses come
from the layouts (the op's `wgpsim.kernel.lowering.lower_op`), the waits and barriers
become ``wait_ds`` / ``barrier`` rows, a clock read a ``clock`` row, and the other work ``delay``
rows of the issue cycles in ``costs:`` of the hardware file (a ``v_wmma_*`` / ``v_mfma_*`` one
row each, its LLVM class's cycles, runs of VALU/SALU/memory instructions one row per run). Instructions that cost nothing (hints
such as ``s_wait_alu``, ``s_barrier_signal``, the memory waits) ride on the next row, so every
instruction of the body is counted by exactly one step. A kernel without a loop is one
"iteration" of its whole body. Without assembly the body is built from the TTGIR order
(`ttgir_program`, a documented rule for the waits). `wgpsim.kernel.loop.traces.loop_trace`
repeats the body for every warp and keeps, per row, the iteration and the step (so the TTGIR
op, its location and the assembly mnemonic).

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
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace

from wgpsim.errors import TraceError
from wgpsim.frontend.amdgcn_loops import AsmBody, AsmInstr, loops, straight
from wgpsim.frontend.model import Kernel, LdsOp
from wgpsim.hw.config import HardwareConfig, target_hardware
from wgpsim.kernel.loop.costs import issue_cycles, wmma_cost
from wgpsim.kernel.loop.matching import (
    LOOP_OPS,
    Assigner,
    Unmatched,
    by_line,
    candidates,
    inner_loops,
    ops_at,
    trip_count,
    ttgir_loop,
)
from wgpsim.kernel.loop.stages import TdmRows, staged_lowerings, tdm_timed
from wgpsim.kernel.lowering import (
    KernelAllocation,
    OpLowering,
    allocate_kernel,
    lower_op,
    writes_with_ds,
)
from wgpsim.trace.instructions import INSTRUCTIONS

__all__ = [
    "LoopProgram",
    "Step",
    "loop_program",
    "op_label",
    "pick_body",
    "row_label",
    "tdm_timed",
    "ttgir_program",
    "unmatched_label",
    "wmma_cost",
]

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
    loop_id, note = ttgir_loop(kernel, body)
    notes = [note] if note else []
    ds = [i for i in body.instructions if i.kind == "ds"]
    assigner = Assigner(kernel, candidates(kernel, body, loop_id), alloc, hw, ds)
    scope = inner_loops(kernel, asm, body)
    owners = {i.line: assigner.take(i, scope(i.line)) for i in ds if i.src_line}
    owners |= {i.line: assigner.take_unlined(i) for i in ds if not i.src_line}
    moved = [i for i in ds if i.src_line and owners[i.line][0] is None]
    owners |= {i.line: assigner.take_moved(i, owners[i.line][1]) for i in moved}
    issued_at = assigner.issued_indices(notes)
    unrolled = assigner.unrolled()
    if unrolled > 1:
        notes.append(f"the body holds {unrolled} iterations of the TTGIR loop (LLVM unrolled it)")
    copies = candidates(kernel, body, loop_id, COPIES)
    steps = _Steps(kernel, hw, alloc, notes, assigner, (owners, issued_at), copies)
    for instr in body.instructions:
        steps.add_instruction(instr)
    steps.finish()
    notes += assigner.notes + assigner.leftovers(unrolled)
    notes += steps.notes_of_work()
    staged = staged_lowerings(kernel, assigner, alloc, hw, notes) if body.is_loop else {}
    notes += _lowering_notes(assigner, staged)
    iterations = trip_count(kernel, loop_id) if body.is_loop else 1
    if iterations is not None and unrolled > 1:
        iterations = math.ceil(iterations / unrolled)
    return LoopProgram(
        kernel=kernel.name,
        target=kernel.target,
        num_warps=kernel.num_warps,
        label=body.label,
        source="assembly",
        steps=tuple(steps.steps),
        iterations=iterations,
        notes=tuple(notes),
        unmatched=tuple(steps.unmatched),
        asm_counts=body.counts(),
        lowerings=dict(assigner.low),
        staged=staged,
        unrolled=unrolled,
        tdm=steps.tdm.stages(body.is_loop),
    )


def _lowering_notes(assigner: Assigner, staged: dict) -> list[str]:
    """The notes of the ops' lowerings (those of staged ops were said per stage)."""
    return [
        f"{lo.op.name or lo.op.op} ({lo.op.loc.short}): {lo.note}"
        for i, lo in assigner.low.items()
        if lo.note and lo.lowering is not None and i not in staged
    ]


class _Steps:
    """The steps of an assembly body, written instruction by instruction (`loop_program`).

    Instructions that cost nothing wait in ``pending`` and ride on the next step; a run of
    other work (VALU, SALU, memory, hints) becomes one ``delay`` row of its issue cycles.
    """

    def __init__(
        self,
        kernel: Kernel,
        hw: HardwareConfig,
        alloc: KernelAllocation,
        notes: list[str],
        assigner: Assigner,
        owned: tuple[dict[int, tuple], dict[int, int]],
        copies: list[LdsOp],
    ):
        self.hw, self.notes, self.assigner, self.copies = hw, notes, assigner, copies
        self.owners, self.issued_at = owned  # per ds_* line: (op, why), its issued index
        self.tdm = TdmRows(kernel, alloc, notes)
        self.steps: list[Step] = []
        self.pending: list[str] = []  # free instructions riding on the next step
        self.run: list[AsmInstr] = []  # a run of other work: one delay row
        self.unmatched: list[Unmatched] = []
        self.permutes: dict[str, int] = {}
        self.clocks, self.seen_tdm, self.seen_async = 0, False, False

    def flush_run(self) -> None:
        """The run of other work so far as one ``delay`` row (free work rides on)."""
        if not self.run:
            return
        cycles = sum(issue_cycles(i, self.hw) for i in self.run)
        if cycles:
            last = self.run[-1]
            asm = (*self.pending, *(i.mnemonic for i in self.run))
            self.steps.append(Step("delay", cycles, asm, "alu", last.loc, last.line))
            self.pending.clear()
        else:
            self.pending.extend(i.mnemonic for i in self.run)
        self.run.clear()

    def add(self, op: str, arg: int, instr: AsmInstr, what: str, **kw) -> None:
        self.flush_run()
        asm = (*self.pending, instr.mnemonic)
        self.steps.append(Step(op, arg, asm, what, instr.loc, instr.line, **kw))
        self.pending.clear()

    def add_instruction(self, instr: AsmInstr) -> None:
        """The step (or the place in a run) of one instruction, by its kind."""
        k, hw = instr.kind, self.hw
        if k == "wait_tensor" and tdm_timed():
            self.add("wait_tensor", instr.count or 0, instr, "wait_tensor")
        elif k in _OTHER or k in ("hint", "wait_load", "wait_tensor", "wait_async"):
            self.run.append(instr)
        elif k == "barrier":
            if instr.mnemonic in ("s_barrier_wait", "s_barrier"):  # gfx9: one s_barrier
                self.add("barrier", 0, instr, "barrier")
            else:
                self.flush_run()
                self.pending.append(instr.mnemonic)
        elif k == "wait_ds":
            self.add("wait_ds", instr.count or 0, instr, "wait_ds")
        elif k == "permute":
            self.add("delay", hw.costs.lane_permute_issue, instr, "permute", label=instr.mnemonic)
            self.permutes[instr.mnemonic] = self.permutes.get(instr.mnemonic, 0) + 1
        elif k == "clock":
            self.add("clock", self.clocks, instr, "clock")
            self.clocks += 1
        elif k == "wmma":
            cycles, note = wmma_cost(instr, hw)
            if note and note not in self.notes:
                self.notes.append(note)
            self.add("delay", cycles, instr, "wmma")
        elif k in ("tdm", "async"):
            self.add_copy(instr)
        elif k == "ds":
            self.add_ds(instr)
        else:  # pragma: no cover - every kind is handled above
            raise AssertionError(k)

    def copy_op(self, instr: AsmInstr) -> LdsOp | None:
        """The TTGIR copy op of a TDM / async instruction: the one copy op of its line (of its
        kind), else None and a note."""
        kind = TDM_OPS if instr.kind == "tdm" else ASYNC_OPS
        mine = ops_at(instr, by_line(op for op in self.copies if op.op in kind))[1]
        if len(mine) == 1:
            return mine[0]
        note = (
            f"{instr.mnemonic} at {instr.chain}: {len(mine)} TTGIR copy ops on its line, none named"
        )
        self.notes.extend([note] if note not in self.notes else [])
        return None

    def add_copy(self, instr: AsmInstr) -> None:
        """A TDM or async copy: a traced ``tensor_load_to_lds`` when the engines time TDM
        writes and its rows are known, else a ``delay`` of its issue."""
        k = instr.kind
        self.seen_async |= k == "async"
        op = self.copy_op(instr)
        name, index = (op.name, op.index) if op is not None else (None, None)
        per = self.tdm.rows(op, 0) if k == "tdm" and op is not None and tdm_timed() else None
        if per is not None and instr.mnemonic == "tensor_load_to_lds":
            n = self.tdm.seen.get(index, 0)
            self.tdm.seen[index] = n + 1
            kw = dict(issued=n % len(per[0]), copy=n // len(per[0]), label=op_label(op))
            self.add("tensor_load_to_lds", 0, instr, k, op_index=index, name=name, **kw)
            return
        self.seen_tdm |= k == "tdm"
        label = op_label(op) if op is not None else None
        cycles = issue_cycles(instr, self.hw)
        self.add("delay", cycles, instr, k, op_index=index, name=name, label=label)

    def add_ds(self, instr: AsmInstr) -> None:
        """A ``ds_*``: its op's LDS row, or an unmatched one (a cycle of issue)."""
        op, why = self.owners[instr.line]
        if op is None or instr.mnemonic not in INSTRUCTIONS:
            why = why or Unmatched(instr.mnemonic, instr.line, instr.chain, "not modelled")
            self.unmatched.append(why)
            self.add("delay", self.hw.costs.valu, instr, "unmatched", label=unmatched_label(why))
            return
        self.add(
            instr.mnemonic,
            0,
            instr,
            "lds",
            op_index=op.index,
            name=op.name,
            label=op_label(op),
            issued=self.issued_at[instr.line],
            copy=self.assigner.copy_of[instr.line],
        )

    def finish(self) -> None:
        """The last run; free instructions at the end ride on the last step."""
        self.flush_run()
        if not self.pending:
            return
        if self.steps:
            last = self.steps[-1]
            self.steps[-1] = replace(last, asm=(*last.asm, *self.pending))
        else:
            self.steps.append(Step("delay", 0, tuple(self.pending), "alu"))

    def notes_of_work(self) -> list[str]:
        """The notes of the work timed by its issue only (TDM, async copies, permutes)."""
        notes = [TDM_NOTE] if self.seen_tdm else []
        notes += [ASYNC_NOTE] if self.seen_async else []
        return notes + [f"{n} {m}: {PERMUTE_NOTE}" for m, n in self.permutes.items()]


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
    loops_ = [lp for lp in kernel.loops if lp.kind in LOOP_OPS]
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
        iterations=trip_count(kernel, loop_id),
        notes=tuple(notes),
        lowerings=lowerings,
    )
