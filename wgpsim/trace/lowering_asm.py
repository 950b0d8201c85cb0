"""From Triton's LLVM-dialect LDS accesses to the instructions the gfx1250 assembly holds.

Triton lowers a ``local_load`` / ``local_store`` to LLVM-dialect loads and stores
(``wgpsim.trace.lowering``); LLVM then changes them in two ways that a kernel author sees in
the assembly, and both change the LDS traffic:

1. **Duplicates removed** (loads only): two loads of one op that read the same address in every
   lane of every warp are one load (LLVM's common-subexpression elimination; no store lies
   between them). With BLOCK_K = 16 below the WMMA K of 32, Triton issues 4
   ``ds_load_tr16_b128`` in two identical pairs, and the hardware runs 2.
2. **Pairs merged** (LLVM ``SILoadStoreOptimizer``): two ``ds_load_b32`` (or two ``b64``, or
   the stores) whose lane addresses differ by the same constant everywhere share one address
   register and differ in their immediate offsets. Sorted by offset, neighbours merge into one
   ``ds_load_2addr_b32/_b64`` (``ds_store_2addr_*``) when the two offsets, in elements, fit the
   instruction's two 8-bit offset fields: ``offsetsCanBeCombined``, in this order

   - both offsets multiples of 64 and both / 64 <= 255: ``stride64`` (offsets / 64);
   - both <= 255: plain 2addr;
   - (a new base register is set to make them fit) the difference a multiple of 64 and
     <= 255 x 64: ``stride64``; the difference <= 255: plain 2addr;
   - else they stay two instructions.

   Offsets count from the smallest of the group (our assumption for the immediate LLVM folds:
   Triton adds the additive registers' offsets as constants to one base). Two stores merge
   only if no store of another group lies between them (LLVM cannot move a store past one
   that may alias it).

The merged instruction keeps each lane's first address; ``distance`` is the byte distance to
the second. A lone load with no partner, and every other instruction, stays as it is, but a byte
or half store of a value at bit 16 of its register, which LLVM issues as ``ds_store_b8_d16_hi``
/ ``ds_store_b16_d16_hi`` (assumption: source registers packed in element order, as a vector
global load leaves them; it gives the assembly's counts on the corpus).

Four ``ds_load_b32`` at element offsets 0, 1, 64 and 65 from one base become two
``ds_load_2addr_b32``:

>>> lane = 4 * np.arange(32) * 128
>>> addr = np.stack([lane + 4 * k for k in (0, 1, 64, 65)])[None]   # [warp, instr, lane]
>>> asm = assemble("ds_load_b32", addr)
>>> asm.counts, asm.distance.tolist(), asm.sources
({'ds_load_2addr_b32': 2}, [4, 4], ((0, 1), (2, 3)))
>>> assemble("ds_load_b32", addr[:, [0, 2]]).counts       # 0 and 64: stride64 offsets 0, 1
{'ds_load_2addr_stride64_b32': 1}
>>> assemble("ds_load_tr16_b128", np.concatenate([addr, addr], axis=1)).counts
{'ds_load_tr16_b128': 4}
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from wgpsim.trace.instructions import INSTRUCTIONS, two_address_forms

OFFSET_FIELD_MAX = 255
"""Largest value of one of a 2addr form's two 8-bit offset fields (the ISA's DS encoding)."""

STRIDE64 = 64
"""Elements per unit of a ``stride64`` form's offset fields."""


