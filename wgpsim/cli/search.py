"""``wgpsim search``: the best ctaLayout x shared layouts for a GEMM tile (``docs/DESIGN.md``,
"Layout search").

::

    wgpsim search --block 128x128x64 --warps 4                 # the AMD blog's Part II tile
    wgpsim search --block 128x128x64 --warps 8 --top 5 --json
    wgpsim search configs/layout_search.yaml --set stages=3     # the same from YAML

Flags set the config's fields (``--b-k-contiguous``, ``--stages``, ``--lds-budget`` ...); a bad
value is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from wgpsim.cli._common import print_json
from wgpsim.errors import ConfigError


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
    parser.add_argument("--top", type=int, default=10, help="rows to print (default 10)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field (VALUE is YAML)",
    )
    parser.add_argument("--json", action="store_true", help="print the ranking as JSON")
    parser.set_defaults(handler=handle)


def _block(text: str) -> list[int]:
    try:
        block = [int(x) for x in text.lower().split("x")]
    except ValueError:
        block = []
    if len(block) != 3 or min(block) < 1:
        raise ConfigError(f"--block {text!r}: expected MxNxK, three positive integers (128x128x64)")
    return block


def raw_config(args: argparse.Namespace) -> dict[str, Any] | Path:
    """The config the flags describe (on top of ``args.config`` when given)."""
    raw: dict[str, Any] = {}
    if args.config is None:
        raw["kind"] = "layout_search"
        if args.block is None or args.warps is None:
            raise ConfigError("wgpsim search: give a CONFIG file, or --block and --warps")
    if args.block is not None:
        raw["block"] = _block(args.block)
    for name in ("warps", "dtype", "stages", "lds_budget"):
        if getattr(args, name) is not None:
            raw[name] = getattr(args, name)
    if args.a_m_contiguous:
        raw["a_k_contiguous"] = False
    if args.b_k_contiguous:
        raw["b_k_contiguous"] = True
    raw["top"] = args.top
    return raw


def handle(args: argparse.Namespace) -> int:
    from wgpsim.experiments import run_experiment

    if args.top < 1:
        raise ConfigError(f"--top {args.top}: must be >= 1")
    raw = raw_config(args)
    progress = None if args.json or not sys.stderr.isatty() else _progress_bar
    if args.config is not None:
        extra = [f"{k}={v!r}".replace("'", "") for k, v in raw.items()]
        result = run_experiment(args.config, overrides=[*extra, *args.overrides], progress=progress)
    else:
        result = run_experiment(raw, overrides=args.overrides, progress=progress)
    winners = result.tables["winners"]
    counts = result.tables["counts"].to_dict(orient="records")[0]
    if args.json:
        print_json(
            {
                "counts": counts,
                "ranking": result.records(),
                "pareto": result.tables["pareto"].to_dict(orient="records"),
                "winners": winners.to_dict(orient="records"),
            }
        )
        return 0
    _print(result, counts)
    return 0


def _progress_bar(items, *, total: int, desc: str = ""):
    from tqdm import tqdm

    return tqdm(items, total=total, desc=desc, file=sys.stderr, leave=False)


def _print(result: Any, counts: dict[str, int]) -> None:
    from rich.console import Console

    console = Console(highlight=False)
    console.print(
        f"{counts['candidates']} candidates: {counts['cannot_be_built']} cannot be built, "
        f"{counts['pruned']} pruned by the static bounds, {counts['simulated']} simulated "
        f"({counts['distinct_simulations']} distinct simulations)"
    )
    for row in result.records():
        console.print(
            f"{row['rank']:>3}. {row['cycles']} cycles, {row['lds_bytes']} B LDS, "
            f"{row['tdm_instructions']} TDM, {row['local_loads']} local_loads: {row['candidate']}"
        )
        console.print(f"     {row['reason']}", style="dim")
    pareto = result.tables["pareto"]
    points = pareto.groupby(["cycles", "lds_bytes", "tdm_instructions"], sort=True)
    console.print(
        f"Pareto front (cycles, LDS bytes, TDM instructions): {len(points)} points, "
        f"{len(pareto)} candidates"
    )
    for (cycles, lds, tdm), group in points:
        more = f" (and {len(group) - 1} more)" if len(group) > 1 else ""
        console.print(f"  {cycles} cycles, {lds} B, {tdm} TDM: {group.iloc[0]['candidate']}{more}")
    first = result.tables["winners"].iloc[0]
    console.print("Winner, #ttg:")
    for key in ("ttg_wmma", "ttg_a", "ttg_b"):
        console.print(f"  {first[key]}", soft_wrap=True)
    console.print("Winner, Gluon:")
    console.print(first["gluon"], soft_wrap=True)
