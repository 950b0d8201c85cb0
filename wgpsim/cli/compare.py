"""``wgpsim compare FILE.csv``: per probe, simulated vs measured, and the error per family.

::

    wgpsim compare kit/measurements.csv --manifest kit/manifest.json
    wgpsim compare kit/measurements.csv --manifest kit/manifest.json --hw fitted.yaml \\
        --figure compare.png --json

A bad file is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from wgpsim.cli._common import (
    KIT_DEFAULT,
    add_hw_args,
    atomic_write,
    hardware_from_args,
    print_json,
)
from wgpsim.errors import ConfigError

FIGURE_FORMATS = (".png", ".svg", ".pdf")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="simulated vs measured probe spans: ratio per probe, MAPE per family",
        description="Compare measured probe spans (measurements.csv) with the model's.",
    )
    parser.add_argument(
        "measurements",
        type=Path,
        help="measurements.csv (probe, warp, cycles) or a proton intra-kernel trace (.json)",
    )
    parser.add_argument(
        "--manifest",
        type=Path,
        help="the kit's manifest.json (default: beside the measurements)",
    )
    add_hw_args(parser, KIT_DEFAULT + " for a lane-pair kit")
    parser.add_argument(
        "--counters",
        type=Path,
        metavar="CSV",
        help="rocprofv3 / rocprof-compute counters of the probe kernels, compared too",
    )
    parser.add_argument("--figure", type=Path, help="draw simulated vs measured (.png/.svg/.pdf)")
    parser.add_argument("--json", action="store_true", help="print the tables as JSON")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from wgpsim.calibration.compare import compare
    from wgpsim.calibration.measurements import read_spans
    from wgpsim.calibration.probes import TARGET, read_kit

    if args.figure is not None and args.figure.suffix not in FIGURE_FORMATS:
        raise ConfigError(
            f"--figure {args.figure}: the file must end in {', '.join(FIGURE_FORMATS)}"
        )
    manifest = args.manifest or args.measurements.parent / "manifest.json"
    target, probes = read_kit(manifest)
    if target != TARGET:
        from wgpsim.cli.calibrate import kit_hardware

        return _lanes(args, target, probes, kit_hardware(args, target))
    hw = hardware_from_args(args)
    per_probe, per_family = compare(read_spans(args.measurements), probes, hw)
    counters = None
    if args.counters is not None:
        from wgpsim.calibration.counters import compare_counters
        from wgpsim.calibration.rocprof_csv import read_counters

        counters = compare_counters(read_counters(args.counters), probes, hw)
    if args.figure is not None:
        from wgpsim.plots.calibration import compare_figure

        _save(compare_figure(per_probe), args.figure)
    if args.json:
        print_json(
            {
                "probes": per_probe.to_dict(orient="records"),
                "families": per_family.to_dict(orient="records"),
                **(
                    {"counters": counters.to_dict(orient="records")} if counters is not None else {}
                ),
            }
        )
        return 0
    fmt2 = {
        "measured": "{:.0f}",
        "simulated": "{:.0f}",
        "ratio": "{:.3f}",
        "error_percent": "{:.1f}",
    }
    shown = per_probe.copy()
    for column, pattern in fmt2.items():
        shown[column] = shown[column].map(pattern.format)
    print(f"wgpsim compare {args.measurements} on {hw.name} ({hw.source})")
    print(shown.to_string(index=False))
    print(
        f"per family, against {hw.source} (mape_percent: mean over probes of |simulated - "
        "measured| / measured, each probe's median span; `wgpsim calibrate fit` gives the "
        "error of every measurement against the fitted constants):"
    )
    print(per_family.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    if counters is not None:
        print(f"LDS counters ({args.counters}; measured = median over dispatches):")
        print(counters.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.figure is not None:
        print(f"figure: {args.figure}")
    return 0


def _lanes(args: argparse.Namespace, target: str, probes, hw) -> int:
    """A gfx942 / gfx950 lane-pair kit: per probe the measured extra conflict cycles (the
    counters' SQ_LDS_BANK_CONFLICT, or the spans without --counters) beside the model's."""
    from wgpsim.calibration.lanes import fit as lane_fit
    from wgpsim.calibration.lanes.compare import lane_compare
    from wgpsim.calibration.lanes.counters import probe_counters
    from wgpsim.calibration.lanes.traces import simulated_values
    from wgpsim.calibration.measurements import read_measurements
    from wgpsim.errors import ConfigError as _ConfigError
    from wgpsim.trace.instructions import INSTRUCTIONS

    runs = read_measurements(args.measurements)
    if args.counters is not None:
        from wgpsim.calibration.rocprof_csv import read_counters

        counters = probe_counters(read_counters(args.counters), runs, str(args.counters))
        measured = lane_fit.counter_values(counters, str(args.counters))
    else:
        measured = lane_fit.span_values(runs)
    ops = sorted({p.param("op") for p in probes if p.name in measured})
    try:
        if hw.wgp.warp_size != 64 or not set(ops) <= set(INSTRUCTIONS):
            raise _ConfigError("")
        for op in ops:
            hw.lane_masks(op)
    except _ConfigError:
        raise ConfigError(
            f"{hw.source}: cannot simulate the {target} probes' {', '.join(ops)}: a wave64 "
            "hardware file with their lane groupings is needed (--hw)"
        ) from None
    used = [p for p in probes if p.name in measured]
    per_probe, per_op = lane_compare(measured, simulated_values(used, hw), used)
    if args.figure is not None:
        from wgpsim.calibration.lanes.fit import CONFLICT
        from wgpsim.plots.calibration import lane_compare_figure

        _save(lane_compare_figure(per_probe, CONFLICT), args.figure)
    if args.json:
        print_json(
            {"probes": per_probe.to_dict(orient="records"), "ops": per_op.to_dict(orient="records")}
        )
        return 0
    print(f"wgpsim compare {args.measurements} ({target} lane pairs) on {hw.name} ({hw.source})")
    print("conflicting pairs, measured beside simulated (extra cycles per instruction >= 0.5):")
    print(per_op.to_string(index=False))
    if args.figure is not None:
        print(f"figure: {args.figure}")
    return 0


def _save(fig, path: Path) -> None:
    fmt = path.suffix[1:]
    atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=130, bbox_inches="tight"))
