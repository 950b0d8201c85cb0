"""How Triton 3.9.0 lowers a ``local_load`` on gfx1250, decided from the layouts alone.

``lower(shared, dst, shape, dtype)`` says which LDS instruction a local_load becomes, why, how
many of them each warp issues, and which byte address every lane reads, so the engine can time
it. It follows ``TransLocalLoadOpConversion`` / ``lowerDsReadTr`` and the generic
``lowerLdSt`` (notes: triton-internals.md sections 3.2-3.5):

1. ``cvt = dst.invert_and_compose(shared)``: (register, lane, warp) -> LDS offset.
2. 8- or 16-bit elements, at least 8 registers, padding interval >= 8, and
   ``divide_left(cvt, tile)`` with ``tile = identity_1d(8, "lane", "offset")``: lane bases
   1, 2, 4 map to offsets 1, 2, 4 and every other basis to a multiple of 8. Then one
   ``ds_load_tr`` per 8 registers, each lane reading the row ``fullTile`` assigns it.
3. Otherwise the widest vector ``largestVectorisation`` allows: v registers at offsets
   0..v-1 -> ``ds_load_b128`` (128 bits) ... ``ds_load_u8`` (8 bits), one per v registers.

The seed's toy (tensor<32x8xbf16>, one warp) becomes one ``ds_load_tr16_b128``:

>>> from wgpsim.layout.linear_layout import LinearLayout
>>> shared = LinearLayout.from_bases({"offset": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0],
...     [0, 1], [0, 2], [0, 4]]}, ["dim0", "dim1"])
>>> dst = LinearLayout.from_bases({"register": [[0, 1], [0, 2], [0, 4]], "lane": [[1, 0],
...     [2, 0], [4, 0], [8, 0], [16, 0]], "warp": []}, ["dim0", "dim1"])
>>> low = lower(shared, dst, (32, 8), "bf16")
>>> low.instruction, low.counts, low.eligibility
('ds_load_tr16_b128', {'ds_load_tr16_b128': 1}, 'valid')
>>> (low.addresses[0, 0, :9] // 2).tolist()   # lane L reads bf16[8] at 32*L0 + 64*L1 + 128*L2 + 8*L3 + 16*L4
[0, 32, 64, 96, 128, 160, 192, 224, 8]
>>> lower(shared, dst, (32, 8), "bf16", allow_transpose=False).counts
{'ds_load_u16': 8}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from wgpsim.errors import LayoutError
from wgpsim.layout.addresses import local_load_addresses, local_load_encodings
from wgpsim.layout.dtypes import dtype_bits, parse_shape
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.trace.emulate import emulate
from wgpsim.trace.instructions import LANES
from wgpsim.trace.trace import Trace, TraceBuilder
from wgpsim.trace.transpose import TransposedLoad, transposed_load_for

MAX_VECTOR_BITS = 128
"""Widest plain LDS load per lane, ``ds_load_b128`` (Triton: maxVec = 128 / bitwidth)."""

PLAIN_LOADS = {
    128: "ds_load_b128",
    64: "ds_load_b64",
    32: "ds_load_b32",
    16: "ds_load_u16",
    8: "ds_load_u8",
}
"""Plain load for a vector of ``v * elem_bits`` bits."""


@dataclass(frozen=True, eq=False)
class Lowering:
    """The lowering of one local_load: the decision, the reason, and every lane's address.

    ``addresses[w, k, s]`` is the byte address source lane ``s`` of warp ``w`` reads in its
    ``k``-th instruction; ``registers[k, e]`` is the destination register that element ``e``
    of that instruction lands in (the same for every warp and lane). Both arrays are read-only.
    """

    instruction: str
    vector_elems: int
    eligibility: str
    reason: str
    cvt: LinearLayout
    shape: tuple[int, ...]
    elem_bits: int
    addresses: np.ndarray = field(repr=False)
    registers: np.ndarray = field(repr=False)
    broadcast_mask: int = 0
    dst_layout: LinearLayout | None = field(default=None, repr=False)

    @property
    def transposed(self) -> bool:
        return "_tr" in self.instruction

    @property
    def num_warps(self) -> int:
        return int(self.addresses.shape[0])

    @property
    def num_instructions(self) -> int:
        """Instructions per warp."""
        return int(self.addresses.shape[1])

    @property
    def counts(self) -> dict[str, int]:
        """Instructions per warp by name."""
        return {self.instruction: self.num_instructions}

    @property
    def num_registers(self) -> int:
        return self.cvt.in_dim_size("register")

    def trace(self, *, clocks: bool = True, wait: bool = True, barrier: bool = True) -> Trace:
        """Every warp's instructions, optionally between a barrier + clock and wait_ds 0 + clock.

        With ``clocks`` the engine measures the load as ``end - start`` of each warp.
        """
        b = TraceBuilder(num_warps=self.num_warps)
        if barrier:
            b.barrier()
        for w in range(self.num_warps):
            if clocks:
                b.clock(w, "start")
            b.loads(w, self.instruction, self.addresses[w])
            if wait or clocks:
                b.wait_ds(w, 0)
            if clocks:
                b.clock(w, "end")
        return b.build()

    def emulate(self, lds: np.ndarray) -> np.ndarray:
        """Registers after the load, ``[warp, lane, register]``, from LDS contents (uint8).

        Runs every instruction through `wgpsim.trace.emulate` and scatters its elements into
        the destination registers; broadcast registers copy the register they duplicate.
        """
        dt = np.dtype(f"<u{self.elem_bits // 8}")
        out = np.zeros((self.num_warps, LANES, self.num_registers), dtype=dt)
        for k in range(self.num_instructions):
            vals = emulate(self.instruction, lds, self.addresses[:, k, :], elem_bits=self.elem_bits)
            out[:, :, self.registers[k]] = vals
        source = np.arange(self.num_registers) & ~self.broadcast_mask
        return out[:, :, source]

    def sources(self, k: int = 0, warp: int = 0) -> dict[str, np.ndarray]:
        """Who moves what in instruction ``k`` of ``warp``, one entry per (lane, element):
        ``dim0``/``dim1``... tensor coordinates, destination ``lane``/``register`` (the
        instruction's element index), and ``source_lane`` whose LDS read supplied it."""
        if self.dst_layout is None:
            raise LayoutError("sources: this Lowering was built without its dst layout")
        lane = np.arange(LANES)[:, None]
        elem = np.arange(self.vector_elems)[None, :]
        reg = np.broadcast_to(self.registers[k][None, :], (LANES, self.vector_elems))
        ins = {"register": reg, "lane": lane, "warp": warp, "block": 0}
        out = self.dst_layout.apply({d: ins[d] for d in self.dst_layout.in_dim_names})
        shape = (LANES, self.vector_elems)
        res = {d: np.broadcast_to(v, shape) for d, v in out.items()}
        src = transposed_load_for(self.elem_bits).source_lanes() if self.transposed else None
        res["lane"] = np.broadcast_to(lane, shape)
        res["register"] = np.broadcast_to(elem, shape)
        res["source_lane"] = src if src is not None else res["lane"]
        return res

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no addresses)."""
        return {
            "instruction": self.instruction,
            "vector_elems": self.vector_elems,
            "transposed": self.transposed,
            "eligibility": self.eligibility,
            "reason": self.reason,
            "counts_per_warp": self.counts,
            "num_warps": self.num_warps,
            "registers_per_lane": self.num_registers,
            "shape": list(self.shape),
            "elem_bits": self.elem_bits,
            "cvt": _bases_text(self.cvt),
        }


# ------------------------------------------------------------------------------ inputs
def _linear(layout: Any, shape: tuple[int, ...]) -> LinearLayout:
    return layout if isinstance(layout, LinearLayout) else layout.to_linear_layout(list(shape))


def _min_interval(shared: Any) -> int | None:
    """Smallest padding interval of a padded (or partitioned-padded) layout, else None."""
    inner = getattr(shared, "partition_layout", shared)
    pairs = getattr(inner, "interval_padding_pairs", None)
    return min(interval for interval, _ in pairs) if pairs else None


def _cvt(dst_ll: LinearLayout, shared_ll: LinearLayout) -> LinearLayout:
    """dst.invert_and_compose(shared) without the (trivial) block dim, ins register/lane/warp."""
    cvt = dst_ll.invert_and_compose(shared_ll)
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


# ------------------------------------------------------------------------------ helpers
def _bases_text(layout: LinearLayout) -> str:
    return "; ".join(f"{d}={[list(b) for b in bs]}" for d, bs in layout.bases)


def _offsets(layout: LinearLayout, dim: str) -> list[int]:
    k = layout.out_dim_names.index("offset")
    return [b[k] for b in layout.get_bases(dim)]


def _with_registers(layout: LinearLayout, order: Sequence[int]) -> LinearLayout:
    """Triton's ColumnAction on registers: new register basis j = old basis order[j]."""
    regs = layout.get_bases("register")
    bases = [(d, [regs[i] for i in order] if d == "register" else bs) for d, bs in layout.bases]
    return LinearLayout(bases, layout.out_dims)