@dataclass(frozen=True, eq=False)
class Issued:
    """The instructions of one op as the assembly holds them, in program order.

    ``ops[n]`` is the name of issued instruction n, ``addresses[w, n, lane]`` each lane's
    (first) byte address, ``distance[n]`` the byte distance to a 2addr form's second address
    (0 for the others), ``sources[n]`` the Triton-level instructions it carries (one, or two
    when merged); ``removed`` the Triton-level loads dropped as duplicates.
    """

    ops: tuple[str, ...]
    addresses: np.ndarray = field(repr=False)
    distance: np.ndarray = field(repr=False)
    sources: tuple[tuple[int, ...], ...]
    removed: tuple[int, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        """Issued instructions per warp by name, in order of first appearance."""
        out: dict[str, int] = {}
        for name in self.ops:
            out[name] = out.get(name, 0) + 1
        return out

    def __len__(self) -> int:
        return len(self.ops)

    def notes(self) -> list[str]:
        """What LLVM changed, in words (empty if nothing)."""
        out = []
        if self.removed:
            out.append(f"{len(self.removed)} duplicate loads removed (identical addresses)")
        merged = [name for name, src in zip(self.ops, self.sources, strict=True) if len(src) == 2]
        for name in dict.fromkeys(merged):
            out.append(f"{merged.count(name)} pairs merged into {name} (SILoadStoreOptimizer)")
        return out


def pair_form(single: str, first: int, second: int) -> str | None:
    """The 2addr form that merges ``single`` accesses at element offsets ``first`` < ``second``
    from one address register (``offsetsCanBeCombined``), or None.

    >>> pair_form("ds_load_b64", 0, 1), pair_form("ds_load_b64", 0, 64), pair_form("ds_load_b64", 3, 67)
    ('ds_load_2addr_b64', 'ds_load_2addr_stride64_b64', 'ds_load_2addr_b64')
    >>> pair_form("ds_load_b64", 300, 364), pair_form("ds_load_b64", 0, 300)
    ('ds_load_2addr_stride64_b64', None)
    """
    forms = two_address_forms(single)
    if not forms or first == second:
        return None
    fits = range(OFFSET_FIELD_MAX + 1)
    scaled = (first // STRIDE64, second // STRIDE64)
    if first % STRIDE64 == 0 and second % STRIDE64 == 0 and all(e in fits for e in scaled):
        return forms[STRIDE64]
    if first in fits and second in fits:
        return forms[1]
    diff = second - first
    if diff % STRIDE64 == 0 and diff // STRIDE64 in fits:
        return forms[STRIDE64]
    return forms[1] if diff in fits else None


def _duplicates(addresses: np.ndarray) -> list[int]:
    """Instructions whose addresses equal an earlier one's in every warp and lane."""
    seen: dict[bytes, int] = {}
    out = []
    rows = np.ascontiguousarray(addresses.swapaxes(0, 1))  # [k, w, lane]: one copy
    for k in range(addresses.shape[1]):
        key = rows[k].tobytes()
        if key in seen:
            out.append(k)
        else:
            seen[key] = k
    return out


def _base_groups(addresses: np.ndarray, keep: list[int]) -> list[list[int]]:
    """``keep`` split into groups whose addresses differ by one constant in every warp and lane
    (one address register, immediate offsets), each group in program order."""
    groups: list[list[int]] = []
    for k in keep:
        for g in groups:
            diff = addresses[:, k].astype(np.int64) - addresses[:, g[0]]
            if (diff == diff.flat[0]).all():
                g.append(k)
                break
        else:
            groups.append([k])
    return groups


def _crosses(group: list[int], a: int, b: int) -> bool:
    """Whether a store of another address register lies between stores ``a`` and ``b`` in
    program order: LLVM cannot move either past a store it cannot tell apart from it (the
    held-out fp32 mm's B store on gfx942, 8 ``ds_write_b32`` in 4 such groups, interleaved:
    only the 2 adjacent pairs merge)."""
    return any(k not in group for k in range(min(a, b) + 1, max(a, b)))


def high_half(instruction: str, register: int) -> str:
    """The store LLVM issues for a byte or half ``instruction`` of source register ``register``:
    its ``_d16_hi`` twin when the value sits at bit 16 of its 32-bit register (registers packed
    in element order: 2 halves or 4 bytes a register; bytes 1 and 3 are shifted down first).

    >>> [high_half("ds_store_b8", r) for r in range(4)][2], high_half("ds_store_b16", 3)
    ('ds_store_b8_d16_hi', 'ds_store_b16_d16_hi')
    """
    ins = INSTRUCTIONS[instruction]
    twin = f"{instruction}_d16_hi"
    if ins.kind != "store" or twin not in INSTRUCTIONS:
        return instruction
    per_register = 4 // ins.bytes_per_lane
    return twin if (register % per_register) * ins.bytes_per_lane * 8 == 16 else instruction


def assemble(
    instruction: str,
    addresses: np.ndarray,
    registers: np.ndarray | None = None,
    merge: bool = True,
) -> Issued:
    """The issued instructions for Triton-level ``instruction`` x ``addresses[w, k, lane]``;
    ``registers[k]``, the first source register of instruction k, picks a store's ``_d16_hi``
    form (``high_half``). ``merge=False``: no pairs merged, for stores that each sit in their
    own predicated block (Triton's ``llStore`` with a mask branches around every store, and
    ``SILoadStoreOptimizer`` merges only within a basic block).

    >>> lane = 4 * np.arange(32)[None, None, :] * 64
    >>> addr = np.concatenate([lane, lane + 256], axis=1)
    >>> assemble("ds_store_b32", addr).counts, assemble("ds_store_b32", addr, merge=False).counts
    ({'ds_store_2addr_stride64_b32': 1}, {'ds_store_b32': 2})
    """
    addresses = np.asarray(addresses)
    ins = INSTRUCTIONS[instruction]
    count = addresses.shape[1]
    removed = _duplicates(addresses) if ins.is_load else []
    keep = [k for k in range(count) if k not in set(removed)]
    at: dict[int, tuple[str, int, int, int]] = {}  # position -> (form, first, second, bytes)
    folded: set[int] = set()
    width = ins.access_bytes
    if merge and two_address_forms(instruction):
        for group in _base_groups(addresses, keep):
            offset = {k: int(addresses[0, k, 0] - addresses[0, group[0], 0]) for k in group}
            low = min(offset.values())
            order = sorted(group, key=lambda k: (offset[k], k))
            i = 0
            while i + 1 < len(order):
                a, b = order[i], order[i + 1]  # offset[a] <= offset[b]
                ea, eb = offset[a] - low, offset[b] - low
                blocked = ins.kind == "store" and _crosses(group, a, b)
                form = (
                    None
                    if ea % width or eb % width or blocked
                    else pair_form(instruction, ea // width, eb // width)
                )
                if form is None:
                    i += 1
                    continue
                where = min(a, b) if ins.is_load else max(a, b)  # loads hoist, stores sink
                at[where] = (form, a, b, offset[b] - offset[a])
                folded.add(max(a, b) if ins.is_load else min(a, b))
                i += 2
    ops, rows, dist, sources = [], [], [], []
    for k in keep:
        if k in folded:
            continue
        single = instruction if registers is None else high_half(instruction, int(registers[k]))
        form, first, second, d = at.get(k, (single, k, k, 0))
        ops.append(form)
        rows.append(first)
        dist.append(d)
        sources.append((first,) if first == second else tuple(sorted((first, second))))
    out = np.ascontiguousarray(addresses[:, rows]) if rows else addresses[:, :0]
    out.flags.writeable = False
    distance = np.array(dist, dtype=np.int64)
    distance.flags.writeable = False
    return Issued(tuple(ops), out, distance, tuple(sources), tuple(removed))
