"""Which TTGIR LDS op each ``ds_*`` of a loop body comes from, and which of the op's accesses it
is (docs/DESIGN.md, "The loop, from the assembly"); first, which TTGIR loop the assembly's loop
is (`ttgir_loop`: the loop op on the back-branch's line), its ops (`candidates`) and its trip
count (`trip_count`).

A ``ds_*`` under ``.loc FILE:LINE`` belongs to an op of that line (`Assigner.take`); several
ops on one line are served in program order, each up to the instructions of that mnemonic it
issues. What an op issues is its lowering (`wgpsim.kernel.lowering.lower_op`) in the
form the assembly holds on the op's line (`wgpsim.kernel.asm_forms.fit_to_assembly`: the
assembly decides the instructions, the layouts the addresses). Within an op, the assembly's
instructions are matched to the accesses by their immediate offsets (`match_offsets`). The
matching is generic over `LdsOp`\\ s: any op with a lowering (load, store, async copy's
``other`` store, a scratch op) is matched by its line, mnemonic and lowering alone. A ``ds_*``
no op can take is an `Unmatched` entry.

>>> u = Unmatched("ds_store_b32", 120, "triton_misc.py:31", "no TTGIR LDS op on its line")
>>> str(u)
'unmatched: ds_store_b32 at triton_misc.py:31 (assembly line 120): no TTGIR LDS op on its line'
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from wgpsim.frontend.amdgcn_loops import AsmBody, AsmInstr, loops
from wgpsim.frontend.model import Kernel, LdsOp
from wgpsim.kernel.asm_forms import fit_to_assembly
from wgpsim.kernel.lowering import OpLowering, lower_op, writes_with_ds
from wgpsim.trace.instructions import INSTRUCTIONS

__all__ = [
    "LOOP_OPS",
    "Assigner",
    "Unmatched",
    "by_line",
    "candidates",
    "fit_op",
    "inner_loops",
    "line_of",
    "match_offsets",
    "ops_at",
    "trip_count",
    "ttgir_loop",
]


@dataclass(frozen=True)
class Unmatched:
    """An assembly ``ds_*`` no TTGIR LDS op can take: its mnemonic, assembly line, source
    ``file:line`` and why."""

    mnemonic: str
    line: int
    loc: str
    reason: str

    def __str__(self) -> str:
        return (
            f"unmatched: {self.mnemonic} at {self.loc} (assembly line {self.line}): {self.reason}"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def line_of(op: LdsOp) -> tuple[str, int]:
    """The op's (source file base name, line), as the assembly's ``.loc`` names it."""
    return op.loc.short.split(":")[0], op.loc.line


def by_line(ops) -> dict[tuple[str, int], list[LdsOp]]:
    """The ops per (source file base name, line), in program order."""
    out: dict[tuple[str, int], list[LdsOp]] = {}
    for op in ops:
        out.setdefault(line_of(op), []).append(op)
    return out


def by_reader(ops) -> dict[tuple[str, int], list[LdsOp]]:
    """The local_loads per (file base name, line) of an op that reads their result (the
    reader records ``user_locs``), in program order: where an extending load (`_extends`)
    of theirs sits when LLVM folded it into its reader's zero-extension, which keeps the
    reader's line (gfx950's block-scaled dots: the scale bytes' ``ds_read_u8`` under
    ``tt.dot_scaled``'s line)."""
    out: dict[tuple[str, int], list[LdsOp]] = {}
    for op in ops:
        for loc in dict.fromkeys(op.attr("user_locs", ())):
            out.setdefault((loc.short.split(":")[0], loc.line), []).append(op)
    return out


def _extends(mnemonic: str) -> bool:
    """A load of fewer than 4 bytes a lane (``ds_read_u8``, ``ds_load_u16``, ...): its value
    is zero-extended into a register, so LLVM can fold it into its reader's extension."""
    ins = INSTRUCTIONS.get(mnemonic)
    return ins is not None and ins.is_load and ins.bytes_per_lane < 4