def _register_index(order: Sequence[int], positions: np.ndarray) -> np.ndarray:
    """Original register index of permuted index ``positions`` (bit j -> bit order[j])."""
    out = np.zeros_like(positions)
    for j, src in enumerate(order):
        out |= ((positions >> j) & 1) << src
    return out


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


# ------------------------------------------------------------------------------ decisions
@dataclass(frozen=True)
class _Plan:
    instruction: str
    vector_elems: int
    eligibility: str
    reason: str
    order: list[int]  # permuted register position j -> register index in `regs`
    regs: list[int]  # register basis indices used (broadcast ones dropped for plain loads)
    row_lane: np.ndarray | None = None  # ds_load_tr: dst lane / register of each source row
    row_reg: np.ndarray | None = None


def _plan_transposed(cvt: LinearLayout, t: TransposedLoad, min_interval: int | None) -> _Plan | str:
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
    addr = t.full_tile().invert().compose(reps)
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
    return _Plan(t.name, t.tile_size, kind, reason, order, regs, row_lane, row_reg)


def _plan_plain(
    cvt: LinearLayout, elem_bits: int, min_interval: int | None, why_not: str, eligibility: str
) -> _Plan:
    """largestVectorisation: the widest v with registers at offsets 1, 2, ..., v/2."""
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
    name = PLAIN_LOADS[v * elem_bits]
    ones = ",".join(str(1 << k) for k in range(nbits))
    regs_txt = ",".join(str(1 << i) for i in lead)
    how = (
        f"registers {regs_txt} map to offsets {ones}: {v} x {elem_bits}-bit = {name}"
        if v > 1
        else f"no register maps to offset 1: one {elem_bits}-bit element per {name}"
    )
    return _Plan(name, v, eligibility, f"{why_not}; fallback: {how}", order, regs)


