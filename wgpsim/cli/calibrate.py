"""``wgpsim calibrate``: the calibration kit (docs/USAGE.md, "Calibrating against your hardware").

::

    wgpsim calibrate probes --out kit/                 # Gluon probes, run_probes.py, manifest.json
    python kit/run_probes.py                           # on the MI450: kit/measurements.csv
    wgpsim calibrate fit kit/measurements.csv --manifest kit/manifest.json --out fitted.yaml
    wgpsim calibrate predict kit/ --hw fitted.yaml --out predicted.csv

A bad file or value is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from wgpsim.cli._common import add_hw_args, atomic_write, hardware_from_args, print_json
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


def _manifest(path: Path) -> Path:
    return path / "manifest.json" if path.is_dir() else path


def handle_probes(args: argparse.Namespace) -> int:
    from wgpsim.calibration.probe_gluon import write_kit
    from wgpsim.calibration.probes import FAMILIES, catalogue

    bad = [f for f in args.family if f not in FAMILIES]
    if bad:
        raise ConfigError(f"--family {bad[0]}: unknown (valid: {', '.join(FAMILIES)})")
    probes = [p for p in catalogue() if not args.family or p.family in args.family]
    if args.out.exists() and not args.out.is_dir():
        raise ConfigError(f"--out {args.out}: exists and is not a directory")
    with staged(args.out) as stage:  # the whole kit or (a full disk) nothing new
        write_kit(stage, probes)
    print(
        f"wrote {len(probes)} probes to {args.out}/probes/, {args.out}/run_probes.py and "
        f"{args.out}/manifest.json"
    )
    print(f"on the device: python {args.out}/run_probes.py   (writes {args.out}/measurements.csv)")
    return 0


def handle_predict(args: argparse.Namespace) -> int:
    from wgpsim.calibration.fit import predict
    from wgpsim.calibration.measurements import write_measurements
    from wgpsim.calibration.probes import read_manifest

    hw = hardware_from_args(args)
    probes = read_manifest(_manifest(args.kit))
    frame = predict(probes, hw)
    atomic_write(args.out, lambda tmp: write_measurements(frame, tmp))
    print(f"wrote {len(frame)} predicted spans ({len(probes)} probes) to {args.out}")
    return 0


def handle_fit(args: argparse.Namespace) -> int:
    from wgpsim.calibration.fit import fit_constants
    from wgpsim.calibration.fitted_yaml import fitted_yaml
    from wgpsim.calibration.measurements import read_spans
    from wgpsim.calibration.probes import read_manifest
    from wgpsim.hw.config import HardwareConfig, default_hardware_path

    if args.overrides and args.out is not None:
        raise ConfigError(
            f"--set {args.overrides[0]} with --out: the fitted file is written from the --hw "
            "file's text, so put the change in that file instead"
        )
    hw = hardware_from_args(args)
    probes = read_manifest(args.manifest)
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
