"""One candidate of the layout search and the problem it belongs to (``docs/DESIGN.md``,
"Layout search"): a :class:`SearchProblem` is a GEMM tile and the parts of the space fixed or
given (references), a :class:`Candidate` one ctaLayout x shared layouts x transposed loads with
its operands' statics, its allocation and its metrics (``row()``, a table row).

>>> from wgpsim.microbench.candidates import Gemm
>>> p = SearchProblem(Gemm((128, 128, 64), "fp16", 4, (16, 16, 32)))
>>> len(p.ctas()), len(p.choices(0)), len(p.choices(1))
(1050, 15, 15)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from wgpsim.hw.alloc import Allocation
from wgpsim.microbench.candidates import OPERANDS, Gemm
from wgpsim.search.mfma import mfma_ctas
from wgpsim.search.space import (
    CtaLayout,
    SharedChoice,
    cta_layouts,
    shared_choices,
    tile_bits,
)
from wgpsim.search.static import OperandStatic
from wgpsim.trace.trace import Trace, TraceBuilder


@dataclass(frozen=True)
class SearchProblem:
    """One GEMM tile to search: ``gemm`` (block, dtype, warps, contiguity), ``stages`` buffers
    per operand, the LDS budget (default: the hardware's LDS), and optional fixed parts."""

    gemm: Gemm
    stages: int = 2
    lds_budget: int | None = None
    cacheline_bytes: int = 128
    cta: CtaLayout | None = None
    cta_list: tuple[CtaLayout, ...] | None = None
    a: SharedChoice | None = None
    b: SharedChoice | None = None
    swizzle_depth: int = 1
    b_transposed_loads: tuple[bool, ...] = (True, False)
    #: partitioned shared layouts in the space (False on a chip with one LDS partition)
    partitioned: bool = True
    #: Hand-made candidates ranked with the space and never pruned: (name, ctaLayout, A, B).
    references: tuple[tuple[str, CtaLayout, SharedChoice, SharedChoice], ...] = ()

    def ctas(self) -> list[CtaLayout]:
        if self.cta is not None:
            return [self.cta]
        if self.cta_list is not None:
            return list(self.cta_list)
        if self.gemm.mfma_version:
            return mfma_ctas(self.gemm)
        bits = tile_bits(self.gemm.block_mn, self.gemm.tile_shape)
        return cta_layouts(bits, self.gemm.num_warps, swizzle_depth=self.swizzle_depth)

    def choices(self, op: int) -> list[SharedChoice]:
        fixed = (self.a, self.b)[op]
        if fixed is not None:
            return [fixed]
        g = self.gemm
        extent = g.operand_shape(op)[g.contiguous_dim(op)]
        out = shared_choices(extent, g.elem_bytes)
        return out if self.partitioned else [c for c in out if not c.partitioned]


@dataclass
class Candidate:
    """One point of the space and its metrics (``row()`` is its table row)."""

    cta: CtaLayout
    a: SharedChoice
    b: SharedChoice
    b_transposed_loads: bool
    ops: tuple[OperandStatic, OperandStatic]
    allocation: Allocation
    fits: bool
    lower_bound: int
    lockstep_overlaps: int
    masks: tuple[np.ndarray, np.ndarray] = field(repr=False)
    cycles: int | None = None
    partition_stall_cycles: int | None = None
    pruned: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """Equal keys: equal passes (instructions, bank cycles, partitions), equal timing."""
        return _key(*self.ops, self.masks)

    @property
    def name(self) -> str:
        if "reference" in self.extra:
            return str(self.extra["reference"])
        tr = "" if self.b_transposed_loads else " no-tr"
        return f"{self.cta} | A {self.a.label} | B {self.b.label}{tr}"

    def bases(self, op: int) -> np.ndarray:
        return np.asarray(self.allocation.offsets_of(OPERANDS[op].upper()), dtype=np.int64)

    def addresses(self, op: int) -> np.ndarray:
        o = self.ops[op]
        return o.plan.addresses(o.offsets, self.bases(op))

    def trace(self) -> Trace:
        """One K step: barrier, clock, A's loads, B's loads, wait, clock (every warp)."""
        addrs = [self.addresses(op) for op in (0, 1)]
        b = TraceBuilder(num_warps=len(self.ops[0].offsets), lanes=addrs[0].shape[-1])
        b.barrier()
        for w in range(b.num_warps):
            b.clock(w, "start")
            for op in (0, 1):
                b.loads(w, self.ops[op].plan.instruction, addrs[op][w])
            b.wait_ds(w, 0)
            b.clock(w, "end")
        return b.build()

    def row(self) -> dict[str, Any]:
        a, b = self.ops
        return {
            "candidate": self.name,
            "cta_warp": [list(x) for x in self.cta.warp],
            "cta_register": [list(x) for x in self.cta.register],
            "a": self.a.label,
            "b": self.b.label,
            "b_transposed_loads": self.b_transposed_loads,
            "a_instruction": a.plan.instruction,
            "b_instruction": b.plan.instruction,
            "b_tr_eligibility": b.plan.eligibility,
            "local_loads": a.plan.instructions + b.plan.instructions,
            "lds_bytes": int(self.allocation.size),
            "fits": self.fits,
            "misfit": 0 if self.fits else 1,
            "bank_conflict_cycles": a.bank_conflict_cycles + b.bank_conflict_cycles,
            "lockstep_overlaps": self.lockstep_overlaps,
            "lower_bound": self.lower_bound,
            "cycles": self.cycles,
            "partition_stall_cycles": self.partition_stall_cycles,
            "a_pieces": a.pieces.num_pieces,
            "b_pieces": b.pieces.num_pieces,
            "pieces": a.pieces.num_pieces + b.pieces.num_pieces,
            "tdm_instructions": a.pieces.tdm_instructions + b.pieces.tdm_instructions,
            "cacheline_use": min(a.pieces.cacheline_use, b.pieces.cacheline_use),
            "pruned": self.pruned,
            **self.extra,
        }


def _key(oa: OperandStatic, ob: OperandStatic, masks) -> str:
    h = hashlib.blake2b(digest_size=12)
    for o, m in zip((oa, ob), masks, strict=True):
        h.update(o.plan.instruction.encode())
        for arr in (o.pass_warp, o.pass_instr, o.pass_bank, m):
            h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


__all__ = ["Candidate", "SearchProblem"]
