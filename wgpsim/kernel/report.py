"""The LDS report of a compiled kernel, op by op: ``wgpsim kernel``'s analysis.

For every LDS op of the kernel model (`wgpsim.frontend`), keyed by its Python source line: the
instructions and their count per warp (`wgpsim.kernel.lowering`), the transposed-load
eligibility and its reason, bank conflicts in rocprof-compute's terms (`wgpsim.measures.metrics`:
``SQ_LDS_BANK_CONFLICT``, ``SQ_LDS_IDX_ACTIVE``, the Bank Conflict Rate), the physical partitions
each SIMD pair touches and whether the pairs are co-located (in some instruction, warps of
the two pairs that issue together in lock step touch a common partition), and the op's LDS cycles in
the AMD blog's lock-step model: all warps issue the op's instructions together after a barrier,
timed from a clock read to the clock read after ``s_wait_dscnt 0`` (gfx9: ``s_waitcnt
lgkmcnt(0)``; the slowest warp), with the
partition-conflict stall cycles of that run. For every buffer: offsets, bytes, partitions, live
range. For the kernel: wgpsim's LDS bytes beside ``ttg.shared`` (a difference is flagged),
instruction totals, the ops by LDS cycles, worst first, and, when the kernel's assembly is at
hand, wgpsim's instructions per source line beside the assembly's.

TDM copies (``amdg.async_tdm_copy_*``) are listed with their ``tensor_load_to_lds`` /
``tensor_store_from_lds`` count per warp (Triton's split of the pieces over the warps,
`wgpsim.microbench.pieces`) and are not timed; what is not modelled is listed, with its location.

>>> rep = kernel_report("examples/kernels/lds_bandwidth_plain")
>>> rep.lds_bytes, rep.ttg_shared
(65536, 65536)
>>> [(op["op"], op["instructions"], op["co_located"]) for op in rep.ops]
[('ttg.local_alloc', {'ds_store_b128': 32}, True), ('ttg.local_load', {'ds_load_b128': 32}, True)]
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wgpsim.errors import WgpsimError
from wgpsim.frontend.amdgcn import COUNTED
from wgpsim.frontend.amdgcn_loops import LANE_PERMUTES, stream
from wgpsim.frontend.model import Kernel, LdsOp
from wgpsim.hw.alloc_stages import footprint
from wgpsim.hw.config import HardwareConfig, load_hardware, target_hardware  # noqa: F401 (doctest)
from wgpsim.kernel.lockstep import co_located_instructions, op_trace, pair_partitions
from wgpsim.kernel.loop.matching import by_line, ops_at
from wgpsim.kernel.lowering import KernelAllocation, OpLowering, allocate_kernel, lower_op
from wgpsim.measures.metrics import lds_metrics
from wgpsim.microbench.pieces import piece_info
from wgpsim.packaged import shown_path
from wgpsim.trace.instructions import INSTRUCTIONS

__all__ = ["KernelReport", "kernel_report", "short_encoding"]

TDM = {
    "amdg.async_tdm_copy_global_to_local": "tensor_load_to_lds",
    "amdg.async_tdm_copy_local_to_global": "tensor_store_from_lds",
}


def short_encoding(text: str | None) -> str | None:
    """The short form of an encoding: an alias as written, else the kind and its fields.

    >>> short_encoding("#shared1")
    '#shared1'
    >>> short_encoding("#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 8}>")
    'dot_op(opIdx=0, parent=#mma, kWidth=8)'
    """
    if text is None or not text.startswith("#ttg."):
        return text
    body = re.sub(r"^#ttg\.(\w+)<\{?(.*?)\}?>$", r"\1(\2)", text, flags=re.S)
    return re.sub(r"\s*=\s*", "=", body)


@dataclass(frozen=True)
class KernelReport:
    """The report: ``ops``/``buffers``/``not_modelled`` are lists of plain dicts (JSON-ready)."""

    kernel: str
    warps: int
    lds_bytes: int | None
    ttg_shared: int | None
    buffers: list[dict[str, Any]]
    ops: list[dict[str, Any]]
    not_modelled: list[dict[str, Any]]
    extras: dict[str, Any] = field(default_factory=dict)
    lowerings: tuple[OpLowering, ...] = field(default=(), repr=False)
    model: Kernel | None = field(default=None, repr=False)

    def __str__(self) -> str:  # print(report): the short text, not the fields
        from wgpsim.kernel.summary import summary

        return summary(self)

    def __repr__(self) -> str:
        from wgpsim.kernel.summary import header

        return f"<KernelReport {header(self)}>"

    @property
    def lds_bytes_match(self) -> bool | None:
        if self.lds_bytes is None or self.ttg_shared is None:
            return None
        return self.lds_bytes == self.ttg_shared

    @property
    def one_partition(self) -> bool:
        """True when the hardware file simulated on has one LDS partition (gfx942, gfx950): no
        partition conflicts can happen, so the reports drop their partition columns."""
        return (self.extras.get("hardware") or {}).get("partitions") == 1

    def foreign_note(self) -> str | None:
        """The note when the kernel was compiled for another chip than the hardware file it
        was simulated on (``--hw``/``--target`` named that file), else None; the text report
        and the HTML page say it in these words.

        >>> r = KernelReport("k", 4, 0, 0, [], [], [], {"target": "hip:gfx950",
        ...     "hardware": {"name": "gfx942", "target": "hip:gfx942", "partitions": 1}})
        >>> r.foreign_note()
        "note: compiled for hip:gfx950, simulated on gfx942's hardware file (hip:gfx942, --hw/--target): its instructions and layouts are hip:gfx950's"
        >>> r.one_partition, KernelReport("k", 4, 0, 0, [], [], []).foreign_note() is None
        (True, True)
        """
        hw, compiled = self.extras.get("hardware"), self.extras.get("target")
        if not hw or not compiled or not hw["target"] or compiled == hw["target"]:
            return None
        return (
            f"note: compiled for {compiled}, simulated on {hw['name']}'s hardware file "
            f"({hw['target']}, --hw/--target): its instructions and layouts are {compiled}'s"
        )

    def worst_ops(self, n: int = 5) -> list[dict[str, Any]]:
        """The timed ops by LDS cycles, then bank-conflict cycles, worst first."""
        timed = [op for op in self.ops if op["lds_cycles"] is not None]
        key = lambda op: (-op["lds_cycles"], -op["bank_conflict_cycles"], op["index"])  # noqa: E731
        return sorted(timed, key=key)[:n]

    def instruction_totals(self) -> dict[str, int]:
        """Instruction name -> count per warp, over every op (the assembly's static count)."""
        out: dict[str, int] = {}
        for op in self.ops:
            for name, n in op["instructions"].items():
                out[name] = out.get(name, 0) + n
        return dict(sorted(out.items()))

    def to_json(self) -> dict[str, Any]:
        """The JSON of ``wgpsim kernel --json`` (issue 12's schema, plus extras)."""
        return {
            "kernel": self.kernel,
            "warps": self.warps,
            "lds_bytes": self.lds_bytes,
            "ttg_shared": self.ttg_shared,
            "buffers": self.buffers,
            "ops": self.ops,
            "not_modelled": self.not_modelled,
            "lds_bytes_match": self.lds_bytes_match,
            "instruction_totals": self.instruction_totals(),
            "worst_ops": [op["index"] for op in self.worst_ops()],
            **self.extras,
        }

    def to_frame(self):
        """One row per op (instructions as ``name:count`` joined by ``;``), for ``--csv``."""
        import pandas as pd

        rows = []
        for op in self.ops:
            row = {k: v for k, v in op.items() if not isinstance(v, dict | list | tuple)}
            row["instructions"] = ";".join(f"{k}:{v}" for k, v in op["instructions"].items())
            for pair, parts in op["pair_partitions"].items():
                row[f"partitions_{pair}"] = "-".join(map(str, parts))
            rows.append(row)
        return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ building it
def _tdm_count(op: LdsOp, warps: int) -> int:
    md = op.memdesc
    if md is None or md.encoding is None:
        return 1
    try:
        info = piece_info(md.encoding, md.shape, len(md.shape) - 1, md.elem_bits // 8, warps, 128)
    except WgpsimError:  # a layout piece_info cannot split: one instruction
        return 1
    return info.tdm_instructions_triton


def _trace_key(trace) -> tuple:
    """A trace's contents as a dict key (two ops with equal traces have equal runs)."""
    columns = (trace.warp, trace.op, trace.arg, trace.addr)
    return (trace.num_warps, trace.labels, *(c.tobytes() for c in columns))


def _timing(low: OpLowering, hw: HardwareConfig, engine: str, runs: dict) -> dict[str, Any]:
    """The op's lock-step figures; its run is shared with every earlier op of an equal trace
    (``runs``: a loop's prologue and body ops are often the same accesses)."""
    from wgpsim.engine import simulate

    trace = op_trace(low.lowering)
    key = _trace_key(trace)
    if key not in runs:
        runs[key] = simulate(trace, hw, engine=engine)
    result = runs[key]
    metrics = lds_metrics(result)
    parts = pair_partitions(low.lowering, hw)
    shared = co_located_instructions(low.lowering, hw)
    return {
        "bank_conflict_cycles": metrics.bank_conflict,
        "SQ_LDS_BANK_CONFLICT": metrics.bank_conflict,
        "SQ_LDS_IDX_ACTIVE": metrics.idx_active,
        "bank_conflict_rate": metrics.bank_conflict_rate,
        "conflicts_per_access": metrics.conflicts_per_access,
        "partition_stall_cycles": metrics.partition_conflict_cycles,
        "lds_cycles": result.measurement(),
        "pair_partitions": {k: list(v) for k, v in parts.items()},
        "co_located": shared > 0,
        "co_located_instructions": shared,
    }


REPORT_PASSES_PER_OP_PASS = 2
"""What a report simulates per pass of its ops' distinct traces, counting the layout
suggestions' candidates free of bank conflicts (the others are dropped unrun): the attention
example simulates 7,424 passes of distinct ops and 4,608 of candidates."""


def engine_for(lowerings: tuple[OpLowering, ...], hw: HardwareConfig, engine: str) -> str:
    """``auto`` decided once for the whole report (``auto.upfront``): ``fast`` when it costs
    nothing to load (built ahead of time, or loaded) or when the report (its distinct op
    traces' passes times :data:`REPORT_PASSES_PER_OP_PASS`) would outgrow ``auto``'s des budget
    anyway (then loading the fast engine up front costs less than des's share first), else
    ``engine``; any engine asked for by name is kept. The engines agree cycle for cycle: only
    the cost changes.

    >>> engine_for((), load_hardware(), "des")  # a named engine is kept
    'des'
    """
    if engine != "auto":
        return engine
    from wgpsim.engine.auto import most_passes, upfront

    traces = {}
    for low in lowerings:
        if low.modelled:
            trace = op_trace(low.lowering)
            traces[_trace_key(trace)] = trace
    passes = sum(most_passes(trace, hw) for trace in traces.values())
    return "fast" if upfront(passes * REPORT_PASSES_PER_OP_PASS) == "fast" else engine


def engine_ran(results) -> str | None:
    """The engine that timed the ops, from their runs' ``Result.engine`` (``auto`` names the
    engine it sent each trace to): ``des`` or ``fast``; ``des+fast`` when ``auto`` moved to the
    fast engine partway; None when no op was timed.

    >>> from types import SimpleNamespace as R
    >>> engine_ran([R(engine="des"), R(engine="des")]), engine_ran([R(engine="fast"), R(engine="des")])
    ('des', 'des+fast')
    >>> engine_ran([]) is None
    True
    """
    return "+".join(sorted({r.engine for r in results})) or None


def _op_row(
    kernel: Kernel,
    low: OpLowering,
    hw: HardwareConfig,
    engine: str,
    suggestions: dict | None,
    runs: dict,
) -> dict[str, Any]:
    op = low.op
    counts = dict(low.counts)
    if op.op in TDM:
        counts = {TDM[op.op]: _tdm_count(op, kernel.num_warps)}
    row: dict[str, Any] = {
        "index": op.index,
        "op": op.op,
        "name": op.name,
        "loc": op.loc.short if op.loc else None,
        "line": op.loc.line if op.loc else None,
        "function": op.function,
        "loop_depth": len(op.loops),
        "buffer": op.buffer,
        "shape": op.memdesc.shape_text if op.memdesc else (op.tensor and op.tensor.shape_text),
        "src": short_encoding(op.src_encoding),
        "dst": short_encoding(op.dst_encoding),
        "instructions": counts,
        "instructions_per_warp": sum(counts.values()),
        # per instruction, where its lane grouping comes from (hw passes.sources)
        "grouping_sources": {k: hw.grouping_source(k) for k in counts if k in INSTRUCTIONS},
        "transposed": bool(low.instruction and "_tr" in low.instruction),
        "eligibility": low.eligibility,
        "reason": low.reason,
        "bases": list(low.bases) if low.bases else None,
        "modelled": low.modelled,
        "note": low.note,
        "bank_conflict_cycles": None,
        "SQ_LDS_BANK_CONFLICT": None,
        "SQ_LDS_IDX_ACTIVE": None,
        "bank_conflict_rate": None,
        "conflicts_per_access": None,
        "partition_stall_cycles": None,
        "lds_cycles": None,
        "pair_partitions": {},
        "co_located": None,
        "co_located_instructions": None,
        "suggestion": None,
    }
    if low.modelled:
        row |= _timing(low, hw, engine, runs)
        conflicted = row["bank_conflict_cycles"] or row["partition_stall_cycles"]
        stage_only = all(v[0] == "ttg.memdesc_index" for v in op.view_chain)
        if suggestions is not None and conflicted and op.op == "ttg.local_load" and stage_only:
            row["suggestion"] = _suggestion(kernel, low, hw, engine, suggestions)
    return row


def _against_assembly(kernel: Kernel, ops: list[dict[str, Any]]) -> dict[str, Any] | None:
    """wgpsim's instructions per source line beside the assembly's (None without assembly).

    Lines are the ops' (file base name, line); a line of several ops sums them. An instruction
    of inlined code counts at the innermost frame of its inlined-at chain that holds an op
    (`loop_matching.ops_at`: a ``tl.sum``'s ``ds_*`` at the caller's line). Lines LLVM
    moved (an epilogue's loads put on another line or line 0) show as differences there."""
    if not kernel.assembly:
        return None
    lines_ops = by_line(op for op in kernel.ops if op.loc is not None)
    asm: dict[tuple[str | None, int | None], Counter] = {}
    for kind, instr, _ in stream(kernel.assembly, COUNTED):
        if kind == "instr" and instr.mnemonic.startswith(COUNTED):
            key = ops_at(instr, lines_ops)[0][0]
            asm.setdefault(key, Counter())[instr.mnemonic] += 1
    mine: dict[tuple[str | None, int | None], Counter] = {}
    for op, row in zip(kernel.ops, ops, strict=True):
        if op.loc is not None and row["instructions"]:
            key = (op.loc.file.rsplit("/", 1)[-1], op.loc.line)
            mine.setdefault(key, Counter()).update(row["instructions"])
    lines = [
        {"loc": f"{f}:{n}", "wgpsim": dict(sorted(c.items())),
         "assembly": dict(sorted(asm.get((f, n), Counter()).items()))}
        for (f, n), c in sorted(mine.items(), key=lambda kv: (str(kv[0][0]), kv[0][1] or 0))
    ]  # fmt: skip
    return {
        "lines": lines,
        "matching_lines": sum(r["wgpsim"] == r["assembly"] for r in lines),
        "totals": dict(sorted(sum(asm.values(), Counter()).items())),
    }


def _suggestion(kernel: Kernel, low: OpLowering, hw: HardwareConfig, engine: str, seen: dict):
    """A layout without the op's conflicts (``wgpsim.kernel.suggest``), or None;
    computed once per distinct (shared layout, register layout, shape, element, allocation), as
    ``seen`` keeps them (a loop's prologue and body loads share one)."""
    from wgpsim.kernel.suggest import suggest_layout

    md = kernel.buffer(low.op.buffer).memdesc
    key = (md.encoding, low.op.tensor.encoding, tuple(low.op.memdesc.shape), md.elem_bits, md.shape)
    if key not in seen:
        seen[key] = suggest_layout(
            md.encoding,
            low.op.tensor.encoding,
            tuple(low.op.memdesc.shape),
            md.elem_bits,
            hw,
            engine=engine,
            alloc_shape=tuple(md.shape),
        )
    return seen[key]


def _buffer_rows(kernel: Kernel, alloc: KernelAllocation, hw: HardwareConfig) -> list[dict]:
    rows = []
    for b in kernel.buffers:
        offsets = alloc.offsets.get(b.name, b.offsets)
        sizes = alloc.sizes.get(b.name)
        parts: list[int] = []
        if offsets and sizes:
            for off, size in zip(offsets, sizes, strict=False):
                first, last = footprint(off, size, hw.partitions.size)
                parts += [p for p in range(first, last + 1) if p not in parts]
        rows.append(
            {
                "name": b.name,
                "kind": b.kind,
                "offsets": list(offsets) if offsets else [],
                "bytes": sum(sizes) if sizes else b.size,
                "piece_bytes": list(sizes) if sizes else None,
                "partitions": parts,
                "live": list(b.live),
                "shape": b.memdesc.shape_text if b.memdesc else None,
                "stages": b.stages,
                "encoding": short_encoding(b.memdesc.encoding_text) if b.memdesc else None,
                "loc": b.loc.short if b.loc else None,
                "wgpsim_offsets": list(alloc.wgpsim_offsets.get(b.name, ())) or None,
                "module_offsets": list(b.offsets) if b.offsets else None,
            }
        )
    return rows


def lane_permutes(kernel: Kernel) -> list[dict[str, Any]]:
    """The assembly's lane permutes (``ds_bpermute_b32`` ...: Triton's warp shuffles in scan,
    reduce, gather and a convert_layout within a warp), one ``not_modelled`` entry per mnemonic and TTGIR op: they go through
    the LDS crossbar without an LDS memory access, so wgpsim times them as issue cycles, not
    as LDS traffic. The op is the one the loop matching would find on the instruction's
    inlined-at chain (`loop_matching.ops_at`), else the instruction's own line."""
    if not kernel.assembly or not any(m in kernel.assembly for m in LANE_PERMUTES):
        return []  # no permute mnemonic anywhere in the text: no listing to read
    lines = by_line(op for op in kernel.ops if op.loc is not None)
    found: dict[tuple, int] = {}
    for kind, instr, _ in stream(kernel.assembly, COUNTED):
        if kind == "instr" and instr.kind == "permute":
            ops = ops_at(instr, lines)[1]
            op = ops[0] if ops else None
            where = (instr.mnemonic, op.loc.short if op else instr.chain, op.name if op else None)
            found[where] = found.get(where, 0) + 1
    return [
        {
            "op": mnemonic,
            "loc": loc,
            "name": name,
            "reason": f"{n} lane permute(s) through the LDS crossbar (a warp shuffle"
            + (f" of {name}" if name else "")
            + "): no LDS memory access, timed as issue cycles, not as LDS traffic",
        }
        for (mnemonic, loc, name), n in found.items()
    ]


def kernel_report(
    source: Kernel | str | Path,
    hw: HardwareConfig | None = None,
    *,
    engine: str = "auto",
    name: str | None = None,
    suggest: bool = True,
) -> KernelReport:
    """The report of a kernel model, or of a path `wgpsim.frontend.sources.read_kernel` reads
    (``suggest``: search a conflict-free layout for conflicted loads)."""
    if not isinstance(source, Kernel):
        from wgpsim.frontend.sources import read_kernel

        source = read_kernel(source, name)
    kernel = source
    hw = target_hardware(kernel.target) if hw is None else hw
    alloc = allocate_kernel(kernel, hw)
    lowerings = tuple(lower_op(kernel, op, alloc, hw) for op in kernel.ops)
    run_on = engine_for(lowerings, hw, engine)
    suggestions: dict | None = {} if suggest else None  # None: no layout search at all
    runs: dict = {}  # one run per distinct op trace
    ops = [_op_row(kernel, low, hw, run_on, suggestions, runs) for low in lowerings]
    not_modelled = [
        {"op": n.op, "loc": n.loc.short if n.loc else None, "name": n.name, "reason": n.reason}
        for n in kernel.not_modelled
    ]
    not_modelled += [
        {"op": op["op"], "loc": op["loc"], "name": op["name"], "reason": op["note"]}
        for op in ops
        if not op["modelled"]
    ]
    not_modelled += lane_permutes(kernel)
    meta = dict(kernel.metadata)
    extras = {
        "assembly": _against_assembly(kernel, ops),
        "target": kernel.target,
        "source": kernel.source,
        "offsets_from": alloc.source,
        "ttg_shared_from": meta.get("ttg_shared_from"),
        "allocation_notes": list(alloc.notes),
        "engine": engine_ran(runs.values()),
        "model": "lock step: all warps issue the op together after a barrier; cycles from a "
        f"clock read to the clock read after {hw.ds_wait()}, slowest warp",
        "hardware": {
            "name": hw.name,
            "target": hw.target,
            "file": shown_path(hw.source),
            "partitions": hw.partitions.count,
        },
    }
    return KernelReport(
        kernel=kernel.name,
        warps=kernel.num_warps,
        lds_bytes=alloc.lds_bytes,
        ttg_shared=kernel.ttg_shared,
        buffers=_buffer_rows(kernel, alloc, hw),
        ops=ops,
        not_modelled=not_modelled,
        extras=extras,
        lowerings=lowerings,
        model=kernel,
    )
