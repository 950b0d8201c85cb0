#!/usr/bin/env python3
"""Run wgpsim's calibration probes on an AMD GPU and write ``measurements.csv``: the MI450
(gfx1250) kit, or the lane-pair kit of an MI300X/MI325X (gfx942) or MI350X/MI355X (gfx950).

``wgpsim calibrate probes --out DIR`` copies this file to ``DIR/run_probes.py``, beside
``DIR/manifest.json`` and one Gluon kernel per probe in ``DIR/probes/``. On a machine with the
device, PyTorch for ROCm and Triton 3.9::

    python DIR/run_probes.py                      # every probe, 5 timed runs each
    python DIR/run_probes.py --repeats 20 --probe banks_s256 --probe banks_s4
    python DIR/run_probes.py --list               # what would run (no GPU needed)

Each probe's ``kernel(out, cycles, *args)`` runs on one workgroup; warp w stores the clock span
it measured (``s_get_shader_cycles_u64`` / ``s_memtime``, end minus start) at ``cycles[w]``. A
kernel module that names ``ARGS`` (the lane-pair kernels: one kernel per instruction) gets those
parameters of the probe's record, and the probe's ``kernel`` parameter names its file. The CSV
gets one row per warp per timed run: ``probe,warp,cycles,repeat,kernel,launch``, ``launch``
counting every launch of that kernel in this run, warm-ups included, from 0: the k-th dispatch
of the kernel a profiler records. The first ``--warmup`` runs of each probe (compilation, cold
caches) are not written. Under a profiler (the lane-pair kit)::

    rocprofv3 --pmc SQ_INSTS_LDS SQ_LDS_IDX_ACTIVE SQ_LDS_BANK_CONFLICT \\
        --kernel-include-regex '^lds_ds_' --output-format csv -d DIR/prof -- \\
        python DIR/run_probes.py --warmup 0 --repeats 1

Then, on any machine with wgpsim: a gfx942 / gfx950 lane-pair kit is read by ``calibrate lanes``
(and ``compare``); ``calibrate fit`` is for an MI450 (gfx1250) kit only::

    wgpsim calibrate lanes DIR --counters DIR/prof/.../*_counter_collection.csv   # gfx942/gfx950
    wgpsim calibrate fit DIR/measurements.csv --manifest DIR/manifest.json --out fitted.yaml  # MI450

This file needs only the standard library until it launches (then torch and triton: without
them it says in one line what to install, exit code 2); wgpsim is not needed on the device.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import sys
from pathlib import Path

COLUMNS = ("probe", "warp", "cycles", "repeat", "kernel", "launch")
"""The columns of ``measurements.csv`` (wgpsim reads ``probe``, ``warp``, ``cycles``; the
counter readers ``kernel`` and ``launch``)."""

TARGET = "gfx1250"
"""The architecture of a manifest that names none (the MI450 kit)."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(
        description="Run wgpsim's LDS calibration probes on the kit's AMD GPU.",
    )
    parser.add_argument("--dir", type=Path, default=here, help="the kit (default: beside me)")
    parser.add_argument(
        "--out", type=Path, default=None, help="CSV to write (default: DIR/measurements.csv)"
    )
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per probe (5)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs first (2)")
    parser.add_argument(
        "--probe", action="append", default=[], metavar="NAME", help="run only NAME (repeatable)"
    )
    parser.add_argument("--device", type=int, default=0, help="GPU index (0)")
    parser.add_argument("--list", action="store_true", help="list the probes and exit")
    parser.add_argument(
        "--force", action="store_true", help="run even if the device is not the kit's target"
    )
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.warmup < 0:
        parser.error("--repeats must be >= 1 and --warmup >= 0")
    return args


def _manifest(directory: Path) -> dict:
    path = directory / "manifest.json"
    if not path.is_file():
        raise SystemExit(f"run_probes: {path}: no manifest (run wgpsim calibrate probes --out DIR)")
    return json.loads(path.read_text())


def read_manifest(directory: Path) -> list[dict]:
    """The probe records of ``directory/manifest.json``, in order."""
    return list(_manifest(directory)["probes"])


