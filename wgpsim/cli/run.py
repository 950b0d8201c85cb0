"""``wgpsim run CONFIG``: run an experiment from YAML and write its tables and figures.

::

    wgpsim run configs/lds_bandwidth.yaml                 # table on stdout, files in results/
    wgpsim run configs/lds_bandwidth.yaml --json          # the table as JSON rows, for scripts
    wgpsim run configs/lds_bandwidth.yaml --set dtype=fp32 --set timing.lds_latency=40

    wgpsim run configs/lds_bandwidth.yaml --workers 2     # two local processes (default: all cores)
    wgpsim run configs/lds_bandwidth.yaml --scheduler tcp://host:8786   # on a Dask cluster
    wgpsim run configs/lds_bandwidth.yaml --resume        # after an interruption: only what is missing

Files go to ``--out DIR`` (default ``results/<config stem>/``): every table as CSV (and Parquet
with ``--parquet``) and every figure as PNG, written as a whole: into ``DIR/.wgpsim-partial/``
first, moved into ``DIR`` once every one (and the checkpoint) is written, so a run that fails
leaves ``DIR`` exactly as it was (``wgpsim.files.staged``). The config is validated before
anything runs or is written; a bad one is one line on stderr and exit code 2.

Each finished sweep point is appended to the stage's ``checkpoint.jsonl`` (begun as a copy of
``DIR/checkpoint.jsonl``) as it completes; a run that fails removes its stage, one that is
interrupted (Ctrl-C, a kill) keeps that checkpoint. ``--resume`` computes only the points
missing from it, and the tables are the same as an uninterrupted run's.
Where the points run (``--workers`` or the config's ``execution: {workers: N}``, ``--scheduler``
or ``$WGPSIM_SCHEDULER``) is described in ``wgpsim.sweeps.executor``; the results do not
depend on it. A scheduler is never read from a config file: connecting to one trusts it, since
what it returns is unpickled in this process.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wgpsim.cli._common import (
    add_hw_option,
    column_groups,
    output_width,
    print_json,
    rich_console,
)
from wgpsim.cli._foreign import all_infeasible, foreign_prefix, refuse
from wgpsim.errors import ConfigError, WgpsimError
from wgpsim.extras import require
from wgpsim.files import STAGE, commit_stage, discard_stage, prepare_stage

if TYPE_CHECKING:  # the handler imports the experiments: `wgpsim --help` stays fast
    from wgpsim.experiments import ExperimentResult

SCHEDULER_ENV = "WGPSIM_SCHEDULER"
"""``wgpsim.sweeps.executor.SCHEDULER_ENV``, named here for the help text without
importing the experiments (tests/test_cli_startup.py checks that the two agree)."""

CHECKPOINT = "checkpoint.jsonl"
"""The file in the output directory that records every finished sweep point."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run an experiment from a YAML config",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
    )
    parser.add_argument(
        "config",
        type=Path,
        nargs="+",
        help="experiment YAML (its `kind` picks the experiment); several run in turn, and "
        "among several a hardware file (configs/mi450.yaml, ...) is skipped with a note",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="directory for the results (default: results/<config stem>/; several configs: "
        "DIR/<config stem>/)",
    )
    parser.add_argument("--json", action="store_true", help="print the main table as JSON rows")
    parser.add_argument("--parquet", action="store_true", help="also write tables as Parquet")
    add_hw_option(parser, "hardware YAML replacing the config's `hardware`")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field (dotted keys reach nested fields; VALUE is YAML)",
    )
    add_execution_args(parser)
    parser.set_defaults(handler=handle)


