"""An op's LDS accesses in the form the assembly holds them: the assembly decides the instructions,
the layouts the addresses.

`wgpsim.trace.lowering_asm` predicts what LLVM makes of an op alone (pairs merged into
``ds_*_2addr_*``, duplicate loads removed). Inside a real loop LLVM may decide otherwise: one fp8
operand load pairs into 4 ``ds_load_2addr_b64`` alone, while the loop holds 8 ``ds_load_b64``
for it. `fit_to_assembly` takes the mnemonics the assembly holds on the op's source line and,
when the predicted instructions are not among them, re-derives the op's accesses at the
assembly's width from Triton's LLVM-dialect accesses (``Lowering.addresses``): each Triton-level
vector access of V bytes becomes V / W accesses of W bytes at its address + j x W (j = 0 ..
V / W - 1), unpaired; loads whose addresses are equal in every lane of every warp stay one load
(LLVM's common-subexpression elimination). A transposed load is never split.

The 4 ``ds_load_b128`` of a 16 x 64 fp32 row read, at the width of ``ds_load_b64``:

>>> import numpy as np
>>> from wgpsim.trace.lowering import lower
>>> low = lower("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>",
...             "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], "
...             "warpsPerCTA = [1, 1], order = [1, 0]}>", "16x64", "fp32", num_warps=1)
>>> low.counts
{'ds_load_b128': 8}
>>> split = at_width(low, "ds_load_b64")
>>> split.ops.count("ds_load_b64"), split.addresses[0, :2, 0].tolist()
(16, [0, 8])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from wgpsim.trace.instructions import INSTRUCTIONS
from wgpsim.trace.lowering import Lowering
from wgpsim.trace.lowering_asm import Issued

__all__ = ["at_width", "fit_to_assembly"]


def at_width(low: Lowering, mnemonic: str) -> Issued | None:
    """The op's accesses as single-address ``mnemonic`` instructions, from Triton's dialect-level
    accesses (see the module docstring); None if ``mnemonic`` cannot carry them (another
    kind, a 2addr form, wider than Triton's vector, a transposed load of another width)."""
    ins, target = INSTRUCTIONS[low.instruction], INSTRUCTIONS.get(mnemonic)
    if target is None or target.addresses != 1 or target.kind != ins.kind:
        return None
    width, vector = target.bytes_per_lane, ins.bytes_per_lane
    if mnemonic != low.instruction and (ins.kind == "load_tr" or vector % width):
        return None
    pieces = 1 if mnemonic == low.instruction else vector // width
    addr = np.asarray(low.addresses, dtype=np.int64)  # [warp, instruction, lane]
    steps = np.arange(pieces, dtype=np.int64) * width
    split = np.where(addr[:, :, None, :] >= 0, addr[:, :, None, :] + steps[None, None, :, None], -1)
    split = split.reshape(addr.shape[0], addr.shape[1] * pieces, addr.shape[2])
    keep, seen, removed = [], set(), []
    for k in range(split.shape[1]):
        key = split[:, k].tobytes()
        if target.is_load and key in seen:
            removed.append(k)
            continue
        seen.add(key)
        keep.append(k)
    out = np.ascontiguousarray(split[:, keep])
    out.flags.writeable = False
    distance = np.zeros(len(keep), dtype=np.int64)
    distance.flags.writeable = False
    sources = tuple((k // pieces,) for k in keep)
    return Issued((mnemonic,) * len(keep), out, distance, sources, tuple(removed))


def fit_to_assembly(low: Lowering, on_line: Mapping[str, int]) -> tuple[Lowering, str]:
    """``low`` with its issued instructions in the form the assembly holds on the op's line
    (``on_line``: mnemonic -> count there), and a note saying what changed ("" if nothing):
    unchanged when every instruction the model predicts is on the line, or when no mnemonic
    of the line can carry the op's accesses."""
    predicted = low.issued.counts
    if not on_line or all(on_line.get(m, 0) for m in predicted):
        return low, ""
    if not isinstance(low, Lowering):  # a scratch op's steps (ScratchLowering): kept as predicted
        return low, ""
    for mnemonic in on_line:
        if mnemonic in predicted:
            continue
        issued = at_width(low, mnemonic)
        if issued is None or not len(issued):
            continue
        was = ", ".join(f"{n} {m}" for m, n in predicted.items())
        note = (
            f"the assembly holds {mnemonic} on its line, not the {was} LLVM makes of the op "
            f"alone: {len(issued)} {mnemonic} at the layout's addresses"
        )
        return replace(low, issued=issued), note
    return low, ""
