"""``wgpsim layout``: look at layouts and the local_load conversion between them.

::

    wgpsim layout cvt --dst '#ttg.linear<{...}>' --shared '#ttg.swizzled_shared<{...}>' --shape 32x8 --dtype bf16
    wgpsim layout show '#ttg.blocked<{...}>' --shape 64x64        # its linear layout, basis by basis
    wgpsim layout plot --layout '#ttg.amd_wmma<{...}>' --shape 64x64 --by warp --out owners.png

``cvt`` prints ``dst.invert_and_compose(shared)``: for each register, lane and warp basis, the
shared element offset it reads (and the partition buffer, for partitioned layouts), the table of
the seed's worked example. Every verb takes ``--json`` for scripts (``plot`` prints the path).
"""

from __future__ import annotations

import argparse
from typing import Any

from wgpsim.cli._common import atomic_write, print_json
from wgpsim.layout.dtypes import DTYPE_BITS, dtype_bytes, parse_shape

# the layout modules (and numpy) are imported by the handlers: `wgpsim --help` stays fast


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "layout",
        help="show layouts, the local_load conversion between them, and ownership plots",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
    )
    verbs = parser.add_subparsers(dest="layout_verb", metavar="ACTION")
    verbs.required = True

    cvt = verbs.add_parser("cvt", help="(register, lane, warp) -> shared offset of a local_load")
    cvt.add_argument("--dst", required=True, help="destination (distributed) layout, #ttg text")
    cvt.add_argument("--shared", required=True, help="shared layout, #ttg text")
    _shape_arg(cvt)
    cvt.add_argument(
        "--dtype", default="fp16", help=f"element type (default fp16; {', '.join(DTYPE_BITS)})"
    )
    cvt.add_argument("--json", action="store_true", help="print the table as JSON")
    cvt.set_defaults(handler=handle_cvt)

    show = verbs.add_parser("show", help="a layout's linear layout on a shape, basis by basis")
    show.add_argument("layout", help="layout, #ttg text")
    _shape_arg(show)
    show.add_argument("--json", action="store_true", help="print the bases as JSON")
    show.set_defaults(handler=handle_show)

    plot = verbs.add_parser("plot", help="draw which warp/lane/register holds each element")
    plot.add_argument("--layout", required=True, help="distributed layout, #ttg text")
    _shape_arg(plot)
    plot.add_argument(  # checked by wgpsim.plots.ownership (imported only to draw: fast --help)
        "--by", default="warp", help="colour by warp (default), lane, register or simd_pair"
    )
    plot.add_argument("--out", required=True, help="output file, .png or .svg")
    plot.add_argument(
        "--json", action="store_true", help="print the written path and who owns what as JSON"
    )
    plot.set_defaults(handler=handle_plot)


def _shape_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shape", required=True, type=str, help="tensor shape, e.g. 32x8")


def _bases_payload(ll: Any) -> dict[str, Any]:
    return {
        "in_dims": {d: [list(b) for b in bs] for d, bs in ll.bases},
        "out_dims": dict(ll.out_dims),
    }


def handle_cvt(args: argparse.Namespace) -> int:
    from wgpsim.layout.addresses import conversion, conversion_table, local_load_encodings
    from wgpsim.layout.notation import parse, to_text

    shape = parse_shape(args.shape)
    dst, shared = local_load_encodings(parse(args.dst), parse(args.shared), ("--dst", "--shared"))
    elem_bytes = dtype_bytes(args.dtype)
    table = conversion_table(dst, shared, shape, elem_bytes)
    if args.json:
        print_json(
            {
                "dst": to_text(dst),
                "shared": to_text(shared),
                "shape": list(shape),
                "dtype": args.dtype,
                "elem_bytes": elem_bytes,
                "cvt": _bases_payload(conversion(dst, shared, shape)),
                "table": table.to_dict(orient="records"),
            }
        )
        return 0
    outs = ["offset"] + (["partition"] if "partition" in table else [])
    print(f"dst:    {to_text(dst)}")
    print(f"shared: {to_text(shared)}")
    print(f"shape:  {'x'.join(map(str, shape))} {args.dtype} ({elem_bytes} B per element)")
    print(f"cvt = dst.invert_and_compose(shared): (register, lane, warp) -> [{', '.join(outs)}]")
    if hasattr(shared, "pad"):
        print("  (B) = byte offset in the buffer, padding applied: pad(offset) x element bytes")
    width = max(len(f"{d}={i}") for d, i in zip(table["in_dim"], table["input"], strict=True))
    for row in table.to_dict(orient="records"):
        image = ", ".join(f"{row[o]:3d}" for o in outs)
        print(
            f"  {row['in_dim'] + '=' + str(row['input']):<{width}} -> [{image}]  ({row['bytes']} B)"
        )
    return 0


def handle_show(args: argparse.Namespace) -> int:
    from wgpsim.layout.notation import kind_of, parse, to_text

    shape = parse_shape(args.shape)
    layout = parse(args.layout)
    ll = layout.to_linear_layout(shape)
    if args.json:
        print_json({"layout": to_text(layout), "kind": kind_of(layout), "shape": list(shape)}
                   | _bases_payload(ll))  # fmt: skip
        return 0
    print(f"{to_text(layout)} on {'x'.join(map(str, shape))}:")
    print(ll.table())
    return 0


def handle_plot(args: argparse.Namespace) -> int:
    import numpy as np

    from wgpsim.layout.notation import parse, to_text
    from wgpsim.plots.ownership import check_path, owners, ownership_figure, save

    shape = parse_shape(args.shape)
    check_path(args.out)
    layout = parse(args.layout)
    fig = ownership_figure(layout, shape, by=args.by)
    path = atomic_write(args.out, lambda tmp: save(fig, tmp))
    if args.json:
        held = owners(layout, shape, args.by)
        ids, counts = np.unique(held[held >= 0], return_counts=True)
        print_json(
            {
                "path": str(path),
                "layout": to_text(layout),
                "shape": list(shape),
                "by": args.by,
                "elements_per_owner": {str(i): int(n) for i, n in zip(ids, counts, strict=True)},
                "unowned_elements": int((held < 0).sum()),
            }
        )
        return 0
    print(path)
    return 0