def add_execution_args(parser: argparse.ArgumentParser) -> None:
    """``--workers``, ``--scheduler`` and ``--resume``: where a sweep runs (``run``, ``search``)."""
    parser.add_argument(
        "--workers",
        type=_positive,
        metavar="N",
        help="local worker processes (default: every core; 1 = in this process)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDR",
        help=(
            f"run the points on this Dask scheduler (tcp://host:8786; default ${SCHEDULER_ENV}) "
            "instead of locally. Connecting trusts the scheduler: it runs code in this process"
        ),
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help=f"reuse the points in DIR/{CHECKPOINT} and compute only the missing ones",
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number >= 1")
    return value


def handle(args: argparse.Namespace) -> int:
    configs = experiment_configs(args.config)
    for config in configs:
        if len(configs) == 1:
            out = args.out if args.out is not None else Path("results") / config.stem
        else:
            out = (args.out if args.out is not None else Path("results")) / config.stem
            print(f"== {config}", flush=True)
        result, written = execute(args, config, args.overrides, out=out, frames=False)
        show(result, written, as_json=args.json)
    return 0


def experiment_configs(paths: list[Path]) -> list[Path]:
    """``paths`` without the hardware files among several (``wgpsim run configs/*.yaml``: the
    folder holds mi450.yaml, gfx950.yaml, gfx942.yaml beside the experiments), each skipped
    with a note on stderr; one hardware file alone is the config's one-line error (use
    ``--hw``)."""
    if len(paths) == 1:
        return paths
    from wgpsim.inputs import load_yaml
    from wgpsim.sweeps.config import is_hardware_mapping

    kept = []
    for path in paths:
        try:
            hardware = path.is_file() and is_hardware_mapping(
                load_yaml(path.read_text(), str(path))
            )
        except (ConfigError, OSError, UnicodeDecodeError):
            hardware = False  # the run reports what is wrong with it
        if hardware:
            print(f"wgpsim: note: skipped {path}: a hardware file (give it with --hw)",
                  file=sys.stderr)  # fmt: skip
        else:
            kept.append(path)
    if not kept:
        raise ConfigError("no experiment config among the files given (all hardware files)")
    return kept


def show(result: ExperimentResult, written: list[Path], *, as_json: bool) -> None:
    """Print a run's result: its ``report`` if the kind wrote one (with ``--json``: every
    table's rows by table name, and ``written``: the files written), else the main table (``--json``: its rows). ``wgpsim run`` and the verbs
    that run one kind (``wgpsim search``) print through here, so they print the same."""
    if as_json:
        if result.report is None:
            print_json(result.records())
        else:
            tables = {name: result.records(name) for name in result.tables}
            print_json({**tables, "written": [str(p) for p in written]})
    elif result.report is None:
        _print_table(result, written)
    else:
        print(result.report)
        for path in written:
            print(f"wrote {path}")


def execute(
    args: argparse.Namespace,
    config: Any,
    overrides: list[Any],
    *,
    out: Path | None,
    kind: str | None = None,
    frames: bool = True,
) -> tuple[ExperimentResult, list[Path]]:
    """Run ``config`` with ``overrides`` as the flags of ``args`` say (``--hw``, ``--workers``,
    ``--scheduler``, ``--resume``, ``--parquet``, ``--json``); with ``out``, write its tables and
    figures there, each atomically, under the checkpoint's lock (``wgpsim run``, ``wgpsim
    search --out``). Returns the result and the files written; its tables are DataFrames, or
    with ``frames=False`` as the kind built them (``Columns``: no pandas import for them)."""
    from wgpsim.experiments import run_experiment

    progress = _progress_bar if not args.json and sys.stderr.isatty() else None
    if getattr(args, "parquet", False):  # before the run, not after it
        require("pyarrow", "parquet", "--parquet")
    if out is not None and out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: is a file; give a directory for the results")
    resume = getattr(args, "resume", False)
    if resume and out is None:
        raise ConfigError("--resume: give --out DIR, the directory of the run to resume")
    checkpoint = _staged_checkpoint(out, resume) if out is not None else None
    created = out is not None and not out.exists()
    foreign = foreign_prefix(config, args.hw)
    try:  # the lock (taken when the first sweep starts) is held until every file is written
        try:
            result = run_experiment(
                config,
                hw_path=args.hw,
                overrides=overrides,
                progress=progress,
                workers=args.workers,
                scheduler=args.scheduler or os.environ.get(SCHEDULER_ENV) or None,
                checkpoint=checkpoint,
                kind=kind,
                frames=frames,
            )
        except WgpsimError as err:
            if foreign is None:
                raise
            raise refuse(foreign, err.messages[0]) from None
        if foreign is not None and all_infeasible(result):
            raise refuse(foreign, all_infeasible(result))
        if checkpoint is None:
            return result, []
        result = result.with_figures(figures_for(result))
        checkpoint.start()
        written = result.write(checkpoint.path.parent, parquet=getattr(args, "parquet", False))
        checkpoint.finish()
        commit_stage(out)
    except BaseException as err:
        if checkpoint is not None and checkpoint.started:  # this run's stage, not another's
            interrupted = isinstance(err, KeyboardInterrupt)  # --resume goes on from its points
            discard_stage(out, keep=(CHECKPOINT,) if interrupted else ())
        raise
    finally:
        if checkpoint is not None:
            started = checkpoint.started
            checkpoint.close()  # the lock's file goes: a directory this run made may be empty
            if created and started:
                with contextlib.suppress(OSError):
                    out.rmdir()
    return result, [out / path.name for path in written]


def _staged_checkpoint(out: Path, resume: bool) -> Any:
    """The checkpoint of a run into ``out``: in ``out``'s stage (``wgpsim.files``), begun as
    a copy of the last finished run's, under ``out``'s lock; the stage is emptied of what an
    interrupted run left there, its checkpoint kept, once the lock is held."""
    from wgpsim.sweeps.checkpoint import Checkpoint

    checkpoint = Checkpoint(
        out / STAGE / CHECKPOINT,
        resume=resume,
        lock=True,
        lock_path=out / f".{CHECKPOINT}.lock",
        seed=out / CHECKPOINT,
    )
    checkpoint.prepare = lambda: prepare_stage(out, keep=(CHECKPOINT,))
    return checkpoint


def _progress_bar(items, *, total: int, desc: str = ""):
    from tqdm import tqdm

    return tqdm(items, total=total, desc=desc, file=sys.stderr, leave=False)


def figures_for(result: ExperimentResult) -> dict[str, Any]:
    """Figures the ``wgpsim.plots`` modules named for ``result.kind`` (``plots.FIGURES``) draw."""
    import wgpsim.plots as plots

    figures: dict[str, Any] = {}
    for name in plots.FIGURES.get(result.kind, ()):
        module = importlib.import_module(f"{plots.__name__}.{name}")
        figures.update(module.result_figures(result))
    return figures


def _print_table(result: ExperimentResult, written: list[Path]) -> None:
    """Print the result table (its title says "simulated"); prose columns (like a ranking's
    reasons) go below it as notes.

    A table wider than the terminal (or than ``COLUMNS``) is printed as several tables of the
    columns that fit, each repeating the first (key) column: no column is ever squeezed away.
    """
    from wgpsim.columns import Columns

    shown = Columns.of(result.display if result.display is not None else result.table)
    prose = [c for c in shown.columns[1:] if max(map(len, map(str, shown[c])), default=0) > _PROSE]
    title = _title(result)
    cells = shown.select(c for c in shown.columns if c not in prose)
    width = output_width()
    console = rich_console(width=width, highlight=False)
    for heading, table in result.headlines:  # what the config is about, first
        _print_cells(console, Columns.of(table), _title(result, heading), width)
        console.print()
    _print_cells(console, cells, title, width)
    for column in prose:
        console.print(f"{column}:")
        for key, text in zip(shown[shown.columns[0]], shown[column], strict=True):
            console.print(textwrap.fill(f"  {key}: {text}", width, subsequent_indent="    "))
    for note in result.notes:
        console.print(textwrap.fill(f"warning: {note}", width), style="yellow")
    for path in written:
        console.print(f"wrote {path}", style="dim", soft_wrap=True)  # a path stays whole


def _title(result: ExperimentResult, heading: str = "") -> str:
    """``kind: name[, heading], simulated (overrides)``: a printed table's title."""
    title = result.kind if result.name == result.kind else f"{result.kind}: {result.name}"
    title += f", {heading}" if heading else ""
    title += ", simulated"  # the model's numbers, never a measurement
    if result.overrides:
        title += f" ({'; '.join(result.overrides)})"
    return title


def _print_cells(console: Any, cells: Any, title: str | None, width: int) -> None:
    """``cells`` as rich tables of the columns that fit ``width``, the first titled."""
    if title is not None and len(title) > width:
        title = textwrap.fill(title, width)
    for part in column_groups(cells, width):
        console.print(_rich_table(cells.select(part), title))
        title = None


def _rich_table(cells: Any, title: str | None) -> Any:
    from rich.table import Table

    table = Table(title=title)
    for i, column in enumerate(cells.columns):
        table.add_column(
            str(column), justify="left" if i == 0 else "right", no_wrap=True, min_width=len(column)
        )
    for row in zip(*(cells[c] for c in cells.columns), strict=True):
        table.add_row(*(_cell(v) for v in row))
    return table


_PROSE = 40
"""A column whose longest cell exceeds this many characters is printed below the table."""


def _cell(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


__all__ = ["add_execution_args", "execute", "figures_for", "handle", "register", "show"]
