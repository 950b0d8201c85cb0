"""Helpers shared by the CLI verbs: ``--hw``/``--set``, JSON output, and atomic file writes
(from ``wgpsim.files``)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wgpsim.files import atomic_write

if TYPE_CHECKING:
    from wgpsim.hw.config import HardwareConfig

__all__ = [
    "add_engine_arg",
    "add_hw_args",
    "add_hw_option",
    "add_target_option",
    "KIT_DEFAULT",
    "MODULE_DEFAULT",
    "target_arch",
    "atomic_write",
    "column_groups",
    "rich_console",
    "hardware_from_args",
    "output_width",
    "print_json",
    "print_lds_metrics",
    "text_table",
]


def add_hw_option(parser: argparse.ArgumentParser, help: str) -> None:
    """``--hw FILE`` or its shorthand ``--target NAME`` (a packaged hardware file: mi450,
    gfx950, gfx942), one or the other, both into dest ``hw`` (a path).

    >>> p = argparse.ArgumentParser(prog="wgpsim replay")
    >>> add_hw_option(p, "hardware YAML")
    >>> p.parse_args(["--target", "gfx950"]).hw.name, p.parse_args(["--hw", "x.yaml"]).hw
    ('gfx950.yaml', PosixPath('x.yaml'))
    """
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--hw", type=Path, help=help)
    add_target_option(group, f"a packaged hardware file by name, for --hw ({_choices()})")


def add_target_option(parser: Any, help: str) -> None:
    """``--target NAME``: a packaged hardware file by name, into dest ``hw`` (its path);
    ``help`` may say ``{choices}`` (``mi450|gfx1250, gfx942, gfx950``). A bad name is argparse's
    one line and exit 2."""
    parser.add_argument(
        "--target",
        dest="hw",
        type=_target_path,
        metavar="NAME",
        help=help.replace("{choices}", _choices()),
    )


def _choices() -> str:
    from wgpsim.packaged import target_vocabulary

    return target_vocabulary()


def _target_path(name: str) -> Path:
    """The packaged hardware file of target ``name`` (``wgpsim.packaged.target_stem``: a file
    name, an arch or ``hip:ARCH``); argparse reports a bad name in one line."""
    from wgpsim.packaged import hardware_path, target_stem

    stem = target_stem(name)
    if stem is None:
        raise argparse.ArgumentTypeError(f"unknown target {name!r} (valid: {_choices()})")
    return hardware_path(stem)


def target_arch(name: str) -> str:
    """The arch (``gfx1250``) of target ``name`` in the vocabulary of ``--target``, for an
    option whose value is an arch (``calibrate probes --target``).

    >>> target_arch("mi450"), target_arch("hip:gfx950")
    ('gfx1250', 'gfx950')
    """
    from wgpsim.packaged import hardware_fact

    stem = _target_path(name).stem
    return str(hardware_fact("target", name=stem)).removeprefix("hip:")


MODULE_DEFAULT = "the module's target (else configs/mi450.yaml)"
"""``--hw``'s default in the help of the verbs that read a compiled module."""
KIT_DEFAULT = "the kit's target (else configs/mi450.yaml)"
"""``--hw``'s default in the help of the verbs that read a calibration kit's lane pairs."""


def add_hw_args(parser: argparse.ArgumentParser, default: str = "configs/mi450.yaml") -> None:
    """``--hw FILE`` (or ``--target NAME``) and repeatable ``--set KEY=VALUE`` (dest ``hw`` and
    ``overrides``); ``default`` says in the help which file the verb takes without them."""
    add_hw_option(parser, f"hardware YAML (default: {default})")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a hardware field, e.g. timing.lds_latency=40 (VALUE is YAML)",
    )


def hardware_from_args(args: argparse.Namespace, target: str | None = None) -> HardwareConfig:
    """The config of ``--hw`` (absent: the packaged file of ``target``, a module's
    ``ttg.target``, or the default config) with the ``--set`` overrides applied."""
    from wgpsim.hw.config import apply_overrides, load_hardware, target_hardware

    hw = load_hardware(args.hw) if args.hw or not target else target_hardware(target)
    return apply_overrides(hw, args.overrides)


def rich_console(**options: Any) -> Any:
    """A ``rich.console.Console`` (``options`` as rich takes them) for which a reader that left
    (``wgpsim ... | head -0``) is a ``BrokenPipeError``, which :func:`wgpsim.cli.main` turns into a
    quiet exit 0, as for ``--json`` output. (rich's own reaction is ``SystemExit(1)``.)

    >>> rich_console(width=40).width
    40
    """
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    return _Console(**options)


