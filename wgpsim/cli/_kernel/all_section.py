"""``wgpsim kernel CACHE_ROOT --all``: every kernel of a cache root as one table, worst first.

The rows of `wgpsim.kernel.table` (a kernel that cannot be read is a row with its
reason), printed as a table, or ``--json`` / ``--csv FILE``, ``--html FILE`` (an index linking
to a section per kernel); a progress bar on stderr for more than a few kernels.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from wgpsim.cli._common import atomic_write, output_width, print_json, text_table
from wgpsim.errors import ConfigError

HEAD = {
    "kernel": "kernel",
    "folder": "folder",
    "target": "target",
    "warps": "warps",
    "lds_bytes": "LDS B",
    "ttg_shared": "ttg.shared",
    "loop_instructions": "ds",
    "exposed": "exposed",
    "exposed_share": "share%",
    "bank_conflicts": "bank",
    "partition_stalls": "stall",
    "worst_op": "worst op",
    "worst_line": "line",
}


PER_UNIT = ("loop_instructions", "exposed")
"""The columns whose cells carry their unit, /iter or /run (a row's ``per``)."""


def collect(paths: list[tuple[str, Path]], pick, engine: str, loop: bool = True):
    """(name, folder, figures or reason) of each kernel, with a progress bar."""
    from wgpsim.cli._kernel.kernel_set import figures_or_reason, progress

    return [
        (name, folder, figures_or_reason(folder, name, pick, engine, loop, suggest=False))
        for name, folder in progress(paths, len(paths), "kernels")
    ]


def handle_all(args: argparse.Namespace) -> int:
    """The ``--all`` table of ``args.path`` (a cache root, or one kernel), each kernel on its
    own target's hardware file (or ``--hw``/``--target``'s); exit 1 when a kernel cannot be
    read (its row says why), else 0."""
    from wgpsim.cli._kernel.kernel_set import HardwarePicker, entries, holds_kernel
    from wgpsim.kernel.table import kernel_table

    single = {"--plot": args.plot, "--timeline": args.timeline, "--timeline-png": args.timeline_png}
    given = [flag for flag, value in single.items() if value is not None]
    if given:
        raise ConfigError(f"{', '.join(given)}: one kernel at a time, not with --all")
    root = args.path
    paths = [(args.name, root)] if holds_kernel(root) else entries(root)
    if args.name is not None:
        paths = [p for p in paths if p[0] in (args.name, None)]
    pick = HardwarePicker(args)
    items = collect(paths, pick, args.engine)
    status = 1 if any(isinstance(f, str) for _, _, f in items) else 0
    rows = kernel_table(items)
    for row in rows:
        row["folder"] = _relative(row["folder"], root)
    written = []
    if args.csv is not None:
        import pandas as pd

        frame = pd.DataFrame(rows)
        atomic_write(args.csv, lambda tmp: frame.to_csv(tmp, index=False))
        written.append(str(args.csv))
    if getattr(args, "html", None) is not None:
        from wgpsim.html.index_page import write_index_page

        figures = {_relative(str(folder), root): f for _, folder, f in items}
        written.append(str(write_index_page(args.html, root, rows, figures)))
    if args.json:
        foreign = [{"kernel": k, "target": t} for k, t in pick.foreign]
        print_json(
            {"root": str(root), "kernels": rows}
            | ({"simulated_on_another_target": foreign} if foreign else {})
            | ({"written": written} if written else {})
        )
        return status
    print("\n".join(format_all(rows, output_width())))
    if pick.note():
        print(pick.note())
    for path in written:
        print(f"wrote {path}")
    return status


def _relative(folder: str, root: Path) -> str:
    try:
        return str(Path(folder).relative_to(root)) or "."
    except ValueError:
        return folder


def cell(key: str, value: Any) -> str:
    """A table cell: figures as ``wgpsim kernel`` prints them, shares in percent."""
    from wgpsim.kernel.loop.timing import number_text

    if value is None:
        return "-"
    if key == "exposed_share":
        return number_text(100 * value)
    return number_text(value) if isinstance(value, float) else str(value)


def format_all(rows: list[dict[str, Any]], width: int = 10_000) -> list[str]:
    """The table, then a line per unreadable kernel or loop not timed."""

    n_bad = sum(r["lds_bytes"] is None and r["error"] is not None for r in rows)
    lines = [
        f"{len(rows)} kernels, worst first (ds instructions and exposed LDS cycles per iteration "
        "of the main loop, /iter; a kernel without a loop: per run of its whole body, /run, "
        "ranked after the loops); "
        "bank / stall: the ops' bank-conflict and partition-stall cycles in lock step"
        + (f"; {n_bad} unreadable (exit 1)" if n_bad else "")
    ]
    unit = {"iteration": "/iter", "run": "/run"}
    table = [
        tuple(cell(k, r[k]) + (unit.get(r["per"], "") if k in PER_UNIT else "") for k in HEAD)
        for r in rows
    ]
    lines += text_table(tuple(HEAD.values()), table, width)
    lines += [f"{r['kernel']} ({r['folder']}): {r['error']}" for r in rows if r["error"]]
    return lines
