"""``wgpsim lower``: which LDS instruction a local_load becomes on gfx1250, and why.

::

    wgpsim lower --shared '#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>' \\
        --dst '#ttg.dot_op<{opIdx = 1, parent = #ttg.amd_wmma<{version = 3, isTranspose = false,
               warpsPerCTA = [8, 1], instrShape = [16, 16, 32]}>, kWidth = 8}>' \\
        --shape 128x256 --dtype fp16 --warps 8 --simulate --plot v_operand.png

prints the decision (``ds_load_tr16_b128`` or the vectorised fallback), the reason (which basis
of ``cvt`` broke eligibility), the instructions per warp and, with ``--simulate``, the LDS cycles
of every warp from the timing engine. ``--no-transpose`` models disabling transposed loads;
``--plot`` draws the source/destination lanes of one instruction (seed, Figures 1 and 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from wgpsim.cli._common import print_json
from wgpsim.errors import ConfigError
from wgpsim.layout.notation import to_text
from wgpsim.trace.lowering import Lowering, lower


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lower",
        help="decide how a local_load lowers on gfx1250 (ds_load_tr or vector loads)",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
    )
    parser.add_argument("--shared", required=True, help="shared encoding (#ttg.* text)")
    parser.add_argument("--dst", required=True, help="destination encoding (#ttg.* text)")
    parser.add_argument("--shape", required=True, help="tensor shape, e.g. 128x256")
    parser.add_argument("--dtype", required=True, help="element type, e.g. fp16, bf16, i8, fp8")
    parser.add_argument("--warps", type=int, help="number of warps (checked against --dst)")
    parser.add_argument(
        "--base",
        default="0",
        help="LDS byte address of the buffer; comma-separated, one per partition (default 0)",
    )
    parser.add_argument(
        "--no-transpose", action="store_true", help="disable transposed loads (ds_load_tr)"
    )
    parser.add_argument("--simulate", action="store_true", help="time the load with the engine")
    parser.add_argument("--hw", type=Path, help="hardware YAML (default: configs/mi450.yaml)")
    parser.add_argument("--plot", type=Path, help="write the ownership panels (PNG or SVG)")
    parser.add_argument("--instr", type=int, default=0, help="instruction to plot (default 0)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=handle)


def _bases(text: str) -> int | list[int]:
    try:
        values = [int(v, 0) for v in text.split(",")]
    except ValueError:
        raise ConfigError(f"--base {text!r}: expected integers separated by commas") from None
    return values[0] if len(values) == 1 else values


def _simulate(low: Lowering, hw_path: Path | None) -> dict[str, Any]:
    from wgpsim.engine import simulate
    from wgpsim.hw.config import load_hardware

    result = simulate(low.trace(), load_hardware(hw_path))
    cycles = result.measurements()
    return {
        "lds_cycles_per_warp": [int(c) for c in cycles.tolist()],
        "lds_cycles_max": int(cycles.max()),
        "total_cycles": int(result.total_cycles),
        "bytes": int(result.bytes),
        "passes": int(result.passes),
        "bank_conflict_cycles": int(result.bank_conflict_cycles),
    }


def handle(args: argparse.Namespace) -> int:
    low = lower(
        args.shared,
        args.dst,
        args.shape,
        args.dtype,
        num_warps=args.warps,
        bases=_bases(args.base),
        allow_transpose=not args.no_transpose,
    )
    payload = low.to_dict()
    if args.simulate:
        payload["simulation"] = _simulate(low, args.hw)
    if args.plot is not None:
        from wgpsim.plots.ownership import save
        from wgpsim.plots.transpose import transpose_figure

        payload["plot"] = str(save(transpose_figure(low, args.instr), args.plot))
    if args.json:
        print_json(payload)
        return 0
    _print_text(low, payload, args)
    return 0


def _print_text(low: Lowering, payload: dict[str, Any], args: argparse.Namespace) -> None:
    shape = "x".join(map(str, low.shape))
    print(f"local_load tensor<{shape}x{args.dtype}>, {low.num_warps} warps")
    for name in ("shared", "dst"):
        text = getattr(args, name)
        try:
            from wgpsim.layout.notation import parse

            text = to_text(parse(text))
        except Exception:  # pragma: no cover - already parsed once by lower()
            pass
        print(f"  {name + ':':8}{text}")
    elems = f"{low.vector_elems} x {low.elem_bits}-bit per lane"
    print(f"decision: {low.instruction} ({elems}), eligibility: {low.eligibility}")
    print(f"reason:   {low.reason}")
    counts = ", ".join(f"{n} x {name}" for name, n in low.counts.items())
    print(f"per warp: {counts} ({low.num_registers} registers per lane)")
    print(f"cvt:      {payload['cvt']}")
    sim = payload.get("simulation")
    if sim:
        cyc = sim["lds_cycles_per_warp"]
        print(
            f"LDS cycles per warp: {min(cyc)}..{max(cyc)} ({sim['passes']} passes, "
            f"{sim['bytes']} B, {sim['bank_conflict_cycles']} bank-conflict cycles)"
        )
    if "plot" in payload:
        print(f"plot:     {payload['plot']}")
