"""``wgpsim kernel``: the LDS report of a compiled Triton/Gluon kernel, op by op.

::

    wgpsim kernel examples/kernels/gemm_tdm_standard            # a cache / dump directory
    wgpsim kernel $TRITON_CACHE_DIR --name matmul                # a cache or dump root
    wgpsim kernel my_gemm.py:matmul --signature ... --constexpr BLOCK_M=128   # compile first
    wgpsim kernel kernel.ttgir --json                            # a TTGIR file (or *.mlir dump)
    wgpsim kernel trace.ndjson --name matmul --csv ops.csv       # a tritonparse trace
    wgpsim kernel examples/kernels/matmul --plot lds_map.png

For every LDS op, keyed by its Python source line: the instructions per warp, transposed-load
eligibility, bank conflicts (rocprof-compute's SQ_LDS_BANK_CONFLICT / SQ_LDS_IDX_ACTIVE, rate),
the partitions each SIMD pair touches, and the op's LDS cycles in lock step with its partition
stalls; then the buffers and wgpsim's LDS bytes beside ``ttg.shared``. A module wgpsim cannot
read is one line naming ``file:line:column`` and exit code 2. A cache or dump root holding
several kernels (and no ``--name`` that picks one) prints their list (name, folder, warps, LDS
bytes, target) and exits 0 (`wgpsim.cli._kernel.kernel_source`).
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from wgpsim.cli._common import (
    MODULE_DEFAULT,
    add_engine_arg,
    add_hw_args,
    atomic_write,
    hardware_from_args,
    output_width,
    print_json,
    text_table,
)
from wgpsim.cli._kernel.compile_args import add_compile_args
from wgpsim.cli._kernel.kernel_source import kernel_source
from wgpsim.cli._kernel.loop_section import (
    add_loop_args,
    format_loop,
    time_loop_of,
    wants_loop,
    write_loop_files,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "kernel",
        help="LDS report of a compiled kernel (TTGIR, cache/dump directory, tritonparse trace)",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
    )
    parser.add_argument(
        "path",
        type=Path,
        help="*.ttgir / *.mlir, a cache entry, a TRITON_CACHE_DIR or TRITON_DUMP_DIR root, "
        "*.ndjson, or FILE.py:FUNCTION to compile",
    )
    parser.add_argument("--name", help="the kernel to read when the input holds several")
    add_engine_arg(parser)
    add_hw_args(parser, MODULE_DEFAULT)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--csv", type=Path, help="write one row per op as CSV")
    parser.add_argument("--plot", type=Path, help="write the LDS map (PNG or SVG)")
    parser.add_argument(
        "--all", action="store_true", help="every kernel of a cache root, worst first"
    )
    parser.add_argument("--html", type=Path, help="write a self-contained HTML report")
    add_loop_args(parser)
    add_compile_args(
        parser, "compiling FILE.py:FUNCTION first (as wgpsim compile does; --target: its chip)"
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from wgpsim.frontend.sources import read_kernel
    from wgpsim.kernel.report import kernel_report

    if args.all:
        from wgpsim.cli._kernel.all_section import handle_all

        return handle_all(args)
    source = kernel_source(args)
    if source is None:  # a cache or dump root of several kernels: their list was printed
        return 0
    kernel = read_kernel(*source)
    hw = hardware_from_args(args, kernel.target)
    if kernel.threads_per_warp != hw.wgp.warp_size:
        from wgpsim.errors import ConfigError
        from wgpsim.packaged import shown_path

        raise ConfigError(
            f"{kernel.name} was compiled for {kernel.target} with {kernel.threads_per_warp} "
            f"lanes per warp; {hw.name}'s hardware file ({shown_path(hw.source)}) has "
            f"{hw.wgp.warp_size}: name a wave{kernel.threads_per_warp} target with --target or "
            "--hw, or none (the kernel's own)"
        )
    # the loop timed first: when it is large enough to load the fast engine, the report runs
    # there too (des is not paid for the report first); its files are written after the report
    timed = time_loop_of(kernel, args, hw) if wants_loop(args) else None
    report = kernel_report(kernel, hw, engine=args.engine)
    written = []
    loop = None
    if timed is not None:
        loop = (*timed, write_loop_files(kernel, args, timed[1]))
        written += loop[2]
    if args.csv is not None:
        frame = report.to_frame()
        atomic_write(args.csv, lambda tmp: frame.to_csv(tmp, index=False))
        written.append(str(args.csv))
    if args.plot is not None:
        from wgpsim.plots.lds_map import lds_map_figure
        from wgpsim.plots.ownership import save

        written.append(str(save(lds_map_figure(report, hw), args.plot)))
    if args.html is not None:
        from wgpsim.html.kernel_page import write_kernel_page

        written.append(str(write_kernel_page(args.html, report, loop, hw)))
    if args.json:
        extra = {"loop_timing": loop[0]} if loop is not None else {}
        print_json(report.to_json() | extra | ({"written": written} if written else {}))
        return 0
    print(format_report(report, output_width()))
    if loop is not None:
        print("\n".join(format_loop(loop[0], loop[1], output_width(), hw)))
    for path in written:
        print(f"wrote {path}")
    return 0


def _cell(value) -> str:
    return "-" if value is None else str(value)


OFFSETS_FROM = {
    "module": "offsets are Triton's (the module's allocation.offset)",
    "wgpsim": "offsets computed by wgpsim (the module holds no allocation.offset)",
}
"""The header's words for where the buffers' offsets come from (``offsets_from``)."""

TR_WORDS = {
    "valid": "used",
    "invalid": "not possible for this layout pair (reason in --json)",
    "unsupported": "not for this element width",
    "disabled": "turned off",
    "absent": "none on this chip",
    "store": "a store",
    "scratch": "Triton's scratch (convert_layout, reduce, ...)",
}
"""What the report's ``ds_load_tr`` column values mean, as its legend line says them."""


