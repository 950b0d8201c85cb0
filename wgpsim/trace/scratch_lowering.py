"""The LDS traffic of ops Triton 3.9.0 lowers through a scratch buffer on gfx1250.

A ``ttg.convert_layout`` whose data crosses warps goes through LDS
(``transferWithinBlockSwizzling``, Triton's ``ConvertLayoutOpToLLVM.cpp``): the registers of the
source layout (broadcast registers removed) are stored into a swizzled scratch tile
(`wgpsim.trace.swizzling`), a barrier, and the destination layout's registers are loaded back;
when the tile is smaller than the tensor this repeats in rounds through the same scratch, a
barrier before each further round. Both sides are the generic ``lowerLdStShared``: the widest
plain vector, the same route as a local_load's (`wgpsim.trace.lowering.lower_offsets`), so the
stores and loads are `Lowering` values, LLVM's pairing into ``ds_*_2addr_*`` included.

The row sum's conversion (a ``tensor<128xf32>`` sliced from rows of a 4-warp blocked layout
into a 1-D blocked layout): every lane of a warp holds the same 32 row sums, which it stores
one b32 at a time (LLVM pairs them into 16 ``ds_store_2addr_b32``); each lane then loads its
one element.

>>> cvt = lower_convert("#ttg.slice<{dim = 1, parent = #ttg.blocked<{sizePerThread = [1, 4], "
...     "threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>}>",
...     "#ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>",
...     (128,), "fp32")
>>> cvt.counts, cvt.dialect_counts, cvt.barriers
({'ds_store_2addr_b32': 16, 'ds_load_b32': 1}, {'ds_store_b32': 32, 'ds_load_b32': 1}, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from wgpsim.layout.addresses import linear_of
from wgpsim.layout.dtypes import dtype_bits, parse_shape
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.layout.notation import parse_any
from wgpsim.trace.instructions import INSTRUCTIONS, LANES
from wgpsim.trace.lowering import Issued, Lowering, lower_offsets
from wgpsim.trace.swizzling import ScratchTile, flat_bases, scratch_tile
from wgpsim.trace.trace import Trace, TraceBuilder

__all__ = [
    "BARRIER",
    "THREAD_DIMS",
    "ScratchLowering",
    "convert_steps",
    "crosses_warps",
    "lower_convert",
    "thread_layout",
]

BARRIER = "barrier"
"""A workgroup barrier between two steps (``s_barrier_signal`` + ``s_barrier_wait``)."""

NUM_BANKS = 64
"""LDS banks Triton 3.9.0 swizzles for on gfx1250 (``optimalSwizzlingLdSt``'s ``numBanks``)."""

THREAD_DIMS = ("register", "lane", "warp")


@dataclass(frozen=True, eq=False)
class ScratchLowering:
    """The LDS steps of one scratch op, in program order: `Lowering` values (every warp issues
    its instructions) and `BARRIER` between them; ``tiles`` holds the scratch tile of each
    conversion (a reduce has up to two).

    It reads like one `Lowering` to the kernel report and the loop matcher: ``issued`` (the
    steps' instructions concatenated, as the assembly holds them), ``addresses`` (Triton-level,
    ``[warp, instruction, lane]``), ``counts``, ``add_to`` (a warp's instructions with a
    ``wait_ds 0`` and a barrier between steps, as the assembly waits before
    ``s_barrier_signal``) and ``trace``. ``instruction`` is the widest of its instructions.
    """

    op: str
    steps: tuple[Lowering | str, ...]
    tiles: tuple[ScratchTile, ...] = ()
    eligibility: str = "scratch"
    store: bool = False
    transposed: bool = False

    @property
    def lowerings(self) -> list[Lowering]:
        return [s for s in self.steps if not isinstance(s, str)]

    @property
    def num_warps(self) -> int:
        return max((low.num_warps for low in self.lowerings), default=1)

    @property
    def lanes(self) -> int:
        """Lanes of a warp, from its rounds' layouts (wave32's when it has none)."""
        return max((low.lanes for low in self.lowerings), default=LANES)

    @property
    def barriers(self) -> int:
        return sum(1 for s in self.steps if s == BARRIER)

    @property
    def instruction(self) -> str:
        return max(
            (low.instruction for low in self.lowerings),
            key=lambda n: INSTRUCTIONS[n].bytes_per_lane,
        )

    @property
    def reason(self) -> str:
        rounds = ", ".join(str(t.rounds) for t in self.tiles)
        return f"{self.op} through LDS scratch: store, barrier, load ({rounds} round(s))"

    @cached_property
    def issued(self) -> Issued:
        """Every step's issued instructions, concatenated in program order."""
        parts = [low.issued for low in self.lowerings]
        starts = np.cumsum([0] + [low.num_instructions for low in self.lowerings])
        sources = tuple(
            tuple(int(k + start) for k in src)
            for part, start in zip(parts, starts, strict=False)
            for src in part.sources
        )
        return Issued(
            tuple(op for part in parts for op in part.ops),
            np.concatenate([part.addresses for part in parts], axis=1),
            np.concatenate([part.distance for part in parts]),
            sources,
        )

    @cached_property
    def addresses(self) -> np.ndarray:
        """Triton-level addresses of every step, ``[warp, instruction, lane]``."""
        return np.concatenate([low.addresses for low in self.lowerings], axis=1)

    @property
    def num_instructions(self) -> int:
        return int(self.addresses.shape[1])

    @property
    def barriers_after(self) -> tuple[int, ...]:
        """For each barrier, how many issued instructions precede it."""
        out, n = [], 0
        for step in self.steps:
            if isinstance(step, str):
                out.append(n)
            else:
                n += len(step.issued)
        return tuple(out)

    def _sum(self, attr: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for low in self.lowerings:
            for name, n in getattr(low, attr).items():
                out[name] = out.get(name, 0) + n
        return out

    @property
    def counts(self) -> dict[str, int]:
        """Instructions per warp by name, as the assembly holds them (pairs merged)."""
        return self._sum("counts")

    @property
    def dialect_counts(self) -> dict[str, int]:
        """Triton-level instructions per warp by name (its LLVM-dialect output)."""
        return self._sum("dialect_counts")

    def add_to(self, builder: TraceBuilder, warp: int) -> None:
        """Append warp ``warp``'s instructions, and a ``wait_ds 0`` + barrier between steps."""
        for step in self.steps:
            if isinstance(step, str):
                builder.wait_ds(warp, 0)
                builder.barrier([warp])
            else:
                step.add_to(builder, warp)

    def _check_alignment(self) -> None:
        for low in self.lowerings:
            low._check_alignment()

    def trace(self, *, clocks: bool = True) -> Trace:
        """The op's trace between a barrier + clock and wait_ds 0 + clock, like
        `Lowering.trace`."""
        b = TraceBuilder(num_warps=self.num_warps, lanes=self.lanes)
        b.barrier()
        for w in range(self.num_warps):
            if clocks:
                b.clock(w, "start")
            self.add_to(b, w)
            b.wait_ds(w, 0)
            if clocks:
                b.clock(w, "end")
        return b.build()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no addresses)."""
        return {
            "op": self.op,
            "counts_per_warp": self.counts,
            "dialect_counts_per_warp": self.dialect_counts,
            "barriers": self.barriers,
            "rounds": [t.rounds for t in self.tiles],
            "steps": [s if isinstance(s, str) else s.instruction for s in self.steps],
        }


def thread_layout(layout: Any, shape: Sequence[int]) -> LinearLayout:
    """(register, lane, warp) -> tensor dims of a distributed layout for ``shape``: the block dim
    dropped and broadcast (zero) register bases removed, as Triton does before a conversion."""
    ll = linear_of(parse_any(layout), shape)
    ins = {d: [list(b) for b in ll.get_bases(d)] if ll.has_in_dim(d) else [] for d in THREAD_DIMS}
    ins["register"] = [b for b in ins["register"] if any(b)]
    return LinearLayout.from_bases(ins, ll.out_dim_names, [s for _, s in ll.out_dims])


def crosses_warps(src: LinearLayout, dst: LinearLayout) -> bool:
    """Whether the conversion moves data between warps, as Triton's ``minimalCvtLayout`` decides
    it: ``dst.invert_and_compose(src)`` does not factor out the warp dim (warp w of ``dst`` reads
    warp w of ``src`` and nothing else). Then it goes through LDS; within warps Triton shuffles
    or renumbers registers. A source broadcast over warps counts as crossing, as in Triton.

    >>> rows = LinearLayout.from_bases({"lane": [[1], [2], [4], [8], [16]], "warp": [[32]]}, ["dim0"])
    >>> flipped = LinearLayout.from_bases({"lane": [[2], [4], [8], [16], [32]], "warp": [[1]]}, ["dim0"])
    >>> crosses_warps(rows, rows), crosses_warps(rows, flipped)
    (False, True)
    """
    return dst.invert_and_compose(src).quotient(["warp"]) is None


def _offset_layout(layout: LinearLayout, tile: ScratchTile) -> LinearLayout:
    """(register, lane, warp) -> scratch ``offset`` of ``layout``'s elements in ``tile``."""
    bases = {
        d: [[int(o)] for o in tile.offsets_of(np.array(flat_bases(layout, d), dtype=np.int64))]
        for d in THREAD_DIMS
    }
    return LinearLayout.from_bases(bases, ["offset"], [tile.elems], require_surjective=False)


def convert_steps(
    src: LinearLayout, dst: LinearLayout, bits: int, base: int, num_banks: int = NUM_BANKS
) -> tuple[list[Lowering | str], ScratchTile]:
    """The rounds of one conversion through scratch at byte ``base``: store, barrier, load,
    and a barrier before each further round (``transferWithinBlockSwizzlingImpl``)."""
    mem_bits = max(bits, 8)  # sub-byte values travel as i8
    tile = scratch_tile(src, dst, mem_bits, num_banks)
    why = f"convert_layout through scratch ({tile.rounds} round(s))"
    store = lower_offsets(_offset_layout(src, tile), mem_bits, base, store=True, reason=why)
    load = lower_offsets(_offset_layout(dst, tile), mem_bits, base, store=False, reason=why)
    steps: list[Lowering | str] = []
    for r in range(tile.rounds):
        steps += ([BARRIER] if r else []) + [store, BARRIER, load]
    return steps, tile


def lower_convert(
    src: Any,
    dst: Any,
    shape: str | Sequence[int],
    dtype: str | int,
    *,
    base: int = 0,
    num_banks: int = NUM_BANKS,
    through_lds: bool | None = None,
) -> ScratchLowering:
    """The LDS steps of ``ttg.convert_layout`` of a ``shape`` ``dtype`` tensor from ``src`` to
    ``dst`` (encodings, ``#ttg.*`` text or LinearLayouts) through scratch at byte ``base``.
    ``through_lds`` says whether Triton converts through LDS (the kernel model knows: it
    gave the op scratch, `wgpsim.hw.scratch.cvt_needs_shared_memory`); None decides by
    `crosses_warps` alone, which misses the in-warp conversions Triton also routes through
    LDS (two or more register<->lane transpositions). No steps when it does not."""
    shape = parse_shape(shape)
    bits = dtype_bits(dtype) if isinstance(dtype, str) else int(dtype)
    src_ll, dst_ll = thread_layout(src, shape), thread_layout(dst, shape)
    if through_lds is None:
        through_lds = crosses_warps(src_ll, dst_ll)
    if not through_lds:
        return ScratchLowering("ttg.convert_layout", ())
    steps, tile = convert_steps(src_ll, dst_ll, bits, base, num_banks)
    return ScratchLowering("ttg.convert_layout", tuple(steps), (tile,))
