"""``wgpsim calibrate``: the calibration kit (docs/USAGE.md, "Calibrating against your hardware").

::

    wgpsim calibrate probes --out kit/                 # Gluon probes, run_probes.py, manifest.json
    python kit/run_probes.py                           # on the MI450: kit/measurements.csv
    wgpsim calibrate fit kit/measurements.csv --manifest kit/manifest.json --out fitted.yaml
    wgpsim calibrate predict kit/ --hw fitted.yaml --out predicted.csv
    wgpsim calibrate probes --target gfx950 --out kit950/    # lane-pair probes, MI355X
    wgpsim calibrate lanes kit950/ --counters prof/counter_collection.csv --hw gfx950.yaml

A bad file or value is one line on stderr and exit code 2.
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
    target_arch,
)
from wgpsim.errors import ConfigError
from wgpsim.files import staged


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "calibrate",
        help="probes for a device, and a fit of the hardware constants to what it measured",
        description="The calibration kit: write probes, predict them, fit measurements.",
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    probes = sub.add_parser("probes", help="write the Gluon probes, run_probes.py, manifest.json")
    probes.add_argument("--out", type=Path, required=True, metavar="DIR", help="kit directory")
    probes.add_argument(
        "--family", action="append", default=[], help="only these families (repeatable)"
    )
    probes.add_argument(
        "--target",
        default="gfx1250",
        type=target_arch,
        metavar="NAME",
        help="mi450|gfx1250 (the default), or gfx942 / gfx950: the lane-pair probes",
    )
    probes.set_defaults(handler=handle_probes)

    predict = sub.add_parser("predict", help="what the model says each probe measures (CSV)")
    predict.add_argument("kit", type=Path, help="kit directory (or its manifest.json)")
    add_hw_args(predict)
    predict.add_argument("--out", type=Path, required=True, metavar="FILE.csv")
    predict.set_defaults(handler=handle_predict)

    fit = sub.add_parser("fit", help="fit hardware constants to measurements.csv")
    fit.add_argument(
        "measurements",
        type=Path,
        help="measurements.csv (probe, warp, cycles) or a proton intra-kernel trace (.json)",
    )
    fit.add_argument("--manifest", type=Path, required=True, help="the kit's manifest.json")
    add_hw_args(fit)
    fit.add_argument("--out", type=Path, metavar="FITTED.yaml", help="write the fitted hardware")
    fit.add_argument("--json", action="store_true", help="print the fitted constants as JSON")
    fit.set_defaults(handler=handle_fit)

    lanes = sub.add_parser(
        "lanes",
        help="the bank count, phases and conflict cycles a gfx942/gfx950 lane-pair kit implies",
    )
    lanes.add_argument("kit", type=Path, help="the kit directory (or its manifest.json)")
    lanes.add_argument(
        "--counters",
        type=Path,
        metavar="CSV",
        help="rocprofv3 / rocprof-compute counters of the run (default: fit the s_memtime spans)",
    )
    lanes.add_argument(
        "--measurements", type=Path, help="run_probes.py's CSV (default: KIT/measurements.csv)"
    )
    add_hw_args(lanes, KIT_DEFAULT)
    lanes.add_argument("--json", action="store_true", help="print the table as JSON")
    lanes.set_defaults(handler=handle_lanes)


def _manifest(path: Path) -> Path:
    return path / "manifest.json" if path.is_dir() else path


def handle_probes(args: argparse.Namespace) -> int:
    from wgpsim.calibration.probe_gluon import write_kit
    from wgpsim.calibration.probes import target_catalogue
    from wgpsim.errors import ModuleError

    try:
        families, known = target_catalogue(args.target)
    except ModuleError as err:
        raise ConfigError(f"--target: {err}") from None
    bad = [f for f in args.family if f not in families]
    if bad:
        raise ConfigError(f"--family {bad[0]}: unknown (valid: {', '.join(families)})")
    probes = [p for p in known.values() if not args.family or p.family in args.family]
    if args.out.exists() and not args.out.is_dir():
        raise ConfigError(f"--out {args.out}: exists and is not a directory")
    with staged(args.out) as stage:  # the whole kit or (a full disk) nothing new
        write_kit(stage, probes, args.target)
    kernels = len(list((args.out / "probes").glob("*.py")))
    print(
        f"wrote {len(probes)} probes ({kernels} kernels) to {args.out}/probes/, "
        f"{args.out}/run_probes.py and {args.out}/manifest.json"
    )
    print(f"on the device: python {args.out}/run_probes.py   (writes {args.out}/measurements.csv)")
    return 0


def handle_predict(args: argparse.Namespace) -> int:
    from wgpsim.calibration.fit import predict
    from wgpsim.calibration.measurements import write_measurements

    hw = hardware_from_args(args)
    probes = _mi450_kit(_manifest(args.kit), "predict")
    frame = predict(probes, hw)
    atomic_write(args.out, lambda tmp: write_measurements(frame, tmp))
    print(f"wrote {len(frame)} predicted spans ({len(probes)} probes) to {args.out}")
    return 0


def _mi450_kit(manifest: Path, verb: str):
    """The probes of an MI450 (gfx1250) kit's ``manifest``; a gfx942 / gfx950 lane-pair kit is
    refused in one line: its probes time lane pairs, not the spans ``predict``/``fit`` model.

    >>> _mi450_kit(Path("/nonexistent/manifest.json"), "fit")
    Traceback (most recent call last):
    ...
    wgpsim.errors.ModuleError: /nonexistent/manifest.json: no such manifest (write one with wgpsim calibrate probes)
    """
    from wgpsim.calibration.probes import TARGET, read_kit

    target, probes = read_kit(manifest)
    if target != TARGET:
        kit = manifest.parent
        raise ConfigError(
            f"{manifest}: a {target} lane-pair kit: calibrate {verb} is for {TARGET} kits; "
            f"read this one with wgpsim calibrate lanes {kit} (or wgpsim compare "
            f"{kit}/measurements.csv)"
        )
    return probes


def kit_hardware(args: argparse.Namespace, target: str):
    """The hardware a kit is compared with: ``--hw`` if given, else the packaged file of the
    kit's target (``wgpsim/hw/<target>.yaml``) where one ships, else the default; ``--set``
    applies to either."""
    from wgpsim.hw.config import apply_overrides, load_hardware
    from wgpsim.packaged import hardware_path

    if args.hw is None and hardware_path(target).is_file():
        return apply_overrides(load_hardware(hardware_path(target)), args.overrides)
    return hardware_from_args(args)


def handle_lanes(args: argparse.Namespace) -> int:
    from wgpsim.calibration.lanes import fit as lane_fit
    from wgpsim.calibration.lanes.counters import probe_counters
    from wgpsim.calibration.measurements import read_measurements
    from wgpsim.calibration.probes import TARGET, read_kit
    from wgpsim.calibration.rocprof_csv import read_counters

    target, probes = read_kit(_manifest(args.kit))
    if target == TARGET:
        raise ConfigError(f"{args.kit}: a {TARGET} kit: fit it with wgpsim calibrate fit")
    hw = kit_hardware(args, target)
    kit = args.kit if args.kit.is_dir() else args.kit.parent
    path = args.measurements or kit / "measurements.csv"
    if args.measurements is None and not path.is_file():
        raise ConfigError(
            f"{path}: no measurements yet: run python {kit}/run_probes.py on the {target} "
            "device first (under rocprofv3 for --counters; it writes this file)"
        )
    runs = read_measurements(path)
    if args.counters is not None:
        counters = probe_counters(read_counters(args.counters), runs, str(args.counters))
        values = lane_fit.counter_values(counters, str(args.counters))
        measure = f"SQ_LDS_BANK_CONFLICT of {args.counters}"
        issued = counters.loc[counters["counter"] == "SQ_INSTS_LDS", "value"]
        if len(issued):
            measure += (
                f" (SQ_INSTS_LDS per launch: median {issued.median():g}, the kernels issue 16)"
            )
    else:
        values, measure = lane_fit.span_values(runs), "s_memtime spans"
    table = lane_fit.compare_hardware(
        lane_fit.fit_lanes(values, probes), hw, _simulated_fits(probes, hw)
    )
    if args.json:
        print_json(table.to_dict(orient="records"))
        return 0
    print(f"wgpsim calibrate lanes: {target} kit, {measure}; beside {hw.name} ({hw.source})")
    print(table.to_string(index=False))
    return 0


def _simulated_fits(probes, hw) -> dict:
    """The constants the model's own counters for ``probes`` imply, per instruction it can
    simulate (a probe whose instruction the catalogue lacks is left out)."""
    from wgpsim.calibration.lanes import fit as lane_fit
    from wgpsim.calibration.lanes.traces import simulated_values
    from wgpsim.errors import ConfigError
    from wgpsim.trace.instructions import INSTRUCTIONS

    if hw.wgp.warp_size != 64:
        return {}
    ops = set()
    for op in {p.param("op") for p in probes} & set(INSTRUCTIONS):
        try:
            hw.lane_masks(op)
            ops.add(op)
        except ConfigError:  # the file has no grouping for it: nothing to simulate
            continue
    known = [p for p in probes if p.param("op") in ops]
    if not known:
        return {}
    return lane_fit.fit_lanes(simulated_values(known, hw), known)


def handle_fit(args: argparse.Namespace) -> int:
    from wgpsim.calibration.fit import fit_constants
    from wgpsim.calibration.fitted_yaml import fitted_yaml
    from wgpsim.calibration.measurements import read_spans
    from wgpsim.hw.config import HardwareConfig, default_hardware_path

    if args.overrides and args.out is not None:
        raise ConfigError(
            f"--set {args.overrides[0]} with --out: the fitted file is written from the --hw "
            "file's text, so put the change in that file instead"
        )
    hw = hardware_from_args(args)
    probes = _mi450_kit(args.manifest, "fit")
    measured = read_spans(args.measurements)
    fit = fit_constants(measured, probes, hw)
    if args.out is not None:
        source = args.hw if args.hw is not None else default_hardware_path()
        text = fitted_yaml(fit, Path(source).read_text())
        atomic_write(args.out, lambda tmp: Path(tmp).write_text(text))
        HardwareConfig.from_yaml(args.out)  # what we wrote reads back
    if args.json:
        print_json(fit.to_dict())
    else:
        _report(fit, args)
    return 0


def _report(fit, args: argparse.Namespace) -> None:
    print(
        f"fit of {len(fit.residuals)} measurements ({args.measurements}); sigma "
        f"{fit.sigma:.2f} cycles"
    )
    for c in fit.constants.values():
        if not c.identified and c.rss:
            others = ", ".join(f"{v} {r:.4g}" for v, r in c.rss)
            print(
                f"  {c.key}: not told apart by these probes (residual sum of squares: "
                f"{others}); left at {c.previous}"
            )
        elif not c.identified:
            print(f"  {c.key}: not identified by these probes; left at {c.previous}")
        elif c.stderr is not None:
            print(
                f"  {c.key}: {c.value:.2f} +- {c.stderr:.2f} cycles -> {c.written} "
                f"(was {c.previous}; {', '.join(c.families)})"
            )
        else:
            others = ", ".join(f"{v} {r:.4g}" for v, r in c.rss)
            print(
                f"  {c.key}: {c.written} (was {c.previous}; {', '.join(c.families)}; "
                f"residual sum of squares: {others})"
            )
    print(
        "per family, against the FITTED constants (residual = measured - fitted model; "
        "mape_percent: mean over every measurement, each warp of each run, of |residual| / "
        "measured; `wgpsim compare` gives a median per probe against a hardware file):"
    )
    print(fit.families.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    if len(fit.port_rates):
        print("port rate (bandwidth family, steady state; not a model constant, for comparison):")
        print(fit.port_rates.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    if args.out is not None:
        print(f"wrote {args.out}")
