"""The two ways a gfx1250 ``local_load`` can lower, as plans computed from ``cvt`` alone.

``plan_transposed`` is ``lowerDsReadTr`` (one ``ds_load_tr`` per 8 registers, when
``divide_left(cvt, tile)`` succeeds) and ``plan_plain`` the generic ``lowerLdSt`` fallback (the
widest vector ``largestVectorisation`` allows; Triton 3.9.0's ``TritonGPUToLLVM/Utility.cpp``).
A ``Plan`` says which instruction, why, and in which order the registers are loaded;
``choose`` (a ``Choice``) is Triton's choice between the two for a local_load or local_store,
before any address; ``wgpsim.trace.lowering`` turns it into per-lane addresses.

>>> PLAIN_LOADS[64], MAX_VECTOR_BITS
('ds_load_b64', 128)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wgpsim.errors import LayoutError
from wgpsim.layout.addresses import (
    check_num_warps,
    check_warps,
    linear_of,
    local_load_encodings,
)
from wgpsim.layout.dtypes import dtype_bits, parse_shape
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.trace.instructions import single_address
from wgpsim.trace.transpose import TransposedLoad, transposed_load_for

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
    if cvt.in_dim_size("lane") != t.lanes:
        return (
            f"{t.name} exchanges within {t.lanes} lanes; the layout has {cvt.in_dim_size('lane')}"
        )
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


# ------------------------------------------------------------------------------ Triton's choice
def _linear(layout: Any, shape: tuple[int, ...]) -> LinearLayout:
    return linear_of(layout, shape)


def _min_interval(shared: Any) -> int | None:
    """Smallest padding interval of a padded (or partitioned-padded) layout, else None."""
    inner = getattr(shared, "partition_layout", shared)
    pairs = getattr(inner, "interval_padding_pairs", None)
    return min(interval for interval, _ in pairs) if pairs else None


def _cvt(dst_ll: LinearLayout, shared_ll: LinearLayout, cvt: LinearLayout | None = None):
    """dst.invert_and_compose(shared) (``cvt`` if given) without the (trivial) block dim, ins
    register/lane/warp."""
    cvt = dst_ll.invert_and_compose(shared_ll) if cvt is None else cvt
    if cvt.has_in_dim("block"):
        if cvt.has_out_dim("block"):
            q = cvt.quotient(["block"])
        else:
            q = cvt.sublayout([d for d in cvt.in_dim_names if d != "block"], cvt.out_dim_names)
            q = q if all(not any(b) for b in cvt.get_bases("block")) else None
        if q is None:
            raise LayoutError("local_load across CTAs (block dim not trivial): not modelled")
        cvt = q
    for d in ("register", "lane", "warp"):
        if not cvt.has_in_dim(d):
            cvt = cvt * LinearLayout.identity_1d(1, d, cvt.out_dim_names[0])
    return cvt.transpose_ins(["register", "lane", "warp"])


def _register_index(order: Sequence[int], positions: np.ndarray) -> np.ndarray:
    """Original register index of permuted index ``positions`` (bit j -> bit order[j])."""
    out = np.zeros_like(positions)
    for j, src in enumerate(order):
        out |= ((positions >> j) & 1) << src
    return out


@dataclass(frozen=True)
class Choice:
    """What :func:`lower` decides before any address: the plan (instruction, vector, register
    order, a ds_load_tr lane's row), the conversion ``cvt`` (register, lane, warp -> offset),
    ``composed`` (the same with the dst's own dims, what the element addresses need), the
    destination's linear layout and the parsed inputs."""

    plan: Plan
    cvt: LinearLayout
    composed: LinearLayout
    dst_ll: LinearLayout
    dst_enc: Any
    shared_enc: Any
    shape: tuple[int, ...]
    elem_bits: int

    def sources(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lane, register)`` of the destination element lane l reads in instruction i, each
        ``[instruction, lane]``: a plain load's lane reads its own first register of the
        vector; a ds_load_tr lane reads the row another lane owns (``plan.row_lane``).

        >>> shared = LinearLayout.from_bases({"offset": [[1, 0], [2, 0], [4, 0], [8, 0],
        ...     [16, 0], [0, 1], [0, 2], [0, 4]]}, ["dim0", "dim1"])
        >>> dst = LinearLayout.from_bases({"register": [[0, 1], [0, 2], [0, 4]], "lane": [[1, 0],
        ...     [2, 0], [4, 0], [8, 0], [16, 0]], "warp": []}, ["dim0", "dim1"])
        >>> lane, register = choose(shared, dst, (32, 8), "bf16").sources()
        >>> lane[0, :9].tolist(), register[0, :9].tolist()
        ([0, 0, 0, 0, 0, 0, 0, 0, 8], [0, 1, 2, 3, 4, 5, 6, 7, 0])

        (lane 1 reads offset 32, element (0, 1): lane 0's register 1.)
        """
        return sources_of(self.plan, registers_of(self.plan), self.cvt.in_dim_size("lane"))


def choose(
    shared: Any,
    dst: Any,
    shape: str | Sequence[int],
    dtype: str | int,
    *,
    num_warps: int | None = None,
    allow_transpose: bool = True,
    store: bool = False,
) -> Choice:
    """The instruction :func:`lower` picks and how lanes map to registers, without the
    addresses (:meth:`Choice.sources`: which element each lane reads); arguments as
    :func:`lower`'s."""
    shape = parse_shape(shape)
    elem_bits = dtype_bits(dtype) if isinstance(dtype, str) else int(dtype)
    dst_enc, shared_enc = local_load_encodings(dst, shared)
    dst_ll = _linear(dst_enc, shape)
    check_num_warps(dst_ll.in_dim_size("warp"), "the dst layout's warp count")  # before any address
    shared_ll = _linear(shared_enc, shape)
    composed = dst_ll.invert_and_compose(shared_ll)  # also what every element's address needs
    cvt = _cvt(dst_ll, shared_ll, composed)
    check_warps(num_warps, cvt.in_dim_size("warp"))
    min_interval = _min_interval(shared_enc)
    eligibility = "invalid"
    if store:
        plan: Plan | str = "a local_store takes lowerLdSt's vector path (no transposed store)"
        eligibility = "store"
    elif not allow_transpose:
        plan = "transposed loads disabled"
        eligibility = "disabled"
    elif elem_bits not in (8, 16):
        plan = f"ds_load_tr needs 8- or 16-bit elements, not {elem_bits}"
        eligibility = "unsupported"
    else:
        t = transposed_load_for(elem_bits, cvt.in_dim_size("lane"))
        plan = plan_transposed(cvt, t, min_interval)
    if isinstance(plan, str):
        names = PLAIN_STORES if store else PLAIN_LOADS
        plan = plan_plain(cvt, elem_bits, min_interval, plan, eligibility, names)
    return Choice(plan, cvt, composed, dst_ll, dst_enc, shared_enc, tuple(shape), elem_bits)


def registers_of(plan: Plan) -> np.ndarray:
    """Register index of every element of every instruction, ``[instruction, vector]``."""
    # permuted position -> index in the (broadcast-free) register list -> register index
    perm = [plan.regs.index(i) for i in plan.order]
    n = 1 << len(plan.regs)
    pos = np.arange(n).reshape(-1, plan.vector_elems)  # [instr, element]
    compact = _register_index(perm, pos)
    return _register_index(plan.regs, compact)


def sources_of(plan: Plan, registers: np.ndarray, lanes: int) -> tuple[np.ndarray, np.ndarray]:
    """:meth:`Choice.sources` from the plan's ``registers`` ([instruction, vector])."""
    if plan.row_lane is None:
        lane = np.broadcast_to(np.arange(lanes), (len(registers), lanes))
        return lane, np.broadcast_to(registers[:, :1], lane.shape)
    regs = registers[:, plan.row_reg]  # [instr, source lane]
    return np.broadcast_to(plan.row_lane[None, :], regs.shape), regs