SOURCE_MARKS = {"measured": "[m]", "document": "[d]", "assumption": "[a]"}
"""The mark after an instruction in the op table: where its lane grouping comes from."""

RATE_WORDS = (
    "bank: the op's bank-conflict cycles; rate%: 100 x bank / the cycles its passes take "
    "without a conflict (rocprof-compute's Bank Conflict Rate as documented; 300 = the op "
    "takes four times its ideal cycles; its CDNA metric files scale by 3.125, not 100)"
)
"""The legend line of the op table's ``bank`` and ``rate%`` columns (wgpsim.measures.metrics)."""


def format_report(report, width: int = 10_000) -> str:
    """The report as the terminal shows it: a header, the ops, the buffers, what is not
    modelled, and the worst ops. A table wider than ``width`` is printed as several tables of
    the columns that fit, each repeating the first (key) column; prose lines wrap at ``width``."""
    lines = [
        f"kernel {report.kernel}: {report.warps} warps, {_lds_words(report)}; "
        f"{OFFSETS_FROM.get(report.extras['offsets_from'], report.extras['offsets_from'])}",
        *_hardware_line(report),
    ]
    head = ("#", "line", "op", "name", "shape", "src -> dst", "instructions/warp", "ds_load_tr",
            "bank", "rate%", "partitions A|B", "coloc", "cycles", "stall")  # fmt: skip
    rows = [_op_row(op) for op in report.ops]
    if report.one_partition:  # no SIMD-pair partitions to show, no partition stall
        keep = [i for i, h in enumerate(head) if h not in PARTITION_COLUMNS]
        head, rows = tuple(head[i] for i in keep), [tuple(r[i] for i in keep) for r in rows]
    lines += text_table(head, rows, width)
    legend = [
        f"{k}: {v}" for k, v in TR_WORDS.items() if any(o["eligibility"] == k for o in report.ops)
    ]
    if legend:
        lines.append(f"ds_load_tr (the transposed load): {'; '.join(legend)}")
    if any(op["bank_conflict_rate"] is not None for op in report.ops):
        lines.append(RATE_WORDS)
    from wgpsim.hw.grouping_sources import marks_legend  # wgpsim.hw is heavy: not for --help

    marks = marks_legend(report.ops)
    if marks:
        lines.append(marks)
    lines += [line for op in report.ops for line in _suggestion(op)]
    lines.append("")
    bhead = ("buffer", "shape", "encoding", "offsets", "bytes", "partitions", "live")
    lines += text_table(bhead, [_buffer_row(b) for b in report.buffers], width)
    lines += [f"allocation note: {n}" for n in report.extras.get("allocation_notes", ())]
    lines += _summary(report)
    return "\n".join(_wrap(line, width) for line in lines)


def _lds_words(report) -> str:
    """wgpsim's LDS bytes beside ``ttg.shared``, each said plainly when it is not known.

    >>> from types import SimpleNamespace as R
    >>> _lds_words(R(lds_bytes=512, ttg_shared=None, lds_bytes_match=None))
    'LDS 512 B (wgpsim); ttg.shared: not in the module'
    >>> _lds_words(R(lds_bytes=None, ttg_shared=512, lds_bytes_match=None))
    'LDS not sized (wgpsim: see the allocation notes) vs ttg.shared 512 B'
    """
    mine = "LDS not sized (wgpsim: see the allocation notes)"
    if report.lds_bytes is not None:
        mine = f"LDS {report.lds_bytes} B (wgpsim)"
    if report.ttg_shared is None:
        return f"{mine}; ttg.shared: not in the module"
    flag = ""
    if report.lds_bytes_match is False:
        flag = f"  << differs from ttg.shared by {report.lds_bytes - report.ttg_shared:+d} B"
    return f"{mine} vs ttg.shared {report.ttg_shared} B{flag}"


