"""The same LDS access in another target's spelling: gfx1250's ``ds_load_*`` / ``ds_store_*``
are gfx942/gfx950's ``ds_read_*`` / ``ds_write_*`` (2addr forms: ``ds_read2*`` /
``ds_write2*``, stride-64: ``st64``).

The lowering (`wgpsim.trace.lowering`) decides in gfx1250's names; Triton's lowering of a
plain vector load or store, LLVM's duplicate removal and its pairing into 2addr forms
(SILoadStoreOptimizer: offsets of 8 bits in units of the access, or of 64 of them) are the same
on gfx9, so a target that has the other spelling takes the instruction that moves the same
bytes per lane the same way (kind, bytes per lane, element bits, addresses, offset unit, high
half). A transposed load has no such twin (gfx1250's ``ds_load_tr16_b128`` reads 16 B per lane,
gfx950's ``ds_read_b64_tr_b16`` 8 B): it is refused.

>>> gfx9 = [n for n, i in INSTRUCTIONS.items() if i.family == "gfx9"]
>>> [respelled(n, gfx9) for n in ("ds_load_b128", "ds_store_b16_d16_hi", "ds_load_2addr_stride64_b64")]
['ds_read_b128', 'ds_write_b16_d16_hi', 'ds_read2st64_b64']
>>> respelled("ds_load_tr16_b128", gfx9) is None
True
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from typing import TYPE_CHECKING

from wgpsim.errors import LayoutError
from wgpsim.trace.instructions import INSTRUCTIONS, Instruction
from wgpsim.trace.lowering import Lowering

if TYPE_CHECKING:  # imported by the scratch ops that make one
    from wgpsim.trace.scratch.lowering import ScratchLowering

__all__ = ["in_spelling", "respelled"]


def _access(ins: Instruction) -> tuple:
    return (
        ins.kind,
        ins.bytes_per_lane,
        ins.elem_bits,
        ins.addresses,
        ins.offset_unit_elems if ins.addresses == 2 else 0,
        ins.d16_hi,
    )


def respelled(name: str, available: Collection[str]) -> str | None:
    """``name`` if ``available`` has it, else the available instruction making the same access,
    else None."""
    if name in available:
        return name
    want = _access(INSTRUCTIONS[name])
    return next(
        (n for n in available if n in INSTRUCTIONS and _access(INSTRUCTIONS[n]) == want), None
    )


def in_spelling(low: Lowering | ScratchLowering, available: Collection[str], target: str):
    """``low`` with every instruction in the spelling of ``available`` (a target's LDS
    instructions; ``target`` names it in the error): the same addresses, renamed; a
    LayoutError if one has no twin there."""
    if not isinstance(low, Lowering):  # a ScratchLowering: its steps, each respelled
        steps = tuple(
            s if isinstance(s, str) else in_spelling(s, available, target) for s in low.steps
        )
        return replace(low, steps=steps)
    names = {n: respelled(n, available) for n in {low.instruction, *low.issued.ops}}
    if all(n == m for n, m in names.items()):
        return low
    missing = sorted(n for n, m in names.items() if m is None)
    if missing:
        raise LayoutError(f"{missing[0]}: {target} has no LDS instruction making the same access")
    issued = replace(low.issued, ops=tuple(names[n] for n in low.issued.ops))
    return replace(low, instruction=names[low.instruction], issued=issued)
