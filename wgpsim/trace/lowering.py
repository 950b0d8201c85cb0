"""How Triton 3.9.0 lowers a ``local_load`` on gfx1250, decided from the layouts alone.

``lower(shared, dst, shape, dtype)`` says which LDS instruction a local_load becomes, why, how
many of them each warp issues, and which byte address every lane reads, so the engine can time
it. It follows ``TransLocalLoadOpConversion`` / ``lowerDsReadTr`` and the generic
``lowerLdSt`` (Triton 3.9.0's ``TritonGPUToLLVM/Utility.cpp``; the plans are in
``wgpsim.trace.lowering_plans``):

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
from functools import lru_cache
from typing import Any

import numpy as np

from wgpsim.errors import LayoutError
from wgpsim.layout.addresses import local_load_addresses
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.trace.emulate import emulate
from wgpsim.trace.instructions import INSTRUCTIONS
from wgpsim.trace.lowering_asm import Issued, assemble
from wgpsim.trace.lowering_plans import (
    MAX_VECTOR_BITS,
    PLAIN_LOADS,
    PLAIN_STORES,
    Choice,
    Plan,
    choose,
    plan_plain,
    registers_of,
    sources_of,
)
from wgpsim.trace.trace import Trace, TraceBuilder
from wgpsim.trace.transpose import transposed_load_for

__all__ = [
    "MAX_VECTOR_BITS",
    "PLAIN_LOADS",
    "PLAIN_STORES",
    "Choice",
    "Issued",
    "Lowering",
    "choose",
    "lower",
    "lower_offsets",
    "packed_in_order",
]


@dataclass(frozen=True, eq=False)
class Lowering:
    """The lowering of one local_load (or local_store): the decision, the reason, every lane's
    address, and the instructions the assembly holds.

    Two levels, because users compare both. Triton's LLVM-dialect lowering: ``instruction``
    (also ``dialect_instruction``), ``dialect_counts``, ``addresses[w, k, s]`` (the byte
    address source lane ``s`` of warp ``w`` reads in its ``k``-th instruction) and
    ``registers[k, e]`` (the destination register element ``e`` of that instruction lands in,
    the same for every warp and lane). The assembly, after LLVM removed duplicate loads and
    merged pairs (``wgpsim.trace.lowering_asm``): ``issued`` and ``counts``, which ``trace()``
    times (``predicated``: stores each under its own mask's branch, none merged). Arrays are
    read-only.
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
    issued: Issued | None = field(default=None, repr=False)
    store: bool = False
    source_dim: int | None = None
    packed: bool | None = None
    predicated: bool = False

    def __post_init__(self) -> None:
        if self.issued is None:
            regs = self.registers[:, 0] if self._packed_source() else None
            issued = assemble(self.instruction, self.addresses, regs, merge=not self.predicated)
            object.__setattr__(self, "issued", issued)

    def _packed_source(self) -> bool:
        """Whether a store's 8/16-bit source values share 32-bit registers in element order:
        the source layout's first register bases step its contiguous dim (``source_dim``, a
        blocked layout's ``order[0]``) by 1, 2, ..., as a vector global load leaves them.
        Registers that step another dim (or far apart) each hold one value. Assumption, matched
        on real compiles (the corpus's direct load-store kernels; the attention kernel's
        stores). ``packed``, when the kernel model knows the value's producer, decides instead
        (an fp32 -> fp16 conversion on a target without packed converts: False)."""
        if not self.store or self.elem_bits not in (8, 16):
            return False
        if self.packed is not None:
            return self.packed
        return self.dst_layout is not None and packed_in_order(
            self.dst_layout, self.elem_bits, self.source_dim
        )

    @property
    def dialect_instruction(self) -> str:
        """Triton's choice in its LLVM-dialect lowering (the assembly may pair or drop some)."""
        return self.instruction

    @property
    def dialect_counts(self) -> dict[str, int]:
        """Triton-level instructions per warp by name (what its LLVM dialect output holds)."""
        return {self.instruction: self.num_instructions}

    @property
    def transposed(self) -> bool:
        return "_tr" in self.instruction

    @property
    def num_warps(self) -> int:
        return int(self.addresses.shape[0])

    @property
    def lanes(self) -> int:
        """Lanes of a warp, from the layouts' lane bases (5 bits: wave32, 6: wave64)."""
        return int(self.addresses.shape[2])

    @property
    def num_instructions(self) -> int:
        """Triton-level instructions per warp."""
        return int(self.addresses.shape[1])

    @property
    def counts(self) -> dict[str, int]:
        """Instructions per warp by name, as the gfx1250 assembly holds them (duplicate loads
        removed, pairs merged into 2addr forms)."""
        return self.issued.counts

    def add_to(self, builder: TraceBuilder, warp: int) -> None:
        """Append warp ``warp``'s issued instructions, in program order, to ``builder``."""
        issued = self.issued
        n = len(issued)
        start = 0
        while start < n:
            end = start + 1
            while end < n and issued.ops[end] == issued.ops[start]:
                end += 1
            rows = slice(start, end)
            builder.lds_many(
                warp, issued.ops[start], issued.addresses[warp, rows], issued.distance[rows]
            )
            start = end

    @property
    def num_registers(self) -> int:
        return self.cvt.in_dim_size("register")

    def trace(self, *, clocks: bool = True, wait: bool = True, barrier: bool = True) -> Trace:
        """Every warp's instructions, optionally between a barrier + clock and wait_ds 0 + clock.

        With ``clocks`` the engine measures the load as ``end - start`` of each warp. Addresses
        the instruction cannot read aligned (a padding that is not a multiple of its width) are a
        LayoutError naming the padding, before any trace is built.
        """
        self._check_alignment()
        b = TraceBuilder(num_warps=self.num_warps, lanes=self.lanes)
        if barrier:
            b.barrier()
        for w in range(self.num_warps):
            if clocks:
                b.clock(w, "start")
            self.add_to(b, w)
            if wait or clocks:
                b.wait_ds(w, 0)
            if clocks:
                b.clock(w, "end")
        return b.build()

    def _check_alignment(self) -> None:
        align = INSTRUCTIONS[self.instruction].alignment
        bad = (self.addresses >= 0) & (self.addresses % align != 0)
        if bad.any():
            w, k, lane = (int(i[0]) for i in np.nonzero(bad))
            raise LayoutError(
                f"{self.instruction} reads {align} B per lane from {align}-byte aligned addresses, "
                f"but the shared layout puts lane {lane} of warp {w} (instruction {k}) at "
                f"byte {int(self.addresses[w, k, lane])}: make the padding a multiple of "
                f"{align * 8 // self.elem_bits} elements"
            )

    def emulate(self, lds: np.ndarray) -> np.ndarray:
        """Registers after the load, ``[warp, lane, register]``, from LDS contents (uint8).

        Runs every instruction through `wgpsim.trace.emulate` and scatters its elements into
        the destination registers; broadcast registers copy the register they duplicate.
        """
        dt = np.dtype(f"<u{self.elem_bits // 8}")
        out = np.zeros((self.num_warps, self.lanes, self.num_registers), dtype=dt)
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
        lane = np.arange(self.lanes)[:, None]
        elem = np.arange(self.vector_elems)[None, :]
        reg = np.broadcast_to(self.registers[k][None, :], (self.lanes, self.vector_elems))
        ins = {"register": reg, "lane": lane, "warp": warp, "block": 0}
        out = self.dst_layout.apply({d: ins[d] for d in self.dst_layout.in_dim_names})
        shape = (self.lanes, self.vector_elems)
        res = {d: np.broadcast_to(v, shape) for d, v in out.items()}
        tr = transposed_load_for(self.elem_bits, self.lanes) if self.transposed else None
        src = tr.source_lanes() if tr is not None else None
        res["lane"] = np.broadcast_to(lane, shape)
        res["register"] = np.broadcast_to(elem, shape)
        res["source_lane"] = src if src is not None else res["lane"]
        return res

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no addresses)."""
        return {
            "instruction": self.instruction,
            "op": "local_store" if self.store else "local_load",
            "vector_elems": self.vector_elems,
            "transposed": self.transposed,
            "eligibility": self.eligibility,
            "reason": self.reason,
            "counts_per_warp": self.counts,
            "dialect_counts_per_warp": self.dialect_counts,
            "assembly_notes": self.issued.notes(),
            "num_warps": self.num_warps,
            "registers_per_lane": self.num_registers,
            "shape": list(self.shape),
            "elem_bits": self.elem_bits,
            "cvt": _bases_text(self.cvt),
        }


# ------------------------------------------------------------------------------ helpers
def packed_in_order(layout: LinearLayout, elem_bits: int, dim: int | None = None) -> bool:
    """Whether ``layout``'s first register bases step ``dim`` (default: the last) by 1, 2, ...
    for the 2 (16-bit) or 4 (8-bit) values of one 32-bit register: the registers a vector
    global load fills, in element order.

    >>> rows = LinearLayout.from_bases({"register": [[0, 1], [0, 2]], "lane": [], "warp": []},
    ...     ["dim0", "dim1"])
    >>> packed_in_order(rows, 16), packed_in_order(rows, 16, 0), packed_in_order(rows, 8)
    (True, False, True)
    """
    if elem_bits not in (8, 16):
        return False
    per_register = 32 // elem_bits
    bases = layout.get_bases("register")[: per_register.bit_length() - 1]
    if len(bases) < per_register.bit_length() - 1:
        return False
    d = dim if dim is not None else len(bases[0]) - 1
    return all(b[d] == 1 << i and not any(b[:d] + b[d + 1 :]) for i, b in enumerate(bases))


def _bases_text(layout: LinearLayout) -> str:
    return "; ".join(f"{d}={[list(b) for b in bs]}" for d, bs in layout.bases)


def lower(
    shared: Any,
    dst: Any,
    shape: str | Sequence[int],
    dtype: str | int,
    *,
    num_warps: int | None = None,
    bases: int | Sequence[int] = 0,
    allow_transpose: bool = True,
    store: bool = False,
) -> Lowering:
    """Lower ``local_load`` of a ``shape`` ``dtype`` tensor from ``shared`` into ``dst``.

    ``shared``/``dst`` are encodings, ``#ttg.*`` text, or LinearLayouts; ``dtype`` a name
    (``fp16``) or a bit width; ``bases`` the LDS byte address of the buffer (one per partition
    for a partitioned layout). ``allow_transpose=False`` models disabling transposed loads.
    ``store=True`` lowers a ``local_store`` of a tensor in layout ``dst`` instead: Triton's
    ``lowerLocalLdSt`` with the same widest vector as a plain load, as ``ds_store_b*``
    (gfx1250 has no transposed store), each lane writing what a load would read.

    A Lowering is immutable: equal (hashable) arguments give the one already built, kept for
    the :data:`KEPT` latest (a loop's prologue and body, and the loop program beside the
    report, lower the same ops).
    """
    args = (shared, dst, shape, dtype, num_warps, bases, allow_transpose, store)
    try:  # the sequences as tuples, for the key
        key = (*args[:2], _frozen(shape), dtype, num_warps, _frozen(bases), *args[6:])
        hash(key)
    except TypeError:  # a mutable layout (or an argument choose refuses): lowered every time
        return _lower(*args)
    return _kept(*key)


def _frozen(value: Any) -> Any:
    """A sequence (not a string or a number) as a tuple."""
    return value if isinstance(value, str | int | np.integer) else tuple(value)


KEPT = 32
"""How many distinct lowerings :func:`lower` keeps (the latest used)."""


def _lower(
    shared: Any,
    dst: Any,
    shape: str | Sequence[int],
    dtype: str | int,
    num_warps: int | None,
    bases: int | Sequence[int],
    allow_transpose: bool,
    store: bool,
) -> Lowering:
    choice = choose(
        shared, dst, shape, dtype, num_warps=num_warps, allow_transpose=allow_transpose, store=store
    )
    elem = local_load_addresses(
        choice.dst_enc,
        choice.shared_enc,
        choice.shape,
        choice.elem_bits // 8,
        bases,
        cvt=choice.composed,
    )
    order = getattr(choice.dst_enc, "order", None)
    source_dim = int(order[0]) if store and order else None
    return _build(
        choice.plan,
        choice.cvt,
        choice.shape,
        choice.elem_bits,
        elem,
        choice.dst_ll,
        store,
        source_dim,
    )


_kept = lru_cache(maxsize=KEPT)(_lower)


def lower_offsets(
    cvt: LinearLayout,
    elem_bits: int,
    base: int = 0,
    *,
    store: bool,
    reason: str,
    shape: Sequence[int] = (),
) -> Lowering:
    """The generic ``lowerLdStShared`` of ``cvt`` = (register, lane, warp) -> ``offset`` (elements
    from byte ``base``): the widest plain vector ``largestVectorisation`` allows, as
    ``ds_store_b*`` (``store``) or ``ds_load_b*``. Registers that map to offset 0 are not moved
    (broadcast, or a later round through the same scratch: ``wgpsim.trace.scratch.lowering``).

    >>> cvt = LinearLayout.from_bases({"register": [[1], [2]], "lane": [[4], [8], [16], [32],
    ...     [64]], "warp": []}, ["offset"])
    >>> low = lower_offsets(cvt, 32, 1024, store=True, reason="scratch")
    >>> low.counts, low.addresses[0, 0, :3].tolist()
    ({'ds_store_b128': 1}, [1024, 1040, 1056])
    """
    names = PLAIN_STORES if store else PLAIN_LOADS
    plan = plan_plain(cvt, elem_bits, None, reason, "scratch", names)
    w, n, lanes = (cvt.in_dim_size(d) for d in ("warp", "register", "lane"))
    idx = {
        "register": np.arange(n)[None, None, :],
        "lane": np.arange(lanes)[None, :, None],
        "warp": np.arange(w)[:, None, None],
    }
    offset = cvt.apply(idx)["offset"]
    elem = base + (elem_bits // 8) * np.broadcast_to(offset, (w, lanes, n)).astype(np.int64)
    return _build(plan, cvt, tuple(shape), elem_bits, elem, None, store)


def _build(
    plan: Plan, cvt, shape, elem_bits, elem: np.ndarray, dst_ll, store=False, source_dim=None
) -> Lowering:
    """The Lowering of ``plan``; ``elem`` is the byte address of every [warp, lane, register]."""
    full = list(range(cvt.num_bases("register")))
    registers = registers_of(plan)
    lane, register = sources_of(plan, registers, elem.shape[1])
    addresses = elem[:, lane, register]  # [warp, instr, lane]
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
        store=store,
        source_dim=source_dim,
    )