PARTITION_COLUMNS = ("partitions A|B", "coloc", "stall")
"""The op table's columns of the LDS partitions, hidden on a chip with one partition."""


def _hardware_line(report) -> list[str]:
    """The header's line naming the hardware file the report was simulated on, and a note
    when the kernel was compiled for another chip (``--hw``/``--target`` named this one)."""
    hw = report.extras.get("hardware")
    if not hw:
        return []
    one = "; one LDS partition: no SIMD-pair partition columns" if report.one_partition else ""
    note = report.foreign_note()
    return [
        f"hardware: {hw['name']} ({hw['target']}), {hw['file']}{one}",
        *([note] if note else []),
    ]


def _op_row(op: dict) -> tuple[str, ...]:
    """One op's row of the report's table."""
    from wgpsim.hw.grouping_sources import instructions_text

    pairs = "|".join("-".join(map(str, p)) for p in op["pair_partitions"].values()) or "-"
    rate = op["bank_conflict_rate"]
    return (
        str(op["index"]),
        _cell(op["loc"]),
        op["op"].split(".", 1)[1],
        _cell(op["name"]),
        _cell(op["shape"]),
        f"{_cell(op['src'])} -> {_cell(op['dst'])}",
        instructions_text(op),
        _cell(op["eligibility"]),
        _cell(op["bank_conflict_cycles"]),
        "-" if rate is None else f"{rate:.1f}",
        pairs,
        {None: "-", True: "yes", False: "no"}[op["co_located"]],
        _cell(op["lds_cycles"]),
        _cell(op["partition_stall_cycles"]),
    )


def _suggestion(op: dict) -> list[str]:
    """The line of an op's suggested layout (or why there is none), if it has one."""
    sug = op.get("suggestion")
    if not sug:
        return []
    if sug["layout"] is None:
        return [f"suggestion for #{op['index']} {_cell(op['loc'])}: {sug['reason']}"]
    return [
        f"suggestion for #{op['index']} {_cell(op['loc'])} ({op['bank_conflict_cycles']} "
        f"bank-conflict, {op['partition_stall_cycles']} partition-stall cycles, "
        f"{op['lds_cycles']} cycles): {sug['layout']} -> {sug['lds_cycles']} cycles, "
        f"no conflicts (simulated; Gluon: {sug['gluon']})"
    ]


def _buffer_row(b: dict) -> tuple[str, ...]:
    """One buffer's row of the buffers table."""
    return (
        b["name"],
        _cell(b["shape"]),
        _cell(b["encoding"]),
        ",".join(map(str, b["offsets"])) or "-",
        _cell(b["bytes"]),
        ",".join(map(str, b["partitions"])) or "-",
        f"[{b['live'][0]}, {b['live'][1]})",
    )


def _summary(report) -> list[str]:
    """The lines under the tables: instruction totals, the worst ops, the assembly check and
    what is not modelled."""
    totals = ", ".join(f"{n} x {k}" for k, n in report.instruction_totals().items())
    lines = [f"\ninstructions per warp, all ops: {totals or 'none'}"]
    worst = report.worst_ops(3)
    one = report.one_partition
    stall = lambda op: "" if one else f"{op['partition_stall_cycles']} partition stall, "  # noqa: E731
    if worst:
        lines.append(
            "worst ops (LDS cycles in lock step): "
            + "; ".join(
                f"#{op['index']} {op['name'] or op['op'].split('.', 1)[1]} ({op['loc']})"
                f" {op['lds_cycles']} cycles"
                f" ({stall(op)}{op['bank_conflict_cycles']} bank conflict)"
                for op in worst
            )
        )
    asm = report.extras.get("assembly")
    if asm and asm["lines"]:
        differ = [r for r in asm["lines"] if r["wgpsim"] != r["assembly"]]
        text = (
            f"assembly: wgpsim's instructions equal the assembly's on {asm['matching_lines']} "
            f"of {len(asm['lines'])} source lines"
        )
        if differ:
            r = differ[0]
            text += f" (differs at {r['loc']}: assembly {r['assembly'] or 'none'})"
        same = report.instruction_totals() == asm["totals"]
        text += "; totals equal" if same else "; totals differ"
        if differ and same:
            text += (
                " (not a defect: LLVM's line table attributes some instructions to another "
                "op's source line, e.g. both operands' loads to one line; the totals agree)"
            )
        lines.append(text)
    lines += [
        f"not modelled: {n['op']} at {_cell(n['loc'])}: {n['reason']}" for n in report.not_modelled
    ]
    return lines


def _wrap(line: str, width: int) -> str:
    return line if len(line) <= width else textwrap.fill(line, width, subsequent_indent="    ")