def read_target(directory: Path) -> str:
    """The architecture ``directory/manifest.json`` is written for (gfx1250 if it names none)."""
    return str(_manifest(directory).get("target", TARGET))


def selected(records: list[dict], names: list[str]) -> list[dict]:
    """The records named in ``names`` (all when empty); an unknown name stops the run."""
    if not names:
        return records
    known = {r["name"]: r for r in records}
    missing = [n for n in names if n not in known]
    if missing:
        raise SystemExit(f"run_probes: unknown probe {missing[0]!r} (see --list)")
    return [known[n] for n in names]


def load_probe(directory: Path, name: str):
    """Import ``directory/probes/NAME.py`` (needs triton)."""
    path = directory / "probes" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"wgpsim_probe_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_probe(module, record: dict, torch, device, counts: dict, args) -> list[tuple]:
    """``warmup + repeats`` launches of one probe; rows (probe, warp, cycles, repeat, kernel,
    launch). ``counts`` holds the launches of each kernel so far (updated)."""
    out = torch.zeros(module.OUT_ELEMS, dtype=getattr(torch, module.OUT_DTYPE), device=device)
    cycles = torch.zeros(module.NUM_WARPS, dtype=torch.int64, device=device)
    extra = [record["params"][key] for key in getattr(module, "ARGS", ())]
    rows = []
    for run in range(args.warmup + args.repeats):
        cycles.fill_(-1)
        module.kernel[(1,)](out, cycles, *extra, num_warps=module.NUM_WARPS)
        torch.cuda.synchronize(device)
        launch = counts.get(module.NAME, 0)
        counts[module.NAME] = launch + 1
        if run < args.warmup:
            continue
        spans = cycles.cpu().tolist()
        if any(span < 0 for span in spans):
            raise SystemExit(f"run_probes: {record['name']}: a warp recorded no span ({spans})")
        repeat = run - args.warmup
        rows += [
            (record["name"], warp, span, repeat, module.NAME, launch)
            for warp, span in enumerate(spans)
        ]
    return rows


INSTALL = (
    "PyTorch built for ROCm (pip install torch --index-url "
    "https://download.pytorch.org/whl/rocmX.Y, X.Y your ROCm) and Triton 3.9 (pip install "
    "triton==3.9.0)"
)
"""What the launch needs beyond the standard library, as the one-line message says it."""


def device_modules():
    """``torch``, once torch and triton import; else None, with one line on stderr saying
    what to install (not a traceback)."""
    try:
        import torch
        import triton  # noqa: F401  (the probes' kernels are Gluon: checked before the first)
    except ImportError as err:
        print(f"run_probes: {err.name or err}: not installed; install {INSTALL}", file=sys.stderr)
        return None
    return torch


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    target = read_target(args.dir)
    records = selected(read_manifest(args.dir), args.probe)
    if args.list:
        for r in records:
            print(f"{r['name']:<36} {r['family']:<16} {r['warps']} warps  {r['params']}")
        return 0
    torch = device_modules()
    if torch is None:
        return 2
    if not torch.cuda.is_available():
        print("run_probes: no GPU visible to torch (ROCm build needed)", file=sys.stderr)
        return 2
    device = torch.device("cuda", args.device)
    arch = getattr(torch.cuda.get_device_properties(device), "gcnArchName", "?")
    if not str(arch).startswith(target) and not args.force:
        print(
            f"run_probes: device is {arch}, the probes are for {target} (--force)", file=sys.stderr
        )
        return 2
    out = args.out or args.dir / "measurements.csv"
    with open(out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        modules: dict = {}
        counts: dict = {}
        for i, record in enumerate(records):
            name = record["params"].get("kernel", record["name"])
            if name not in modules:
                modules[name] = load_probe(args.dir, name)
            rows = run_probe(modules[name], record, torch, device, counts, args)
            writer.writerows(rows)
            handle.flush()
            print(f"[{i + 1}/{len(records)}] {record['name']}: {rows[0][2]} cycles (warp 0)")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