def lower(
    shared: Any,
    dst: Any,
    shape: str | Sequence[int],
    dtype: str | int,
    *,
    num_warps: int | None = None,
    bases: int | Sequence[int] = 0,
    allow_transpose: bool = True,
) -> Lowering:
    """Lower ``local_load`` of a ``shape`` ``dtype`` tensor from ``shared`` into ``dst``.

    ``shared``/``dst`` are encodings, ``#ttg.*`` text, or LinearLayouts; ``dtype`` a name
    (``fp16``) or a bit width; ``bases`` the LDS byte address of the buffer (one per partition
    for a partitioned layout). ``allow_transpose=False`` models disabling transposed loads.
    """
    shape = parse_shape(shape)
    elem_bits = dtype_bits(dtype) if isinstance(dtype, str) else int(dtype)
    dst_enc, shared_enc = local_load_encodings(dst, shared)
    dst_ll = _linear(dst_enc, shape)
    cvt = _cvt(dst_ll, _linear(shared_enc, shape))
    if num_warps is not None and num_warps != cvt.in_dim_size("warp"):
        raise LayoutError(
            f"num_warps {num_warps}: the dst layout spans {cvt.in_dim_size('warp')} warps"
        )
    min_interval = _min_interval(shared_enc)
    eligibility = "invalid"
    if not allow_transpose:
        plan: _Plan | str = "transposed loads disabled"
        eligibility = "disabled"
    elif elem_bits not in (8, 16):
        plan = f"ds_load_tr needs 8- or 16-bit elements, not {elem_bits}"
        eligibility = "unsupported"
    else:
        plan = _plan_transposed(cvt, transposed_load_for(elem_bits), min_interval)
    if isinstance(plan, str):
        plan = _plan_plain(cvt, elem_bits, min_interval, plan, eligibility)
    elem = local_load_addresses(dst_enc, shared_enc, shape, elem_bits // 8, bases)
    return _build(plan, cvt, shape, elem_bits, elem, dst_ll)


def _build(plan: _Plan, cvt, shape, elem_bits, elem: np.ndarray, dst_ll) -> Lowering:
    """The Lowering of ``plan``; ``elem`` is the byte address of every [warp, lane, register]."""
    full = list(range(cvt.num_bases("register")))
    # permuted position -> index in the (broadcast-free) register list -> register index
    perm = [plan.regs.index(i) for i in plan.order]
    n = 1 << len(plan.regs)
    pos = np.arange(n).reshape(-1, plan.vector_elems)  # [instr, element]
    compact = _register_index(perm, pos)
    registers = _register_index(plan.regs, compact)
    if plan.row_lane is None:
        addresses = elem[:, :, registers[:, 0]].transpose(0, 2, 1)  # [warp, instr, lane]
    else:
        regs = registers[:, plan.row_reg]  # [instr, source lane]
        addresses = elem[:, plan.row_lane[None, :], regs]
    mask = sum(1 << i for i in full if i not in plan.regs)
    addresses = np.ascontiguousarray(addresses)
    for arr in (addresses, registers):
        arr.flags.writeable = False
    return Lowering(
        instruction=plan.instruction,
        vector_elems=plan.vector_elems,
        eligibility=plan.eligibility,
        reason=plan.reason,
        cvt=cvt,
        shape=tuple(shape),
        elem_bits=elem_bits,
        addresses=addresses,
        registers=registers,
        broadcast_mask=mask,
        dst_layout=dst_ll,
    )
