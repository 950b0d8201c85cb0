"""``wgpsim lower``: which LDS instruction a local_load becomes on a target (default gfx1250), and why.

::

    wgpsim lower --shared '#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>' \\
        --dst '#ttg.dot_op<{opIdx = 1, parent = #ttg.amd_wmma<{version = 3, isTranspose = false,
               ctaLayout = {warp = [[1, 0], [2, 0], [4, 0]]}, instrShape = [16, 16, 32]}>, kWidth = 8}>' \\
        --shape 128x256 --dtype fp16 --warps 8 --simulate --plot v_operand.png

prints the decision (``ds_load_tr16_b128`` or the vectorised fallback), the reason (which basis
of ``cvt`` broke eligibility), the instructions per warp and, with ``--simulate``, the LDS cycles
of every warp from the timing engine. ``--no-transpose`` models disabling transposed loads;
``--plot`` draws the source/destination lanes of one instruction (seed, Figures 1 and 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wgpsim.cli._common import (
    add_engine_arg,
    add_hw_args,
    atomic_write,
    hardware_from_args,
    print_json,
    print_metric_tables,
)
from wgpsim.errors import ConfigError
from wgpsim.layout.dtypes import dtype_bytes, parse_shape

if TYPE_CHECKING:  # the handlers import what they use: `wgpsim --help` stays fast
    from wgpsim.trace.lowering import Lowering


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "lower",
        help="decide how a local_load lowers on a target (transposed or vector loads)",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
    )
    parser.add_argument("--shared", required=True, help="shared encoding (#ttg.* text)")
    parser.add_argument("--dst", required=True, help="destination encoding (#ttg.* text)")
    parser.add_argument("--shape", required=True, help="tensor shape, e.g. 128x256")
    parser.add_argument("--dtype", required=True, help="element type, e.g. fp16, bf16, i8, fp8")
    parser.add_argument("--warps", type=int, help="number of warps (checked against --dst)")
    parser.add_argument(
        "--base",
        help="LDS byte address of the buffer; comma-separated, one per partition buffer "
        "(default: 0, or where the allocator puts the partition buffers)",
    )
    parser.add_argument(
        "--no-transpose", action="store_true", help="disable transposed loads (ds_load_tr)"
    )
    parser.add_argument(
        "--store",
        action="store_true",
        help="lower a local_store of a --dst tensor into --shared instead (ds_store_b*)",
    )
    parser.add_argument("--simulate", action="store_true", help="time the load with the engine")
    add_engine_arg(parser)  # for --simulate
    add_hw_args(parser)
    parser.add_argument("--plot", type=Path, help="write the ownership panels (PNG or SVG)")
    parser.add_argument("--instr", type=int, default=0, help="instruction to plot (default 0)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=handle)


def _bases(text: str | None, shared: Any, shape: tuple[int, ...], dtype: str, hw) -> list[int]:
    """``--base``, checked: one non-negative, aligned address per buffer, inside the LDS.
    Without it: the allocator's offsets of the buffers (0 for one buffer); a tensor that does
    not fit in the LDS is an AllocationError before anything is lowered."""
    from wgpsim.hw.alloc import allocate_on, tensor_buffers

    elem_bytes = dtype_bytes(dtype)
    buffers = tensor_buffers("local_load", shared, shape, elem_bytes)
    if text is None:
        return allocate_on(hw, buffers).offsets_of("local_load")
    try:
        values = [int(v, 0) for v in text.split(",")]
    except ValueError:
        raise ConfigError(f"--base {text!r}: expected integers separated by commas") from None
    if len(values) != len(buffers):
        what = f"{len(buffers)} partition buffers" if len(buffers) > 1 else "one buffer"
        raise ConfigError(
            f"--base {text}: {len(values)} address(es) given, the shared layout has {what} "
            f"(give {len(buffers)}, or leave --base out)"
        )
    for value, buf in zip(values, buffers, strict=True):
        if value < 0 or value % buf.alignment:
            raise ConfigError(
                f"--base {text}: {value} is not a byte address aligned to {buf.alignment} "
                "(Triton aligns shared buffers to it)"
            )
        if value + buf.size > hw.partitions.lds_bytes:
            raise ConfigError(
                f"--base {text}: the {buf.size} B buffer at {value} ends past the "
                f"{hw.partitions.lds_bytes} B LDS"
            )
    return values


def _simulate(low: Lowering, hw, engine: str) -> dict[str, Any]:
    from wgpsim.engine import simulate
    from wgpsim.measures.metrics import instruction_metrics, lds_metrics

    trace = low.trace()
    result = simulate(trace, hw, engine=engine)
    cycles = result.measurements()
    return {
        "engine": result.engine,
        "lds_metrics": lds_metrics(result).to_dict(),
        "per_instruction": instruction_metrics(trace, hw).to_dict(orient="records"),
        "lds_cycles_per_warp": [int(c) for c in cycles.tolist()],
        "lds_cycles_max": int(cycles.max()),
        "total_cycles": int(result.total_cycles),
        "bytes": int(result.bytes),
        "passes": int(result.passes),
        "bank_conflict_cycles": int(result.bank_conflict_cycles),
    }


def handle(args: argparse.Namespace) -> int:
    from wgpsim.kernel.target_lowering import for_target
    from wgpsim.layout.addresses import check_warps, local_load_encodings
    from wgpsim.layout.notation import to_text
    from wgpsim.trace.lowering import lower

    dst, shared = local_load_encodings(args.dst, args.shared, ("--dst", "--shared"))
    shape = parse_shape(args.shape)
    hw = hardware_from_args(args)
    bases = _bases(args.base, shared, shape, args.dtype, hw)
    low = lower(
        shared,
        dst,
        shape,
        args.dtype,
        bases=bases if len(bases) > 1 else bases[0],
        allow_transpose=not args.no_transpose and hw.has_transposed_loads,
        store=args.store,
    )
    low = for_target(low, hw)  # the target's instructions, as wgpsim kernel lowers
    check_warps(args.warps, low.num_warps, "--warps")
    payload = low.to_dict() | {"bases": bases}
    if args.simulate:
        payload["simulation"] = _simulate(low, hw, args.engine)
    if args.plot is not None:
        from wgpsim.plots.ownership import check_path, save
        from wgpsim.plots.transpose import transpose_figure

        fig = transpose_figure(low, args.instr)
        payload["plot"] = str(atomic_write(check_path(args.plot), lambda tmp: save(fig, tmp)))
    if args.json:
        print_json(payload)
        return 0
    _print_text(low, payload, args, (to_text(shared), to_text(dst)))
    return 0


def _print_text(
    low: Lowering, payload: dict[str, Any], args: argparse.Namespace, texts: tuple[str, str]
) -> None:
    shape = "x".join(map(str, low.shape))
    warps = "1 warp" if low.num_warps == 1 else f"{low.num_warps} warps"
    print(f"{'local_store' if low.store else 'local_load'} tensor<{shape}x{args.dtype}>, {warps}")
    for name, text in zip(("shared", "dst"), texts, strict=True):
        print(f"  {name + ':':8}{text}")
    print(f"  {'bases:':8}{', '.join(map(str, payload['bases']))}")
    elems = f"{low.vector_elems} x {low.elem_bits}-bit per lane"
    print(f"decision: {low.instruction} ({elems}), ds_load_tr eligibility: {low.eligibility}")
    print(f"reason:   {low.reason}")
    counts = ", ".join(f"{n} x {name}" for name, n in low.counts.items())
    dialect = ", ".join(f"{n} x {name}" for name, n in low.dialect_counts.items())
    print(
        f"per warp: {counts} in the assembly ({low.num_registers} {args.dtype} elements per lane)"
    )
    if dialect != counts:
        print(f"          {dialect} in Triton's LLVM dialect; {'; '.join(low.issued.notes())}")
    print(f"cvt:      {payload['cvt']}")
    sim = payload.get("simulation")
    if sim:
        cyc = sim["lds_cycles_per_warp"]
        print(
            f"simulated LDS cycles: {min(cyc)}..{max(cyc)} per warp (fastest..slowest, all "
            f"warps loading together); in all: {sim['passes']} passes, {sim['bytes']} B, "
            f"{sim['bank_conflict_cycles']} bank-conflict cycles ({sim['engine']} engine)"
        )
        print_metric_tables(sim["lds_metrics"], sim["per_instruction"])
    if "plot" in payload:
        print(f"plot:     {payload['plot']}")
