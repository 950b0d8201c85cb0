"""``wgpsim kernel``'s loop timing section: the kernel's main loop timed warps and all.

``--loop-timing`` prints it; ``--timeline out.json`` (a Chrome trace Perfetto opens: a process
per warp and one of the ports, 1 ns = 1 cycle), ``--timeline-png out.png`` and ``--iterations N``
imply it; ``--loop LABEL`` picks the loop (default: the one with the most ``ds_*``). The section leads with the sentence of
``wgpsim.kernel.loop.timing`` and holds the per-warp, per-op and what-if tables.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from wgpsim.cli._common import text_table
from wgpsim.errors import ConfigError


def add_loop_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("loop timing (the kernel's main loop, every warp)")
    group.add_argument("--loop-timing", action="store_true", help="time the kernel's main loop")
    group.add_argument("--loop", help="the loop's assembly label (default: the most ds_*)")
    group.add_argument(
        "--iterations", type=int, help="iterations to time (default: the trip count, else 4)"
    )
    group.add_argument(
        "--timeline", type=Path, help="write the Chrome trace JSON (Perfetto; 1 ns shown = 1 cycle)"
    )
    group.add_argument("--timeline-png", type=Path, help="write the timeline figure (PNG/SVG)")


def wants_loop(args: argparse.Namespace) -> bool:
    return bool(
        args.loop_timing
        or args.timeline is not None
        or args.timeline_png is not None
        or args.iterations is not None
        or args.loop is not None
    )


def time_loop_of(kernel, args: argparse.Namespace, hw) -> tuple[dict[str, Any], Any]:
    """Time the loop the arguments name: (JSON payload, LoopTiming)."""
    from wgpsim.kernel.figures import main_loop

    if args.iterations is not None and not 1 <= args.iterations <= 1000:
        raise ConfigError(f"--iterations {args.iterations}: valid 1..1000")
    loop_arg = args.loop
    if loop_arg is not None and loop_arg.isdigit():
        loop_arg = int(loop_arg)
    return main_loop(kernel, hw, engine=args.engine, loop=loop_arg, iterations=args.iterations)


def write_loop_files(kernel, args: argparse.Namespace, lt) -> list[str]:
    """Write the loop's timeline files asked for (``--timeline``, ``--timeline-png``)."""
    from wgpsim.cli._common import atomic_write
    from wgpsim.kernel.loop.chrome_trace import loop_chrome_trace

    written = []
    if args.timeline is not None:
        doc = loop_chrome_trace(lt, kernel=kernel.name)
        atomic_write(args.timeline, lambda tmp: Path(tmp).write_text(json.dumps(doc)))
        written.append(str(args.timeline))
    if args.timeline_png is not None:
        from wgpsim.plots.loop_timeline import loop_timeline_figure
        from wgpsim.plots.ownership import save

        written.append(str(save(loop_timeline_figure(lt), args.timeline_png)))
    return written


def format_loop(payload: dict[str, Any], lt, width: int, hw=None) -> list[str]:
    """The section's lines (tables through ``wgpsim.cli._common.text_table``); ``hw`` (the
    hardware file timed on) names the LDS wait as its assembly does and, with one LDS
    partition, drops the partition-stall column."""
    from wgpsim.kernel.loop.timing import WARP_COLUMNS
    from wgpsim.kernel.loop.timing import number_text as _f

    per = "run" if _loop_less(payload) else "iteration"
    lines = ["", _heading(payload, lt), lt.sentence(per)]
    # WARP_COLUMNS' headers, in their order
    head = ("warp", "cycles/iter", "exposed", "wait_ds", "issue", "barrier", "hidden",
            "in flight", "work", "barrier, no LDS")  # fmt: skip
    rows = [
        (str(int(r["warp"])), *(_f(r[c]) for c in WARP_COLUMNS[1:])) for r in lt.warp_table.rows()
    ]
    lines += text_table(head, rows, width)
    wait = "the LDS wait" if hw is None else hw.ds_wait("N")
    lines.append(
        f"wait_ds: cycles in {wait}; "
        "barrier: cycles at a barrier while another warp waits on LDS (exposed); "
        "barrier, no LDS: at a barrier while the others do other work"
    )
    lines.append("")
    ohead = ("op", "kind", "instr/iter", "exposed", "share%", "latency", "bank conflict",
             "partition stall")  # fmt: skip
    orows = [
        (
            str(r["op"]),
            str(r["kind"]),
            _f(r["instructions"]),
            _f(r["exposed"]),
            _f(100 * r["exposed_share"]),
            _f(r["latency"]),
            _f(r["bank_conflict_cycles"]),
            _f(r["partition_stall_cycles"]),
        )
        for r in lt.op_table.rows()
    ]
    orows += _unmatched_rows(payload["unmatched"])
    if hw is not None and hw.partitions.count == 1:  # no partition stall on this chip
        ohead, orows = ohead[:-1], [r[:-1] for r in orows]
    lines += text_table(ohead, orows, width)
    lines.append("")
    whead = ("what if", "cycles/iter", "saves", "how")
    wrows = [
        (name, _f(v["cycles_per_iteration"]), _f(v["saves"]), v["how"])
        for name, v in payload["what_ifs"].items()
    ]
    lines += text_table(whead, wrows, width)
    if "tdm" in lt.op_table["kind"]:
        lines.append("note: a tdm op's instr/iter counts its 256-byte write rows")
    lines += [f"note: {n}" for n in payload["notes"]]
    return lines


def _heading(payload: dict[str, Any], lt) -> str:
    """The section's first line: what was timed, how often, and over which iterations.

    A kernel without a loop (its body is the whole function, named after it, not an assembly
    label like ``.LBB0_2``) is timed as one run, not "1 iterations".
    """
    n, warps, source = lt.iterations, lt.num_warps, payload["source"]
    if _loop_less(payload):
        runs = "once" if n == 1 else f"{n} times in a row"
        return (
            f"kernel {payload['loop']} has no loop: its body timed {runs} x {warps} warps "
            f"({source}); figures per run"
        )
    steady = f"steady state from iteration {lt.steady_from}" if lt.steady_from else "all iterations"
    count = f"{n} iteration{'s' if n != 1 else ''}"
    return (
        f"loop {payload['loop']} ({source}): {count} x {warps} warps timed, {steady}; "
        "figures per iteration"
    )


def _loop_less(payload: dict[str, Any]) -> bool:
    """Whether the timed body is the whole function (named after it), not an assembly loop
    (a label like ``.LBB0_2``)."""
    return payload["source"] == "assembly" and not str(payload["loop"]).startswith(".")


def _unmatched_rows(unmatched: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """One loop-table row per (mnemonic, source line) of unmatched ``ds_*``: timed as one VALU
    cycle of issue, so no LDS figures (their reasons are in the notes)."""
    from wgpsim.kernel.loop.matching import Unmatched
    from wgpsim.kernel.loop.program import unmatched_label

    counts: dict[str, int] = {}
    for u in unmatched:
        label = unmatched_label(Unmatched(**u))
        counts[label] = counts.get(label, 0) + 1
    return [(label, "unmatched", str(n), "-", "-", "-", "-", "-") for label, n in counts.items()]
