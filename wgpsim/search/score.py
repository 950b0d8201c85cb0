"""What every candidate of the layout search shares, computed once (:class:`Scorer`), and the
scoring of one ctaLayout's candidates with the bounds that prune them (:func:`score_cta`;
``docs/DESIGN.md``, "Layout search").

A candidate's lower bound is ``max(busiest pair's bank cycles, busiest partition's bank
cycles)``: the AMD blog's coarse ctaLayout with both operands partitioned needs 128 cycles:

>>> from wgpsim.microbench.candidates import Gemm
>>> from wgpsim.search.candidate import SearchProblem
>>> from wgpsim.search.space import CtaLayout, SharedChoice
>>> from wgpsim.hw import load_hardware
>>> auto = {"partitioned": "auto", "partition_layout": {"padded": [[64, 8]]}}
>>> b = {"partitioned": "auto", "partition_layout": {"padded": [[128, 16]]}}
>>> problem = SearchProblem(Gemm((128, 128, 64), "fp16", 4, (16, 16, 32)))
>>> coarse = CtaLayout(((2, 4), (1, 0)), ((0, 1), (0, 2), (2, 0)))
>>> c = Scorer(problem, load_hardware()).reference(
...     "coarse", coarse, SharedChoice("A", auto), SharedChoice("B", b))
>>> c.lower_bound, c.allocation.size
(128, 102384)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from wgpsim.errors import AllocationError, LayoutError
from wgpsim.hw import HardwareConfig
from wgpsim.hw.alloc import Allocation, allocate, tensor_buffers
from wgpsim.layout.shared import PartitionedSharedLayout
from wgpsim.microbench.candidates import (
    OPERANDS,
    Gemm,
    auto_partition,
    instruction_tiles,
    issue_rounds,
)
from wgpsim.microbench.gemm import build_shared
from wgpsim.microbench.operand_plan import OperandPlan, make_plan, plan_addresses
from wgpsim.microbench.pieces import piece_info
from wgpsim.search.candidate import Candidate, SearchProblem
from wgpsim.search.space import CtaLayout, SharedChoice, tile_bits
from wgpsim.search.static import OperandStatic, operand_statics
from wgpsim.trace.spelling import respelled


@dataclass(eq=False)
class CtaParts:
    """What every candidate of one ctaLayout shares."""

    cta: CtaLayout
    gemm: Gemm
    _wmma: Any
    autos: list[Any]
    offsets: tuple[np.ndarray, np.ndarray]
    reads: list[np.ndarray]  # per operand: bytes each warp reads
    pair_bytes: int = 0  # bytes the busiest SIMD pair reads
    total_bytes: tuple[int, int] = (0, 0)  # per operand, bytes all warps read

    @property
    def wmma(self) -> Any:
        if self._wmma is None:
            self._wmma = self.gemm.wmma(self.cta.warp, self.cta.register)
        return self._wmma


def _tiles(cta: CtaLayout) -> np.ndarray:
    """``[instruction, warp, 2]`` C tiles of a ctaLayout with every register basis given
    (instruction r, warp w: XOR of the bases the bits of r and w select)."""

    def span(bases: Sequence[tuple[int, int]]) -> np.ndarray:
        out = np.zeros((1 << len(bases), 2), dtype=np.int64)
        for i, b in enumerate(bases):
            half = 1 << i
            out[half : 2 * half] = out[:half] ^ np.asarray(b)
        return out

    return span(cta.register)[:, None, :] ^ span(cta.warp)[None, :, :]


class Scorer:
    """The caches every candidate shares: lowerings per (operand, register bases, shared
    layout, transposed loads), operand passes per warp placement, allocations per buffer set."""

    def __init__(self, problem: SearchProblem, hw: HardwareConfig):
        self.problem, self.hw = problem, hw
        g = problem.gemm
        self.pairs = np.array([hw.pair_of_warp(w) for w in range(g.num_warps)])
        self.rounds = np.array(issue_rounds(g.num_warps, hw.wgp.simds))
        self.budget = problem.lds_budget or hw.partitions.lds_bytes
        self._plans: dict[Any, OperandPlan | LayoutError] = {}
        self._statics: dict[Any, OperandStatic] = {}
        self._allocs: dict[Any, Allocation | AllocationError] = {}
        self._part_sums: dict[Any, Any] = {}
        self._bases: dict[int, Any] = {}
        self._dsts: dict[Any, Any] = {}
        self._choices: dict[Any, ChoicePart] = {}
        self._pair_allocs: dict[tuple[int, int], Any] = {}
        self._unsplit: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self._addrs: dict[Any, np.ndarray] = {}
        self._pieces: dict[Any, Any] = {}

    # -------------------------------------------------------------------------- per ctaLayout
    def cta_parts(self, cta: CtaLayout) -> CtaParts:
        """Per-instruction tiles, auto partitions, warp offsets and read bytes of a ctaLayout."""
        g = self.problem.gemm
        bits = tile_bits(g.block_mn, g.tile_shape)
        if len(cta.warp) + len(cta.register) == sum(bits):
            tiles = _tiles(cta)
            wmma = None
        else:  # a hand-made one: Triton adds the missing repeats
            wmma = g.wmma(cta.warp, cta.register)
            tiles = instruction_tiles(wmma, g.block_mn)
        autos = []
        for op in (0, 1):
            try:
                autos.append(auto_partition(g, tiles, op, self.pairs, self.rounds))
            except LayoutError:
                autos.append(None)
        rows, cols = g.tile_shape
        own = tiles[0]  # instruction 0: each warp's own offset (register part 0)
        zero = np.zeros_like(own[:, 0])
        offsets = (
            np.stack([own[:, 0] * rows, zero], axis=-1),
            np.stack([zero, own[:, 1] * cols], axis=-1),
        )
        # bytes each warp reads: its distinct bands of each operand, all of K
        m, n, k = g.block
        reads = [
            np.array([len(set(tiles[:, w, op].tolist())) for w in range(tiles.shape[1])])
            * g.tile_shape[op]
            * k
            * g.elem_bytes
            for op in (0, 1)
        ]
        per_pair = np.zeros(self.pairs.max() + 1, dtype=np.int64)
        for op in (0, 1):
            np.add.at(per_pair, self.pairs, reads[op])
        totals = (int(reads[0].sum()), int(reads[1].sum()))
        return CtaParts(cta, g, wmma, autos, offsets, reads, int(per_pair.max()), totals)

    def shared_of(self, op: int, choice: SharedChoice, auto) -> Any | None:
        g = self.problem.gemm
        if choice.partitioned and auto is None:
            return None
        spec = dict(choice.spec) if isinstance(choice.spec, dict) else choice.spec
        try:
            shared, _ = build_shared(spec, g.operand_shape(op), g.order(op), lambda: auto)
        except LayoutError:
            return None
        return shared

    def choice_part(self, op: int, index: int, choice: SharedChoice, auto) -> ChoicePart:
        """Choice ``index`` of operand ``op`` built (``auto``: the ctaLayout's derived
        partition parameters, which only a ``partitioned: auto`` choice depends on); cached,
        so that equal parts of different ctaLayouts are one object."""
        key = (op, index, auto if choice.partitioned else None)
        got = self._choices.get(key)
        if got is None:
            shared = self.shared_of(op, choice, auto)
            bufs = self.buffers(op, shared) if shared is not None else None
            first = None
            if shared is not None and not isinstance(shared, PartitionedSharedLayout):
                g = self.problem.gemm
                first = shared.alloc_bytes(g.operand_shape(op), g.elem_bytes)
            got = self._choices[key] = ChoicePart(choice, shared, bufs, first)
        return got

    def allocation_of(self, a: ChoicePart, b: ChoicePart) -> Allocation | AllocationError:
        """:meth:`allocation` of two built choices (cached by identity)."""
        key = (id(a), id(b))
        got = self._pair_allocs.get(key)
        if got is None:
            got = self._pair_allocs[key] = self.allocation(a.buffers, b.buffers)
        return got

    def unsplit(self, a: ChoicePart, b: ChoicePart, alloc: Allocation) -> list[tuple[int, int]]:
        """(operand, physical partition) of each unpartitioned operand whose first buffer lies
        in one partition (cached by identity)."""
        key = (id(a), id(b))
        got = self._unsplit.get(key)
        if got is None:
            got, size = [], self.hw.partitions.size
            for op, part in enumerate((a, b)):
                if part.first is None:  # partitioned
                    continue
                start = alloc.offsets_of(OPERANDS[op].upper())[0]
                if start // size == (start + part.first - 1) // size:
                    got.append((op, start // size))
            self._unsplit[key] = got
        return got

    def element_addresses(self, op: int, shared) -> np.ndarray:
        """Sentinel address of every element of operand ``op`` in ``shared`` (cached)."""
        key = (op, shared)
        got = self._addrs.get(key)
        if got is None:
            got = self._addrs[key] = plan_addresses(self.problem.gemm, op, shared)
        return got

    def plan(self, op: int, cta: CtaLayout, parts: CtaParts, shared, allow_tr: bool):
        """The operand's :class:`OperandPlan` (cached), or the LayoutError lowering raised."""
        axis = 0 if op == 0 else 1
        # Triton's lowering orders the instructions (and, for ds_load_tr, picks each lane's row)
        # from cvt, warp bases included, so a plan is kept per register bases and warp
        # projection of the operand (tests/test_search.py checks the gathers against lower()).
        reg_key = tuple(b[axis] for b in cta.register if b[axis])
        warp_key = tuple(b[axis] for b in cta.warp)
        key = (op, reg_key, warp_key, shared, allow_tr)
        plan = self._plans.get(key)
        if plan is None:
            try:
                dst = self.dst(op, parts, reg_key, warp_key)
                addr = self.element_addresses(op, shared)
                plan = make_plan(self.problem.gemm, parts.wmma, op, shared, allow_tr, dst, addr)
                plan = _in_spelling(plan, self.hw)
            except LayoutError as err:
                plan = err
            self._plans[key] = plan
        return plan

    def prepare(self, requests: list[tuple[int, CtaLayout, CtaParts, Any, bool]]) -> None:
        """Compute the statics of ``requests`` (``operand``'s arguments) not cached yet, all in
        one pass table."""
        todo: dict[Any, tuple] = {}
        for op, cta, parts, shared, allow_tr in requests:
            plan = self.plan(op, cta, parts, shared, allow_tr)
            if isinstance(plan, LayoutError):
                continue
            key = (id(plan), parts.offsets[op].tobytes())
            if key not in self._statics and key not in todo:
                todo[key] = (plan, shared, parts.offsets[op], self.pieces(op, shared))
        if todo:
            made = operand_statics(list(todo.values()), self.hw, self.pairs)
            self._statics.update(zip(todo, made, strict=True))

    def operand(
        self, op: int, cta: CtaLayout, parts: CtaParts, shared, allow_tr: bool
    ) -> OperandStatic | None:
        """The operand's static (None if it cannot be lowered); cached."""
        plan = self.plan(op, cta, parts, shared, allow_tr)
        if isinstance(plan, LayoutError):
            return None
        key = (id(plan), parts.offsets[op].tobytes())
        if key not in self._statics:
            self.prepare([(op, cta, parts, shared, allow_tr)])
        return self._statics[key]

    def dst(self, op: int, parts: CtaParts, reg_key, warp_key):
        """The operand's destination linear layout (cached per register and warp bases)."""
        k = (op, reg_key, warp_key)
        if k not in self._dsts:
            g = self.problem.gemm
            self._dsts[k] = g.dot_operand(parts.wmma, op).to_linear_layout(
                list(g.operand_shape(op))
            )
        return self._dsts[k]

    def pieces(self, op: int, shared) -> Any:
        """The TDM pieces of operand ``op`` in ``shared`` (cached)."""
        key = (op, shared)
        if key not in self._pieces:
            g = self.problem.gemm
            self._pieces[key] = piece_info(
                shared,
                g.operand_shape(op),
                g.contiguous_dim(op),
                g.elem_bytes,
                g.num_warps,
                self.problem.cacheline_bytes,
            )
        return self._pieces[key]

    def buffers(self, op: int, shared) -> tuple:
        """The local_alloc buffers of an operand with ``stages`` buffers: ``[stages, *shape]``."""
        g, p = self.problem.gemm, self.problem
        return tensor_buffers(
            OPERANDS[op].upper(), shared, (p.stages, *g.operand_shape(op)), g.elem_bytes
        )

    def allocation(self, buffers_a: tuple, buffers_b: tuple) -> Allocation | AllocationError:
        key = (buffers_a, buffers_b)
        if key not in self._allocs:
            buffers = [*buffers_a, *buffers_b]
            try:
                self._allocs[key] = allocate(
                    buffers, partition_size=self.hw.partitions.size, capacity=None
                )
            except AllocationError as err:
                self._allocs[key] = err
        return self._allocs[key]

    def placed(
        self, static: OperandStatic, bases: np.ndarray, tag: bytes
    ) -> tuple[np.ndarray, int, np.ndarray]:
        """Per partition bank cycles, lock-step overlaps and pass masks of an operand with its
        buffers at ``bases`` (``tag``: their bytes; cached)."""
        key = (id(static), tag)
        got = self._part_sums.get(key)
        if got is None:
            masks = static.masks(bases, self.hw.partitions.size)
            bits = (masks[:, None] >> np.arange(8)[None, :]) & 1
            sums = tuple(int(x) for x in (bits * static.pass_bank[:, None]).sum(axis=0))
            got = (sums, self._overlaps(static, masks), masks)
            self._part_sums[key] = got
        return got

    def bases(self, alloc: Allocation) -> tuple[tuple[np.ndarray, bytes], ...]:
        """Each operand's buffer addresses in ``alloc`` and their bytes (cached)."""
        key = id(alloc)
        got = self._bases.get(key)
        if got is None:
            arrays = [np.asarray(alloc.offsets_of(t), dtype=np.int64) for t in ("A", "B")]
            got = self._bases[key] = tuple((a, a.tobytes()) for a in arrays)
        return got

    # -------------------------------------------------------------------------- per candidate
    def bound(self, oa: OperandStatic, ob: OperandStatic, alloc: Allocation) -> tuple:
        """A candidate's lower bound on its pass cycles (busiest pair, busiest partition) and
        its operands' placements (:meth:`placed`)."""
        (ba, ta), (bb, tb) = self.bases(alloc)
        busy = max(map(sum, zip(oa.pair_busy, ob.pair_busy, strict=True)))
        pa, pb = self.placed(oa, ba, ta), self.placed(ob, bb, tb)
        return max(busy, *map(sum, zip(pa[0], pb[0], strict=True))), pa, pb

    def candidate(
        self, cta, a: SharedChoice, b: SharedChoice, tr: bool, oa, ob, alloc, bound=None
    ) -> Candidate:
        """One candidate from its operands' statics and allocation (``bound``: :meth:`bound`
        of them, if the caller has it)."""
        lower, pa, pb = bound or self.bound(oa, ob, alloc)
        return Candidate(
            cta,
            a,
            b,
            tr,
            (oa, ob),
            alloc,
            alloc.size <= self.budget,
            lower,
            pa[1] + pb[1],
            (pa[2], pb[2]),
        )

    def reference(self, name: str, cta: CtaLayout, a: SharedChoice, b: SharedChoice) -> Candidate:
        """A hand-made candidate scored like the space's (LayoutError if it cannot be built)."""
        parts = self.cta_parts(cta)
        statics, buffers = [], []
        for op, choice in ((0, a), (1, b)):
            shared = self.shared_of(op, choice, parts.autos[op])
            if shared is None:
                raise LayoutError(f"reference {name}: {OPERANDS[op].upper()} cannot be built")
            statics.append(self.operand(op, cta, parts, shared, True))
            buffers.append(self.buffers(op, shared))
        if None in statics:
            raise LayoutError(f"reference {name}: cannot be lowered")
        alloc = self.allocation(*buffers)
        if isinstance(alloc, AllocationError):
            raise LayoutError(f"reference {name}: cannot be allocated")
        c = self.candidate(cta, a, b, True, statics[0], statics[1], alloc)
        c.extra["reference"] = name
        return c

    def _overlaps(self, o: OperandStatic, masks: np.ndarray) -> int:
        """Instructions k in which two warps of one issue round and different pairs touch a
        common partition."""
        k = o.plan.instructions
        group = (self.rounds[o.pass_warp] * k + o.pass_instr) * 2 + self.pairs[o.pass_warp]
        acc = np.zeros(int(self.rounds.max() + 1) * k * 2, dtype=np.int64)
        np.bitwise_or.at(acc, group, masks)
        acc = acc.reshape(-1, 2)
        return int(((acc[:, 0] & acc[:, 1]) != 0).sum())


