"""``wgpsim diff``: two compiles of one kernel compared, op by op, with thresholds for CI.

::

    wgpsim diff examples/kernels/gemm_tdm_standard examples/kernels/gemm_tdm_partitioned
    wgpsim diff old/kernel.ttgir new/kernel.ttgir --json
    wgpsim diff cache_before/ cache_after/ --fail-on "exposed>+5%" --fail-on "lds_bytes>+0"
    wgpsim diff OLD NEW --html review.html

OLD and NEW are each one kernel (a TTGIR file, a cache entry or dump folder) or each a cache
root, whose kernels are matched by name. Per op (matched by source line and op), per buffer and
for the main loop: old -> new and the change. ``--fail-on METRIC>NUMBER[%]`` (or ``<``; a
kernel-level figure, a signed number, ``%`` for a relative change; repeatable) makes the exit
code 1 when some kernel's change crosses it; a kernel of a root that cannot be read is exit 1
too (a gate that could not check it must not pass); else 0; bad input is one line and exit 2.
Each kernel is simulated on its own ``ttg.target``'s hardware file, as ``wgpsim kernel`` does
(``--hw``/``--target`` names one for all, with a note for kernels compiled for another chip).
docs/CI.md has a GitHub Actions step.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from wgpsim.cli._common import (
    MODULE_DEFAULT,
    add_engine_arg,
    add_hw_args,
    output_width,
    print_json,
    text_table,
)
from wgpsim.errors import ConfigError

STATUS = {"same": " ", "changed": "~", "added": "+", "removed": "-"}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="compare two compiles of a kernel (or two cache roots) op by op; CI thresholds",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
    )
    parser.add_argument("old", type=Path, help="the old compile (file, cache entry) or cache root")
    parser.add_argument("new", type=Path, help="the new compile (file, cache entry) or cache root")
    parser.add_argument("--name", help="the kernel to read when an input holds several")
    parser.add_argument(
        "--fail-on",
        action="append",
        default=[],
        metavar="RULE",
        help="exit 1 when a change crosses RULE: METRIC>NUMBER[%%] or METRIC<NUMBER[%%], e.g. "
        '"exposed>+5%%" "lds_bytes>+0" (repeatable)',
    )
    parser.add_argument("--no-loop", action="store_true", help="do not time the main loops")
    add_engine_arg(parser)
    add_hw_args(parser, MODULE_DEFAULT)
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument("--html", type=Path, help="write a self-contained HTML report")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from wgpsim.cli._kernel.kernel_set import HardwarePicker
    from wgpsim.kernel.diff_thresholds import parse_threshold

    thresholds = [parse_threshold(t) for t in args.fail_on]
    pick = HardwarePicker(args)
    diffs, only, unreadable = compare(args, pick)
    failed = regressions(diffs, thresholds)
    status = 1 if failed or unreadable else 0
    unchecked = [line for d in diffs for line in d.unchecked(thresholds)]
    written = []
    if args.html is not None:
        from wgpsim.html.diff_page import write_diff_page

        page = write_diff_page(args.html, diffs, only, unreadable, None, failed)
        written.append(str(page))
    if args.json:
        print_json(
            {
                "kernels": [d.to_json() for d in diffs],
                "only_in": only,
                "unreadable": unreadable,
                "thresholds": args.fail_on,
                "regressions": failed,
                "unchecked": unchecked,
                "simulated_on_another_target": [
                    {"kernel": k, "target": t} for k, t in pick.foreign
                ],
                **({"written": written} if written else {}),
            }
        )
        return status
    width = output_width()
    for d in diffs:
        print("\n".join(format_diff(d, width)), end="\n\n")
    for name, side in only:
        print(f"only in {side}: {name}")
    for where, reason in unreadable:
        print(f"unreadable: {where}: {reason}")
    for line in unchecked:
        print(f"note: {line}")
    if pick.note():
        print(pick.note())
    for line in failed:
        print(f"REGRESSION {line}")
    if unreadable:
        print(f"FAILED: {len(unreadable)} input(s) unreadable, not compared (exit 1)")
    elif thresholds and not failed:
        print(f"no regression under {', '.join(args.fail_on)}")
    for path in written:
        print(f"wrote {path}")
    return status


def regressions(diffs, thresholds) -> list[str]:
    """The lines of every kernel's change that crosses one of ``thresholds``."""
    return [line for d in diffs for line in d.regressions(thresholds)]


def compare(args: argparse.Namespace, pick):
    """(diffs, kernels only in one root as (name, "old"/"new"), unreadable as (where, why))."""
    from wgpsim.cli._kernel.kernel_set import entries, figures_or_reason, holds_kernel, progress
    from wgpsim.kernel.diff import diff_figures, match_by_name

    for path in (args.old, args.new):
        if not path.exists():
            raise FileNotFoundError(2, "no such file or directory", str(path))
    single = holds_kernel(args.old), holds_kernel(args.new)
    if single[0] != single[1]:
        kinds = ["one kernel" if s else "a cache root" for s in single]
        raise ConfigError(
            f"{args.old} is {kinds[0]} but {args.new} is {kinds[1]}: compare like with like"
        )
    if all(single):
        pairs = [(args.name, args.old, args.new)]
    else:
        keep = lambda e: args.name is None or e[0] == args.name  # noqa: E731
        old = [e for e in entries(args.old) if keep(e)]
        new = [e for e in entries(args.new) if keep(e)]
        pairs = match_by_name(old, new)
    diffs, only, unreadable = [], [], []
    loop = not args.no_loop
    for name, a, b in progress(pairs, len(pairs), "diff"):
        if a is None or b is None:
            only.append((name, "new" if a is None else "old"))
            continue
        engine = args.engine
        fa = figures_or_reason(a, name, pick, engine, loop, suggest=False)
        fb = figures_or_reason(b, name, pick, engine, loop, suggest=False)
        bad = [(str(w), f) for w, f in ((a, fa), (b, fb)) if isinstance(f, str)]
        if bad and all(single):
            raise ConfigError(f"{bad[0][0]}: {bad[0][1]}")
        unreadable += bad
        if not bad:
            diffs.append(diff_figures(fa, fb))
    return diffs, only, unreadable


def format_diff(d, width: int = 10_000) -> list[str]:
    """The comparison as the terminal shows it: totals, ops, buffers, loop."""
    from wgpsim.kernel.diff import change_text, figure_text, percent_text

    names = d.name if d.old.name == d.name else f"{d.old.name} -> {d.name} (two different kernels)"
    lines = [f"diff {names}: {d.old.path} -> {d.new.path}"]
    trows = [
        (k, figure_text(f["old"]), figure_text(f["new"]), figure_text(f["change"]), percent_text(f))
        for k, f in d.totals.items()
    ]
    lines += text_table(("kernel", "old", "new", "change", "change%"), trows, width)
    for title, rows in (("op (line op)", d.ops), ("buffer", d.buffers)):
        if not rows:
            continue
        names = list(rows[0]["figures"])
        table = [
            (STATUS[r["status"]], r["key"], *(change_text(r["figures"][n]) for n in names))
            for r in rows
        ]
        lines += ["", *text_table(("", title, *names), table, width)]
    if d.loop is not None:
        lrows = [(k, change_text(f)) for k, f in d.loop.items()]
        lines += ["", *text_table(("loop (per iteration)", "old -> new (change)"), lrows, width)]
        if d.loop_note():
            lines.append(f"note: {d.loop_note()}")
    for side, fig in (("old", d.old), ("new", d.new)):
        if fig.loop_error:
            lines.append(f"note: the {side} loop was not timed: {fig.loop_error}")
    return lines
