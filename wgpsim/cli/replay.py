"""``wgpsim replay TRACE``: simulate a trace file on the hardware model and print its simulated
counters (every number is the model's, none is measured on a device).

::

    wgpsim replay examples/traces/two_pairs_conflict.jsonl
    wgpsim replay trace.parquet --hw configs/mi450.yaml --set timing.lds_latency=40 --json
    wgpsim replay trace.jsonl --events events.csv        # the per-cycle arbiter log

A bad trace or config is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from wgpsim.cli._common import (
    add_engine_arg,
    add_hw_args,
    atomic_write,
    hardware_from_args,
    print_json,
    print_lds_metrics,
    rich_console,
)
from wgpsim.engine import check_seed, simulate
from wgpsim.errors import ConfigError
from wgpsim.extras import require

# the trace reader and the metrics are imported by the handler: `wgpsim --help` stays fast

EVENT_FORMATS = (".csv", ".parquet")
FIGURE_FORMATS = (".png", ".svg", ".pdf")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "replay",
        help="simulate a trace file (JSON Lines or Parquet) and print its counters",
        description="Simulate a trace file on the hardware model and print its counters (all "
        "simulated; start_end_cycles: the cycles between the trace's 'start' and 'end' clock "
        "reads, as the simulated clock reads them).",
    )
    parser.add_argument("trace", type=Path, help="trace file (.jsonl or .parquet)")
    add_hw_args(parser)
    add_engine_arg(parser)
    parser.add_argument("--seed", type=int, default=0, help="seed of the drift model")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--events",
        type=Path,
        metavar="FILE",
        help="write the per-cycle event log (.csv or .parquet)",
    )
    parser.add_argument(
        "--timeline",
        type=Path,
        metavar="FILE",
        help="draw the arbiter's ports and stalls per cycle (.png, .svg or .pdf)",
    )
    parser.add_argument(
        "--window",
        metavar="FIRST:LAST",
        help="cycles the timeline shows (default: all)",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from wgpsim.measures.metrics import instruction_metrics, lds_metrics
    from wgpsim.trace.io import read_trace

    if args.events is not None and args.events.suffix not in EVENT_FORMATS:
        raise ConfigError(
            f"--events {args.events}: unknown format {args.events.suffix!r} "
            f"(valid: {', '.join(EVENT_FORMATS)})"
        )
    if args.events is not None and args.events.suffix == ".parquet":
        require("pyarrow", "parquet", f"--events {args.events}")
    window = _window(args.window)
    if args.timeline is not None and args.timeline.suffix not in FIGURE_FORMATS:
        raise ConfigError(
            f"--timeline {args.timeline}: the file must end in {', '.join(FIGURE_FORMATS)}"
        )
    hw = hardware_from_args(args)
    trace = read_trace(args.trace, hw.partitions.lds_bytes)
    record = args.events is not None or args.timeline is not None
    check_seed(args.seed, "--seed")
    result = simulate(trace, hw, engine=args.engine, seed=args.seed, record_events=record)
    if args.timeline is not None:
        from wgpsim.plots.timeline import timeline_figure

        fig = timeline_figure(result.events(), ports=hw.ports.names, window=window)
        fmt = args.timeline.suffix[1:]
        atomic_write(
            args.timeline, lambda tmp: fig.savefig(tmp, format=fmt, dpi=130, bbox_inches="tight")
        )
    if args.events is not None:
        events = result.events()
        if args.events.suffix == ".csv":
            atomic_write(args.events, lambda tmp: events.to_csv(tmp, index=False))
        else:
            atomic_write(args.events, lambda tmp: events.to_parquet(tmp, index=False))
    per_instruction = instruction_metrics(trace, hw)
    if args.json:
        print_json(
            {
                "trace": str(args.trace),
                **result.to_dict(),
                "start_end_cycles": int(result.measured_cycles),
                "lds_metrics": lds_metrics(result).to_dict(),
                "per_instruction": per_instruction.to_dict(orient="records"),
            }
        )
    else:
        _print_summary(args.trace, result, per_instruction, args)
    return 0


SHOWN_AS = {"measured_cycles": "start_end_cycles (simulated clocks)"}
"""The printed names of counters whose field name says "measured" for a simulated figure
(``Result.measured_cycles``: the start->end span the simulated clocks read; ``--json`` keeps
``measured_cycles`` for old readers and adds ``start_end_cycles``)."""


def _window(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    first, sep, last = text.partition(":")
    try:
        window = (int(first), int(last))
    except ValueError:
        window = None
    if not sep or window is None or window[0] > window[1]:
        raise ConfigError(f"--window {text}: expected FIRST:LAST cycles, e.g. 0:200")
    return window


def _print_summary(trace_path: Path, result, per_instruction, args: argparse.Namespace) -> None:
    from rich.table import Table

    table = Table(show_header=True)
    table.add_column("counter")
    table.add_column("value", justify="right")
    for key, value in result.summary().items():
        shown = f"{value:.1f}" if isinstance(value, float) else str(value)
        table.add_row(SHOWN_AS.get(key, key), shown)
    per_warp = result.measurements()
    for warp, cycles in per_warp.items():
        table.add_row(f"warp {warp} start->end", str(int(cycles)))
    console = rich_console()
    console.print(
        f"wgpsim replay {trace_path}: simulated on {result.hardware} ({result.engine} engine)",
        soft_wrap=True,
    )
    console.print(table)
    print_lds_metrics(console, result, per_instruction)
    if args.events is not None:
        console.print(f"event log: {args.events}", soft_wrap=True)
    if args.timeline is not None:
        console.print(f"timeline: {args.timeline}", soft_wrap=True)