def _in_spelling(plan: OperandPlan, hw: HardwareConfig) -> OperandPlan:
    """``plan`` with the target's name of its instruction (gfx9: ``ds_read_b128`` for
    gfx1250's ``ds_load_b128``; `wgpsim.trace.spelling`), or a LayoutError if it has none."""
    name = respelled(plan.instruction, hw.instructions)
    if name is None:
        raise LayoutError(f"{hw.describe()} has no twin of {plan.instruction}")
    return plan if name == plan.instruction else replace(plan, instruction=name)


def _pre_bound(scorer: Scorer, parts: CtaParts, ops, alloc: Allocation) -> int:
    """A lower bound on a candidate's pass cycles from the ctaLayout and the allocation alone:
    a pass moves at most one port's bytes, so a pair needs at least its warps' read bytes /
    port bytes cycles; and an unpartitioned operand whose first buffer lies in one physical
    partition puts every pass of every warp on that partition."""
    port = scorer.hw.ports.bytes_per_cycle
    bound = -(-parts.pair_bytes // port)
    per_part: dict[int, int] = {}
    for op, q in scorer.unsplit(*ops, alloc):
        per_part[q] = per_part.get(q, 0) + parts.total_bytes[op]
    if per_part:
        bound = max(bound, -(-max(per_part.values()) // port))
    return int(bound)


class ChoicePart(NamedTuple):
    """One shared-layout choice of an operand built for a ctaLayout: the encoding (None if it
    cannot be built), its buffers, and for an unpartitioned one its first buffer's bytes."""

    choice: SharedChoice
    shared: Any
    buffers: tuple | None
    first: int | None


@dataclass
class Counts:
    points: int = 0
    invalid: int = 0
    pruned: int = 0


def score_cta(scorer, parts, choices, problem, prune, best, fixed, counts) -> list[Candidate]:
    """The candidates of one ctaLayout that fit and that no bound rules out (before lowering:
    :func:`_pre_bound`; after: :meth:`Scorer.bound`), scored; the rest counted."""
    cta, trs = parts.cta, problem.b_transposed_loads
    ops = [
        [scorer.choice_part(op, i, ch, parts.autos[op]) for i, ch in enumerate(choices[op])]
        for op in (0, 1)
    ]
    limit = best - fixed if prune and best is not None else None
    statics: dict[Any, OperandStatic | None] = {}

    def static(op, i, tr):
        key = (op, i, tr)
        if key not in statics:
            statics[key] = scorer.operand(op, cta, parts, ops[op][i].shared, tr)
        return statics[key]

    passing = []
    for i, a in enumerate(ops[0]):
        for j, b in enumerate(ops[1]):
            alloc = None if a.shared is None or b.shared is None else scorer.allocation_of(a, b)
            if alloc is None or isinstance(alloc, AllocationError):
                counts.invalid += len(trs)
            elif limit is not None and _pre_bound(scorer, parts, (a, b), alloc) > limit:
                counts.pruned += len(trs)
            else:
                passing.append((i, j, alloc))
    needed = {(0, i, True) for i, _, _ in passing}
    needed |= {(1, j, tr) for _, j, _ in passing for tr in trs}
    scorer.prepare([(op, cta, parts, ops[op][i].shared, tr) for op, i, tr in sorted(needed)])
    out = []
    for i, j, alloc in passing:
        for tr in trs:
            oa, ob = static(0, i, True), static(1, j, tr)
            if oa is None or ob is None:
                counts.invalid += 1
                continue
            bound = scorer.bound(oa, ob, alloc)
            if alloc.size > scorer.budget or (limit is not None and bound[0] > limit):
                counts.pruned += 1  # never simulated: it does not fit, or cannot be first
                continue
            a, b = ops[0][i], ops[1][j]
            out.append(scorer.candidate(cta, a.choice, b.choice, tr, oa, ob, alloc, bound))
    return out


__all__ = ["ChoicePart", "Counts", "CtaParts", "Scorer", "score_cta"]
