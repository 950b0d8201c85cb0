"""Which TTGIR LDS op each ``ds_*`` of a loop body comes from, and which of the op's accesses it
is (docs/DESIGN.md, "The loop, from the assembly").

A ``ds_*`` under ``.loc FILE:LINE`` belongs to an op of that line (`Assigner.take`); several
ops on one line are served in program order, each up to the instructions of that mnemonic it
issues. What an op issues is its lowering (`wgpsim.analysis.kernel_lowering.lower_op`) in the
form the assembly holds on the op's line (`wgpsim.analysis.asm_forms.fit_to_assembly`: the
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

import re
from collections import Counter
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from wgpsim.analysis.asm_forms import fit_to_assembly
from wgpsim.analysis.kernel_lowering import OpLowering, lower_op
from wgpsim.frontend.amdgcn_loops import AsmInstr
from wgpsim.frontend.model import LdsOp
from wgpsim.trace.instructions import INSTRUCTIONS

__all__ = ["Assigner", "Unmatched", "fit_op", "line_of", "match_offsets"]


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
    groups: dict[tuple[str, int], list[int]] = {}
    generation: dict[str, int] = {}
    for j, ins in enumerate(asm):
        reg = _address_register(ins)
        key = (reg, generation.get(reg, 0))
        if any(_offset_bytes(asm[i]) == _offset_bytes(ins) for i in groups.get(key, [])):
            generation[reg] = key[1] + 1
            key = (reg, key[1] + 1)
        groups.setdefault(key, []).append(j)
    for members in groups.values():
        offs = [_offset_bytes(asm[j]) for j in members]
        found = None
        for k in free:
            base = addr[:, k] - offs[0]
            taken: list[int] = []
            for o in offs:
                hit = next(
                    (
                        q
                        for q in free
                        if q not in taken
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
        self.by_line: dict[tuple[str, int], list[LdsOp]] = {}
        for op in ops:
            self.by_line.setdefault(line_of(op), []).append(op)
        #: per source line, the body's ds_* mnemonics there (counts, in order of appearance)
        self.on_line: dict[tuple[str, int], Counter] = {}
        for instr in body:
            if instr.kind == "ds":
                key = (instr.src_file, instr.src_line)
                self.on_line.setdefault(key, Counter())[instr.mnemonic] += 1
        self.low: dict[int, OpLowering] = {}
        self.kernel, self.alloc, self.hw = kernel, alloc, hw
        self.taken: dict[int, list[AsmInstr]] = {}
        self.copies: dict[tuple[str, int], int] = {}
        self.copy_of: dict[int, int] = {}
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

    def left(self, op: LdsOp, mnemonic: str, copy: int = 0) -> int:
        got = sum(i.mnemonic == mnemonic for i in self.taken.get(op.index, []))
        return self.have(op, mnemonic) * (copy + 1) - got

    def _give(self, op: LdsOp, instr: AsmInstr, copy: int = 0) -> tuple[LdsOp, None]:
        self.taken.setdefault(op.index, []).append(instr)
        self.copy_of[instr.line] = copy
        return op, None

    def take(self, instr: AsmInstr) -> tuple[LdsOp | None, Unmatched | None]:
        key = (instr.src_file, instr.src_line)
        if key not in self.by_line and instr.caller in self.by_line:
            key = instr.caller  # an inlined library function's line (tl.sum): its caller's op
        ops = self.by_line.get(key, [])
        copy = self.copies.get(key, 0)
        for op in ops:
            if self.left(op, instr.mnemonic, copy) > 0:
                return self._give(op, instr, copy)
        done = all(self.left(op, m, copy) == 0 for op in ops for m in self.lowering(op).counts)
        if ops and done and any(self.have(op, instr.mnemonic) for op in ops):
            self.copies[key] = copy + 1  # every op of the line used up: the next copy
            return self.take(instr)
        return None, self._why(instr, ops)

    def take_unlined(self, instr: AsmInstr) -> tuple[LdsOp | None, Unmatched | None]:
        """An instruction LLVM gave no line (``.loc`` 0): the one op of the body with that
        mnemonic left, if exactly one has."""
        cands = [op for op in self.ops if self.left(op, instr.mnemonic) > 0]
        if len(cands) == 1:
            return self._give(cands[0], instr)
        why = (
            f"LLVM gave it no source line and {len(cands)} ops of the body have a "
            f"{instr.mnemonic} left"
        )
        return None, self._unmatched(instr, why)

    def _why(self, instr: AsmInstr, ops: list[LdsOp]) -> Unmatched:
        if not ops:
            other = [
                n.op
                for n in self.kernel.not_modelled
                if n.loc is not None
                and (n.loc.short.split(":")[0], n.loc.line) == (instr.src_file, instr.src_line)
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
        return Unmatched(instr.mnemonic, instr.line, instr.loc, why)

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