def ops_at(instr: AsmInstr, lines: dict[tuple[str, int], list[LdsOp]]) -> tuple[tuple, list]:
    """The ops (of ``lines``, `by_line`) an instruction of inlined code belongs to, and their
    key ``(line, callers)``: the ops of the innermost frame of its inlined-at chain that has
    any (an op's `Loc` is the innermost frame outside Triton's library, so a ``tl.sum`` in
    ``standard.py`` is its caller's line; a helper's ``.load()`` the helper's line); of those,
    the ones the TTGIR inlined at the same call sites as the listing, when some are (a helper
    called twice: each call's ops). ``callers`` is None when the call sites do not narrow.

    >>> from types import SimpleNamespace as Op
    >>> from wgpsim.frontend.model import Loc
    >>> a, b = (Op(name=n, loc=Loc("h.py", 5, callers=(("k.py", at),))) for n, at in (("%a", 20),
    ...         ("%b", 21)))
    >>> ins = AsmInstr(9, "ds_load_b128", "ds", "", "h.py", 5, frames=(("h.py", 5), ("k.py", 21)))
    >>> key, ops = ops_at(ins, by_line([a, b]))
    >>> key, [op.name for op in ops]
    ((('h.py', 5), (('k.py', 21),)), ['%b'])
    """
    frames = instr.frames or ((instr.src_file, instr.src_line),)
    line = next((f for f in frames if f in lines), frames[0])
    ops = lines.get(line, [])
    callers = frames[frames.index(line) + 1 :]
    same = [op for op in ops if op.loc.callers == callers]
    if same and len(same) < len(ops):
        return (line, callers), same
    return (line, None), ops


def fit_op(low: OpLowering, on_line: dict[str, int]) -> tuple[OpLowering, str]:
    """``low`` with its issued instructions in the form the assembly holds on its line, and
    what changed ("" if nothing)."""
    if low.lowering is None:
        return low, ""
    fitted, note = fit_to_assembly(low.lowering, on_line)
    if not note:
        return low, ""
    return replace(low, lowering=fitted, counts=dict(fitted.counts)), note


def _address_register(instr: AsmInstr) -> str:
    parts = [p.strip() for p in re.sub(r"/\*.*?\*/", "", instr.operands).split(",")]
    parts[-1] = parts[-1].split()[0] if parts[-1] else ""
    store = INSTRUCTIONS[instr.mnemonic].kind == "store"
    return parts[0] if store or len(parts) < 2 else parts[1]


def _offset_bytes(instr: AsmInstr) -> int:
    ins = INSTRUCTIONS[instr.mnemonic]
    if not instr.offsets:
        return 0
    return instr.offsets[0] * (ins.offset_unit_bytes or 1)


def match_offsets(asm: list[AsmInstr], issued, picks: list[int]) -> list[int] | None:
    """The lowering's instructions (of ``picks``) the assembly's ``asm`` are, by immediates:
    per address register, one base that makes every offset an issued instruction's address
    (all lanes, all warps); None if there is no such assignment. A register that addresses
    the same offset again was written in between (LLVM reuses it): a new base from there."""
    addr = issued.addresses.astype(np.int64)
    free = list(picks)
    out: dict[int, int] = {}
    offset = [_offset_bytes(ins) for ins in asm]
    groups: dict[tuple[str, int], list[int]] = {}
    seen: dict[tuple[str, int], set[int]] = {}  # the offsets of each group
    generation: dict[str, int] = {}
    for j, ins in enumerate(asm):
        reg = _address_register(ins)
        key = (reg, generation.get(reg, 0))
        if offset[j] in seen.get(key, ()):
            generation[reg] = key[1] + 1
            key = (reg, key[1] + 1)
        groups.setdefault(key, []).append(j)
        seen.setdefault(key, set()).add(offset[j])
    first = addr[0, :, 0].tolist()  # warp 0's lane 0: a quick test before all lanes
    for members in groups.values():
        offs = [offset[j] for j in members]
        found = None
        for k in free:
            base = addr[:, k] - offs[0]
            b0 = int(base[0, 0])
            taken: list[int] = []
            for o in offs:
                hit = next(
                    (
                        q
                        for q in free
                        if (first[q] - o if first[q] >= 0 else -1) == b0
                        and q not in taken
                        and np.array_equal(np.where(addr[:, q] >= 0, addr[:, q] - o, -1), base)
                    ),
                    None,
                )
                if hit is None:
                    break
                taken.append(hit)
            if len(taken) == len(offs):
                found = taken
                break
        if found is None:
            return None
        for j, q in zip(members, found, strict=True):
            out[j] = q
            free.remove(q)
    return [out[j] for j in range(len(asm))]