_TERMINAL_HINTS = {"COLUMNS", "TTY_COMPATIBLE", "FORCE_COLOR"}
"""Environment variables by which rich may call a pipe a terminal, or size it."""


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream: not a terminal
        return False


def output_width() -> int:
    """The width a table may take: the terminal's (or ``COLUMNS``); a file or pipe without
    ``COLUMNS`` gets whole rows (10,000 characters). That common case (no ``COLUMNS``,
    ``TTY_COMPATIBLE`` or ``FORCE_COLOR``, stdout not a terminal) is answered without importing
    rich (about 0.03 CPU-s), as rich's ``Console.is_terminal`` would answer it."""
    if not _TERMINAL_HINTS & os.environ.keys() and not _isatty(sys.stdout):
        return 10_000
    from rich.console import Console

    console = Console(highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        return 10_000
    return console.width


def column_groups(table: Any, width: int) -> list[list[str]]:
    """Columns of ``table`` (a DataFrame, or a dict of column -> cells) in groups whose boxed
    table fits ``width`` characters, the first (key) column in every group; one group when
    everything fits.

    >>> import pandas as pd
    >>> t = pd.DataFrame({"layout": ["plain"], "cycles": ["323"], "LDS": ["64 KiB"]})
    >>> column_groups(t, 80), column_groups(t, 20)
    ([['layout', 'cycles', 'LDS']], [['layout', 'cycles'], ['layout', 'LDS']])
    """

    def cost(column: str) -> int:  # cell + padding + border
        return max(len(str(column)), *(len(_cell(v)) for v in table[column])) + 3

    key, *rest = list(getattr(table, "columns", table))
    groups: list[list[str]] = [[key]]
    used = 1 + cost(key)
    for column in rest:
        if used + cost(column) > width and len(groups[-1]) > 1:
            groups.append([key])
            used = 1 + cost(key)
        groups[-1].append(column)
        used += cost(column)
    return groups


def text_table(head: tuple[str, ...], rows: list[tuple[str, ...]], width: int) -> list[str]:
    """Aligned columns of text cells, as lines; wider than ``width``, one such table per group
    of :func:`column_groups` (the key column in each), separated by a blank line.

    >>> rows = [("plain", "323", "64 KiB"), ("partitioned", "195", "96 KiB")]
    >>> print("\\n".join(text_table(("layout", "cycles", "LDS"), rows, 80)))
    layout       cycles  LDS
    plain        323     64 KiB
    partitioned  195     96 KiB
    >>> text_table(("layout", "cycles", "LDS"), rows, 20)[3:5]
    ['', 'layout       LDS']
    """
    if not rows:
        return ["  ".join(head)]
    table = {h: [r[i] for r in rows] for i, h in enumerate(head)}  # no pandas: a report's cost
    out: list[str] = []
    for group in column_groups(table, width):
        index = [head.index(c) for c in group]
        widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in index]
        lines = [
            "  ".join(r[i].ljust(w) for i, w in zip(index, widths, strict=True)).rstrip()
            for r in (head, *rows)
        ]
        out += ([""] if out else []) + lines
    return out


def _default(obj: Any) -> Any:
    import numpy as np  # only here: `wgpsim --help` imports no numpy

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def print_json(payload: Any) -> None:
    """Print ``payload`` as JSON on stdout (numpy scalars and arrays become plain values)."""
    json.dump(payload, sys.stdout, indent=2, default=_default)
    sys.stdout.write("\n")


def print_lds_metrics(console: Any, result: Any, per_instruction: Any) -> None:
    """The run's LDS metrics under rocprof-compute's names (``wgpsim.measures.metrics``) and a
    per-instruction bank table (a DataFrame of ``instruction_metrics``), on a rich ``console``."""
    print_metric_tables(
        result_metrics(result), per_instruction.to_dict(orient="records"), console=console
    )


RATE_LEGEND = (
    "Bank Conflict Rate (%) = 100 x SQ_LDS_BANK_CONFLICT / (SQ_LDS_IDX_ACTIVE - "
    "SQ_LDS_BANK_CONFLICT): the bank-conflict cycles over the cycles the same passes take "
    "without a conflict (rocprof-compute's documented ratio; 300 = four times the ideal "
    "cycles). rocprof-compute's CDNA metric files scale it by 3.125 = 100/32, not 100 "
    "(wgpsim.measures.metrics)"
)
"""The legend line of the Bank Conflict Rate (the kernel report's ``rate%``)."""


