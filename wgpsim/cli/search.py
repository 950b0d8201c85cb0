"""``wgpsim search``: the best ctaLayout x shared layouts for a GEMM tile (``docs/DESIGN.md``,
"Layout search").

::

    wgpsim search --block 128x128x64 --warps 4                 # the AMD blog's Part II tile
    wgpsim search --block 128x128x64 --warps 8 --top 5 --json
    wgpsim search configs/layout_search.yaml --set stages=3     # the same from YAML
    wgpsim search --block 128x128x64 --warps 4 --out results/search   # and write the tables

Flags set the config's fields (``--b-k-contiguous``, ``--stages``, ``--lds-budget`` ...); a bad
value is one line on stderr naming the flag, and exit code 2. ``--out DIR`` writes
``results.csv``, ``pareto.csv``, ``winners.csv``, ``counts.csv`` and the figures, atomically and
under a lock, as ``wgpsim run`` does (which takes the same config); ``--hw``, ``--workers``,
``--scheduler`` and ``--resume`` are ``wgpsim run``'s. Without ``--out`` nothing is written.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from wgpsim.cli._common import add_hw_option
from wgpsim.cli.run import add_execution_args, execute, show
from wgpsim.errors import ConfigError

if TYPE_CHECKING:  # imported by the handler: `wgpsim --help` stays fast
    from wgpsim.sweeps.config import Override


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "search",
        help="search ctaLayouts x shared layouts for a GEMM tile and rank them",
        description="Search WMMA ctaLayouts x shared layouts x transposed loads for one GEMM "
        "tile; print the ranking, the Pareto front and the winner's Gluon code.",
    )
    parser.add_argument("config", nargs="?", type=Path, help="a layout_search YAML (optional)")
    parser.add_argument("--block", metavar="MxNxK", help="block shape, e.g. 128x128x64")
    parser.add_argument("--warps", type=int, help="warps (1, 2, 4, 8 or 16)")
    parser.add_argument("--dtype", help="element type (default fp16)")
    parser.add_argument("--stages", type=int, help="num_stages: buffers per operand (default 2)")
    parser.add_argument("--lds-budget", type=int, metavar="BYTES", help="LDS a candidate may use")
    parser.add_argument("--a-m-contiguous", action="store_true", help="A stored M-fastest")
    parser.add_argument("--b-k-contiguous", action="store_true", help="B stored K-fastest")
    parser.add_argument("--top", type=int, help="rows to print and write (default 10)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field (VALUE is YAML)",
    )
    parser.add_argument("--json", action="store_true", help="print the ranking as JSON")
    parser.add_argument(
        "--out",
        type=Path,
        help="also write the tables (results, pareto, winners, counts) and figures here",
    )
    parser.add_argument("--parquet", action="store_true", help="with --out: tables as Parquet too")
    add_hw_option(parser, "hardware YAML replacing the config's `hardware`")
    add_execution_args(parser)
    parser.set_defaults(handler=handle)


def _block(text: str) -> list[int]:
    try:
        block = [int(x) for x in text.lower().split("x")]
    except ValueError:
        block = []
    if len(block) != 3 or min(block) < 1:
        raise ConfigError(f"--block {text!r}: expected MxNxK, three positive integers (128x128x64)")
    return block


FLAGS = {
    "block": "--block",
    "warps": "--warps",
    "dtype": "--dtype",
    "stages": "--stages",
    "lds_budget": "--lds-budget",
    "top": "--top",
}
"""The config field each flag sets (errors in the field name the flag)."""


def flag_overrides(args: argparse.Namespace) -> list[Override]:
    """The config fields the flags set, each an :class:`Override` naming its flag."""
    from wgpsim.sweeps.config import Override

    if args.config is None and (args.block is None or args.warps is None):
        missing = " and ".join(f"--{n}" for n in ("block", "warps") if getattr(args, n) is None)
        raise ConfigError(
            f"wgpsim search: missing {missing}: give a CONFIG file, or both --block and --warps "
            "(e.g. wgpsim search --block 128x128x64 --warps 4)"
        )
    given = {name: getattr(args, name) for name in FLAGS if getattr(args, name) is not None}
    if "block" in given:
        given["block"] = _block(given["block"])
    out = [Override(name, value, FLAGS[name]) for name, value in given.items()]
    if args.a_m_contiguous:
        out.append(Override("a_k_contiguous", False, "--a-m-contiguous"))
    if args.b_k_contiguous:
        out.append(Override("b_k_contiguous", True, "--b-k-contiguous"))
    return out


def handle(args: argparse.Namespace) -> int:
    config = args.config if args.config is not None else {"kind": "layout_search"}
    overrides = [*flag_overrides(args), *args.overrides]
    result, written = execute(args, config, overrides, out=args.out, kind="layout_search")
    show(result, written, as_json=args.json)
    return 0