class Assigner:
    """Hands out each op's issued instructions to the assembly's ``ds_*`` of its line (see
    the module docstring); ``copies`` counts how many times a line's ops were all used up and
    started again (LLVM unrolled the loop)."""

    def __init__(self, kernel, ops, alloc, hw, body: list[AsmInstr] = ()):
        self.ops = ops
        self.by_line = by_line(ops)
        self.by_reader = by_reader(ops)
        #: per source line, the body's ds_* mnemonics there (counts, in order of appearance)
        self.on_line: dict[tuple[str, int], Counter] = {}
        for instr in body:
            if instr.kind == "ds":
                line = ops_at(instr, self.by_line)[0][0]
                self.on_line.setdefault(line, Counter())[instr.mnemonic] += 1
        self.low: dict[int, OpLowering] = {}
        self.kernel, self.alloc, self.hw = kernel, alloc, hw
        self.taken: dict[int, list[AsmInstr]] = {}
        self.copies: dict[tuple[str, int], int] = {}
        self.copy_of: dict[int, int] = {}
        #: per op, the key of the ops its line's instructions were served from (outside
        #: inner loops)
        self.group_of: dict[int, tuple] = {}
        #: per assembly line, the inner loop (`take`'s scope) it was matched in
        self.scope_of: dict[int, int | None] = {}
        #: per (op index, mnemonic, scope), the instructions it took
        self.took: Counter = Counter()
        self.scopes: dict[int | None, dict] = {None: self.by_line}
        self.notes: list[str] = []

    def fit(self, op: LdsOp, low: OpLowering) -> OpLowering:
        """``low`` (the op's, at some stage) in the form the body holds on the op's line;
        what changed goes to ``notes``."""
        low, note = fit_op(low, dict(self.on_line.get(line_of(op), {})))
        note = f"{op.name or op.op} ({op.loc.short}): {note}" if note else ""
        if note and note not in self.notes:
            self.notes.append(note)
        return low

    def lowering(self, op: LdsOp) -> OpLowering:
        if op.index not in self.low:
            self.low[op.index] = self.fit(op, lower_op(self.kernel, op, self.alloc, self.hw))
        return self.low[op.index]

    def have(self, op: LdsOp, mnemonic: str) -> int:
        low = self.lowering(op)
        return 0 if low.lowering is None else low.lowering.issued.ops.count(mnemonic)

    def left(self, op: LdsOp, mnemonic: str, copy: int = 0, scope: int | None = None) -> int:
        """How many ``mnemonic`` the op still issues in copies 0..``copy`` of the TTGIR
        iteration, counting what it took in ``scope`` (see `take`)."""
        return self.have(op, mnemonic) * (copy + 1) - self.took[op.index, mnemonic, scope]

    def _give(
        self, op: LdsOp, instr: AsmInstr, copy: int = 0, scope: int | None = None
    ) -> tuple[LdsOp, None]:
        self.taken.setdefault(op.index, []).append(instr)
        self.took[op.index, instr.mnemonic, scope] += 1
        self.copy_of[instr.line] = copy
        self.scope_of[instr.line] = scope
        return op, None

    def _scoped(self, scope: int | None) -> dict[tuple[str, int], list[LdsOp]]:
        if scope not in self.scopes:
            self.scopes[scope] = by_line(op for op in self.ops if scope in op.loops)
        return self.scopes[scope]

    def take(
        self, instr: AsmInstr, scope: int | None = None
    ) -> tuple[LdsOp | None, Unmatched | None]:
        """The op of the instruction's line (`ops_at`) that still issues its mnemonic; with
        ``scope`` (the TTGIR loop of an inner loop of the body that holds the instruction),
        only the ops of that loop, if the line has any, each counted apart from the
        instructions it took outside the inner loop (a peeled or remainder iteration)."""
        lines = self.by_line
        if scope is not None and ops_at(instr, self._scoped(scope))[1]:
            lines = self._scoped(scope)
        else:
            scope = None
        key, ops = ops_at(instr, lines)
        if not ops and scope is None and _extends(instr.mnemonic):
            key, ops = ops_at(instr, self.by_reader)
        key = (*key, scope)
        self.group_of.update((op.index, key) for op in ops if scope is None)
        copy = self.copies.get(key, 0)
        for op in ops:
            if self.left(op, instr.mnemonic, copy, scope) > 0:
                return self._give(op, instr, copy, scope)
        done = all(
            self.left(op, m, copy, scope) == 0 for op in ops for m in self.lowering(op).counts
        )
        if ops and done and any(self.have(op, instr.mnemonic) for op in ops):
            self.copies[key] = copy + 1  # every op of the line used up: the next copy
            return self.take(instr, scope)
        return None, self._why(instr, ops)

    def take_unlined(self, instr: AsmInstr) -> tuple[LdsOp | None, Unmatched | None]:
        """An instruction LLVM gave no line (``.loc`` 0), once every lined one is matched: the
        one op of the body with that mnemonic left in the last copy of the TTGIR iteration
        its line was served in (LLVM moved part of that copy and dropped its line: a peeled
        epilogue's load), if exactly one has."""
        cands = []
        for op in self.ops:
            copy = self.copies.get(self.group_of.get(op.index), 0)
            if self.left(op, instr.mnemonic, copy) > 0:
                cands.append((op, copy))
        if len(cands) == 1:
            return self._give(*cands[0][:1], instr, cands[0][1])
        why = (
            f"LLVM gave it no source line and {len(cands)} ops of the body have a "
            f"{instr.mnemonic} left"
        )
        return None, self._unmatched(instr, why)

    def take_moved(
        self, instr: AsmInstr, unmatched: Unmatched
    ) -> tuple[LdsOp | None, Unmatched | None]:
        """An instruction `take` left ``unmatched`` under a line whose ops have no such
        mnemonic left, once every other is matched: LLVM gave it a neighbouring line's
        location (gfx950's tutorial_matmul_fp8: the last of A's 8 ``ds_read_b128`` under B's
        mask, ``.loc 77:34``, beside B's ``ds_read_b64_tr_b8``; the held-out fp8 MoE GEMM: A's
        second ``ds_read_b128`` under B's line, whose local_load issues 4 of its own). It goes
        to the one op of the body with that mnemonic left (`take_unlined`), if exactly one
        has; else it stays ``unmatched``."""
        _, ops = ops_at(instr, self.by_line)
        if not ops:
            return None, unmatched
        op, _ = self.take_unlined(instr)
        return (op, None) if op is not None else (None, unmatched)

    def _why(self, instr: AsmInstr, ops: list[LdsOp]) -> Unmatched:
        if not ops:
            frames = set(instr.frames or ((instr.src_file, instr.src_line),))
            other = [
                n.op
                for n in self.kernel.not_modelled
                if n.loc is not None and (n.loc.short.split(":")[0], n.loc.line) in frames
            ]
            why = "no TTGIR LDS op on its line"
            if other:
                why += f" (only {', '.join(dict.fromkeys(other))}, not modelled)"
            return self._unmatched(instr, why)
        parts = []
        for op in ops:
            low = self.lowering(op)
            got = low.counts if low.lowering is not None else f"not lowered: {low.note}"
            parts.append(f"{op.name} {op.op} {got}" if op.name else f"{op.op} {got}")
        return self._unmatched(
            instr, "the ops of its line have none left (" + "; ".join(parts) + ")"
        )

    @staticmethod
    def _unmatched(instr: AsmInstr, why: str) -> Unmatched:
        return Unmatched(instr.mnemonic, instr.line, instr.chain, why)

    def unrolled(self) -> int:
        """How many TTGIR iterations the body holds: the copies every matched op was used."""
        counts = set()
        for index, instrs in self.taken.items():
            got = Counter(i.mnemonic for i in instrs)
            low = self.low[index]
            counts |= {got[m] // n for m, n in low.counts.items() if n and got[m] % n == 0}
        return counts.pop() if len(counts) == 1 else 1

    def issued_indices(self, notes: list[str]) -> dict[int, int]:
        """Assembly line -> index of the op's issued instruction, per op, mnemonic and copy by
        immediates, else in the lowering's order."""
        out: dict[int, int] = {}
        for index, instrs in self.taken.items():
            issued = self.low[index].lowering.issued
            for name in dict.fromkeys(i.mnemonic for i in instrs):
                mine = [i for i in instrs if i.mnemonic == name]
                picks = [k for k, n in enumerate(issued.ops) if n == name]
                for c in range(0, len(mine), len(picks)):
                    copy = mine[c : c + len(picks)]
                    order = match_offsets(copy, issued, picks)
                    if order is None:
                        op = self.low[index].op
                        note = (
                            f"{op.name or op.op} ({op.loc.short}): the {name} immediates do not "
                            "match the layout's address differences; addresses in the "
                            "lowering's order"
                        )
                        notes += [note] if note not in notes else []
                        order = picks[: len(copy)]
                    out.update({i.line: k for i, k in zip(copy, order, strict=True)})
        return out

    def leftovers(self, copies: int) -> list[str]:
        out = []
        for index, low in sorted(self.low.items()):
            if low.lowering is None:
                continue
            got = Counter(i.mnemonic for i in self.taken.get(index, []))
            for name, n in low.counts.items():
                if got[name] != n * copies:
                    out.append(
                        f"{low.op.name or low.op.op} ({low.op.loc.short}): its lowering issues "
                        f"{n} {name} per iteration, the body holds {got[name]} of them"
                    )
        return out


# ---- the body's TTGIR loop ------------------------------------------------------------------

#: The TTGIR ops that are loops (the assembly's loop maps to one of them).
LOOP_OPS = ("scf.for", "scf.while", "cf.loop")


def ttgir_loop(kernel: Kernel, body: AsmBody) -> tuple[int | None, str | None]:
    """The TTGIR loop the assembly's loop is: the loop op on the back-branch's line."""
    if not body.is_loop:
        return None, None
    b = body.branch
    cands: list = []
    for frame in b.frames or ((b.src_file, b.src_line),):  # innermost first
        cands = cands or [
            lp
            for lp in kernel.loops
            if lp.kind in LOOP_OPS
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


def inner_loops(kernel: Kernel, asm: str, body: AsmBody):
    """Assembly line -> the TTGIR loop of the innermost loop nested in ``body`` that holds
    it (None outside any, or for a nested loop no TTGIR loop matches)."""
    inner = sorted(
        (b.lines, ttgir_loop(kernel, b)[0])
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


def trip_count(kernel: Kernel, loop_id: int | None) -> int | None:
    """Iterations of TTGIR loop ``loop_id`` from its constant bounds (None when they are not
    constants; 1 for no loop)."""
    if loop_id is None:
        return 1
    lp = next(lp for lp in kernel.loops if lp.id == loop_id)
    try:
        lb, ub, step = (int(v) for v in lp.bounds or ())
    except ValueError:
        return None
    return max(0, math.ceil((ub - lb) / step)) if step > 0 else None


def candidates(
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