def print_metric_tables(
    metrics: dict[str, Any], per_instruction: list[dict[str, Any]], console: Any = None
) -> None:
    """Print ``lds_metrics(...).to_dict()`` and the per-instruction rows as two tables."""
    from rich.table import Table

    console = rich_console() if console is None else console
    console.print("LDS metrics (rocprof-compute names):", soft_wrap=True)
    table = Table()
    table.add_column("metric", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    for name, value in metrics.items():
        table.add_row(name, _cell(value))
    console.print(table)
    console.print("per instruction (bank conflicts, static, no timing):", soft_wrap=True)
    console.print(_per_instruction_table(per_instruction, console.width))
    console.print(RATE_LEGEND)  # wrapped at the console width


def _per_instruction_table(rows: list[dict[str, Any]], width: int) -> Any:
    """One row per instruction when every counter name fits whole in ``width`` columns;
    otherwise one row per counter and a column per instruction, so that names such as
    ``SQ_LDS_BANK_CONFLICT`` are never broken (they are what a user greps for)."""
    from rich.table import Table

    columns = list(rows[0]) if rows else ["instruction"]
    cells = [[_cell(row[c]) for c in columns] for row in rows]
    widths = [max([len(str(c)), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    table = Table()
    if sum(w + 3 for w in widths) + 1 <= width:
        for i, column in enumerate(columns):
            table.add_column(str(column), justify="left" if i == 0 else "right", no_wrap=True)
        for row in cells:
            table.add_row(*row)
        return table
    table.add_column(str(columns[0]), no_wrap=True)
    for row in cells:
        table.add_column(row[0], justify="right", no_wrap=True)
    for i, column in enumerate(columns[1:], start=1):
        table.add_row(str(column), *(row[i] for row in cells))
    return table


def result_metrics(result: Any) -> dict[str, Any]:
    """``lds_metrics(result).to_dict()`` (imported late: the CLI starts fast)."""
    from wgpsim.measures.metrics import lds_metrics

    return lds_metrics(result).to_dict()


def _cell(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


ENGINE_HELP = (
    "timing engine (default auto: fast when built or for a large job, else des, which spares "
    "a fresh machine the fast engine's first compile; the two agree cycle for cycle)"
)
"""The help of every verb's ``--engine`` (``add_engine_arg``)."""


def add_engine_arg(parser: argparse.ArgumentParser) -> None:
    """``--engine`` of every verb that simulates (``kernel``, ``diff``, ``lower``, ``replay``):
    one of ``wgpsim.engine.ENGINES``, in that order, ``auto`` unless named. A shipped example's
    report and loop (a few thousand passes) cost less on des than loading even a cached fast
    engine, a large report loads ``fast`` up front (``kernel.report.engine_for``) and a fresh
    machine gets des up to ``engine.auto.COLD_DES_PASSES`` instead of a 16 CPU-s compile. An
    unknown name is one line and exit 2 (``_EngineName``).

    >>> p = argparse.ArgumentParser(prog="wgpsim replay")
    >>> add_engine_arg(p)
    >>> p.parse_args([]).engine, p.parse_args(["--engine", "des"]).engine
    ('auto', 'des')
    >>> p.parse_args(["--engine", "fast9"])
    Traceback (most recent call last):
    ...
    wgpsim.errors.ConfigError: unknown engine 'fast9' (valid: des, fast, auto)
    """
    from wgpsim.engine import DEFAULT_ENGINE, ENGINES

    parser.add_argument(
        "--engine",
        default=DEFAULT_ENGINE,
        action=_EngineName,
        metavar="{" + ",".join(ENGINES) + "}",
        help=ENGINE_HELP,
    )


class _EngineName(argparse.Action):
    """Store a known engine's name; else raise ``ConfigError``, which argparse lets through
    (it reports only its own errors, with the verb's usage), so the CLI prints one line."""

    def __call__(self, parser, namespace, value, option_string=None) -> None:
        from wgpsim.engine import ENGINES
        from wgpsim.errors import ConfigError

        if value not in ENGINES:
            raise ConfigError(f"unknown engine {value!r} (valid: {', '.join(ENGINES)})")
        setattr(namespace, self.dest, value)
