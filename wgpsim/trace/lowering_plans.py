"""The two ways a gfx1250 ``local_load`` can lower, as plans computed from ``cvt`` alone.

``plan_transposed`` is ``lowerDsReadTr`` (one ``ds_load_tr`` per 8 registers, when
``divide_left(cvt, tile)`` succeeds) and ``plan_plain`` the generic ``lowerLdSt`` fallback (the
widest vector ``largestVectorisation`` allows; Triton 3.9.0's ``TritonGPUToLLVM/Utility.cpp``).
A ``Plan`` says which instruction, why, and in which order the registers are loaded;
``wgpsim.trace.lowering`` turns it into per-lane addresses.

>>> PLAIN_LOADS[64], MAX_VECTOR_BITS
('ds_load_b64', 128)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.trace.instructions import single_address
from wgpsim.trace.transpose import TransposedLoad

MAX_VECTOR_BITS = 128
"""Widest plain LDS load per lane, ``ds_load_b128`` (Triton: maxVec = 128 / bitwidth)."""

PLAIN_LOADS = single_address("load")
"""Plain load for a vector of ``v * elem_bits`` bits (from the catalogue)."""

PLAIN_STORES = single_address("store")
"""Plain store for a vector of ``v * elem_bits`` bits (from the catalogue)."""


def _offsets(layout: LinearLayout, dim: str) -> list[int]:
    k = layout.out_dim_names.index("offset")
    return [b[k] for b in layout.get_bases(dim)]


def _additive_order(reps: LinearLayout, addr_bits: int, first: int) -> list[int]:
    """actionAdditiveStrides: registers whose offset bits avoid every lane/warp address bit
    (and the first ``first``, unconditionally) come first; instruction order follows."""
    offs = _offsets(reps, "register")
    front = [i for i, o in enumerate(offs) if i < first or not (o & addr_bits)]
    return front + [i for i in range(len(offs)) if i not in front]


def _ascending(values: Sequence[int]) -> bool:
    nz = [v for v in values if v]
    return nz == sorted(nz)


def _division_failure(cvt: LinearLayout, tile: LinearLayout) -> str:
    """Which basis of cvt stops ``divide_left(cvt, tile)`` (seed, Figure 5, right)."""
    n = tile.in_dim_size("lane")
    bits = n.bit_length() - 1
    want = ",".join(str(1 << k) for k in range(bits))
    lanes = cvt.get_bases("lane")
    for k in range(bits):
        if lanes[k] != tuple((1 << k) if o == "offset" else 0 for o in cvt.out_dim_names):
            got = _offsets(cvt, "lane")[k]
            return (
                f"lane bases {want} must map to offsets {want}; lane={1 << k} (basis {k}) "
                f"maps to offset {got}"
            )
    for d in cvt.in_dim_names:
        for k, off in enumerate(_offsets(cvt, d)):
            if (d != "lane" or k >= bits) and off % n:
                return f"every basis but lane {want} must map to a multiple of {n}; {d}={1 << k} maps to offset {off}"
    return f"the LDS tile has fewer than {n} elements along offset"


# ------------------------------------------------------------------------------ plans
@dataclass(frozen=True)
class Plan:
    instruction: str
    vector_elems: int
    eligibility: str
    reason: str
    order: list[int]  # permuted register position j -> register index in `regs`
    regs: list[int]  # register basis indices used (broadcast ones dropped for plain loads)
    row_lane: np.ndarray | None = None  # ds_load_tr: dst lane / register of each source row
    row_reg: np.ndarray | None = None


def plan_transposed(cvt: LinearLayout, t: TransposedLoad, min_interval: int | None) -> Plan | str:
    """The ds_load_tr plan, or the reason it does not apply (notes 3.2 conditions 3-9)."""
    if min_interval is not None and min_interval < t.tile_size:
        return f"padding interval {min_interval} < {t.tile_size} elements: a row would straddle padding"
    ins = list(cvt.in_dim_names)
    off = cvt.sublayout(ins, ["offset"])
    if off.in_dim_size("register") < t.tile_size:
        return f"{off.in_dim_size('register')} registers per lane; {t.name} fills {t.tile_size}"
    quot = off.divide_left(t.tile())
    if quot is None:
        return _division_failure(off, t.tile())
    reps = t.tile().zeros_like() * quot
    addr = t.full_tile_inverse().compose(reps)
    bits = 0
    for o in _offsets(addr, "addr") + _offsets(reps, "warp"):
        bits |= o
    regs = list(range(cvt.num_bases("register")))
    order = _additive_order(reps, bits, t.tile_size.bit_length() - 1)
    if cvt.has_out_dim("partition"):
        part = cvt.sublayout(["register"], ["partition"]).get_bases("register")
        for j in range(t.tile_size.bit_length() - 1):
            if part[order[j]][0]:
                return f"register={1 << order[j]} of one instruction maps to partition {part[order[j]][0]}: one base per instruction"
    rows = [_offsets(cvt, "register")[i] for i in order[: t.tile_size.bit_length() - 1]]
    scrambled = not _ascending(rows)
    kind = "scrambled-valid" if scrambled else "valid"
    reason = (
        f"lane bases 1,2,4 map to offsets 1,2,4 and every other basis to a multiple of "
        f"{t.tile_size}: divide_left(cvt, tile) succeeds"
        + (f" (source lanes 0-7 read rows at offsets {rows}, out of order)" if scrambled else "")
    )
    row_lane, row_reg = t.row_owner()
    return Plan(t.name, t.tile_size, kind, reason, order, regs, row_lane, row_reg)


def plan_plain(
    cvt: LinearLayout,
    elem_bits: int,
    min_interval: int | None,
    why_not: str,
    eligibility: str,
    names: dict[int, str] = PLAIN_LOADS,
) -> Plan:
    """largestVectorisation: the widest v with registers at offsets 1, 2, ..., v/2; ``names``
    gives the instruction by vector bits (``PLAIN_STORES`` for a local_store)."""
    regs = [i for i, b in enumerate(cvt.get_bases("register")) if any(b)]
    bases = cvt.get_bases("register")
    max_vec = MAX_VECTOR_BITS // elem_bits
    if min_interval is not None:
        max_vec = min(max_vec, min_interval)
    unit = [tuple(v if o == "offset" else 0 for o in cvt.out_dim_names) for v in (1, 2, 4, 8, 16)]
    v = max_vec
    while v > 1:
        nbits = v.bit_length() - 1
        found = [next((i for i in regs if bases[i] == unit[k]), None) for k in range(nbits)]
        if None not in found and (min_interval is None or found == regs[:nbits]):
            rest = [i for i in regs if i not in found]
            if all(_offsets(cvt, "register")[i] % v == 0 for i in rest) and all(
                o % v == 0 for d in ("lane", "warp") for o in _offsets(cvt, d)
            ):
                break
        v //= 2
    nbits = v.bit_length() - 1
    lead = [next(i for i in regs if bases[i] == unit[k]) for k in range(nbits)]
    vec_order = lead + [i for i in regs if i not in lead]
    bits = 0
    for o in _offsets(cvt, "lane") + _offsets(cvt, "warp"):
        bits |= o
    offs = _offsets(cvt, "register")
    front = [i for j, i in enumerate(vec_order) if j < nbits or not (offs[i] & bits)]
    order = front + [i for i in vec_order if i not in front]
    name = names[v * elem_bits]
    ones = ",".join(str(1 << k) for k in range(nbits))
    regs_txt = ",".join(str(1 << i) for i in lead)
    how = (
        f"registers {regs_txt} map to offsets {ones}: {v} x {elem_bits}-bit = {name}"
        if v > 1
        else f"no register maps to offset 1: one {elem_bits}-bit element per {name}"
    )
    return Plan(name, v, eligibility, f"{why_not}; fallback: {how}", order, regs)
