"""What an experiment kind is: the runner a ``kind:`` names (:func:`register_kind`) and the
:class:`ExperimentResult` it returns (tables, a typed summary, figures on demand).

A job's kind module registers its runner here; ``wgpsim.experiments`` imports the kind modules
and runs a config by its ``kind`` (``run_experiment``).

>>> @register_kind("doc_example")
... def run(raw, source, **_):
...     return ExperimentResult("doc_example", "an example", {})
>>> KINDS["doc_example"] is run
True
>>> del KINDS["doc_example"]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wgpsim.columns import Columns
from wgpsim.errors import ConfigError, shown
from wgpsim.extras import require
from wgpsim.files import atomic_write, is_safe_stem

if TYPE_CHECKING:  # imported by the experiments that build tables; `wgpsim --help` stays light
    import pandas as pd


Runner = Callable[..., "ExperimentResult"]

KINDS: dict[str, Runner] = {}
"""Kind name -> its runner, as the kind modules registered them."""


@dataclass(frozen=True)
class ExperimentResult:
    """What an experiment produced.

    ``tables`` maps a name to a DataFrame (the first is the main one, :attr:`table`); a kind
    may give :class:`~wgpsim.columns.Columns` instead (``lds_bandwidth`` does: ``wgpsim run``
    then prints and writes them without importing pandas), which :func:`run_experiment`
    turns into DataFrames (:meth:`frames`) unless asked not to (``frames=False``, the CLI);
    ``summary`` holds what tables do not, as the kind's frozen dataclass (e.g.
    ``LdsBandwidthSummary``: the parsed config, fits, peaks), read by attribute; ``overrides``
    lists the changes to the config files the run used (``--set`` items, ``hardware_overrides``,
    ``--hw``), which figure titles show (:meth:`title`); ``notes`` are warnings about the
    results (a poor fit) that the CLI prints; ``report``, if the kind gives one, is its whole
    result in words, which ``wgpsim run`` (and the kind's own verb) prints in place of the
    display table (``layout_search``: the ranking, references, Pareto front, winner's code); ``display`` is the
    main table formatted for people (strings, headers as the seed writes them), if the kind
    gives one (a DataFrame or Columns, as the tables). ``figures`` maps a file stem to a ``matplotlib.figure.Figure`` or a callable
    returning one (built only when written): experiments sit below ``wgpsim.plots``, so the
    figures are attached above them, with :meth:`with_figures` (``wgpsim run`` does it).
    """

    kind: str
    name: str
    tables: dict[str, pd.DataFrame | Columns]
    summary: Any = None
    display: pd.DataFrame | Columns | None = None
    figures: dict[str, Any] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    report: str | None = None
    headlines: tuple[tuple[str, Any], ...] = ()
    """``(title, table)`` pairs ``wgpsim run`` prints before :attr:`display`: the result a
    config section is about, when it is not the kind's main table (``lds_bandwidth`` with a
    ``drift:`` section: the partition-conflict rate and cycles per jitter)."""

    @property
    def table(self) -> pd.DataFrame | Columns:
        """The main table (the first of :attr:`tables`)."""
        return next(iter(self.tables.values()))

    def frames(self) -> ExperimentResult:
        """This result with every table (and ``display``) a DataFrame: what the Python API
        returns (pandas is imported only if a table is :class:`~wgpsim.columns.Columns`)."""
        if not any(isinstance(t, Columns) for t in (*self.tables.values(), self.display)):
            return self
        tables = {n: _frame(t) for n, t in self.tables.items()}
        return replace(self, tables=tables, display=_frame(self.display))

    def title(self, text: str) -> str:
        """``text`` with the run's name and the overrides it used, for figure and table titles.

        >>> ExperimentResult("k", "lds", {}, overrides=("warps=8",)).title("Bandwidth")
        'Bandwidth (lds; warps=8)'
        """
        details = "; ".join((self.name, *self.overrides))
        joint = "\n" if len(text) + len(details) > 75 else " "
        return f"{text}{joint}({details})"

    @property
    def details(self) -> tuple[str, ...]:
        """The run's name and the overrides it used: a figure's caption
        (``wgpsim.plots.captions``), so its title stays short.

        >>> ExperimentResult("k", "lds", {}, overrides=("warps=8",)).details
        ('lds', 'warps=8')
        """
        return (self.name, *self.overrides)

    def with_figures(self, figures: Mapping[str, Any]) -> ExperimentResult:
        """A copy with ``figures`` added (name -> Figure or callable returning one)."""
        return replace(self, figures={**self.figures, **figures})

    def records(self, name: str | None = None) -> list[dict[str, Any]]:
        """The main table (or the table ``name``) as a list of plain dicts (what ``--json``
        prints)."""
        table = self.table if name is None else self.tables[name]
        if isinstance(table, Columns):
            return table.rows()
        return [
            {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
            for row in table.to_dict(orient="records")
        ]

    def write(self, out_dir: str | Path, parquet: bool = False) -> list[Path]:
        """Write every table as CSV (and Parquet) and every figure as PNG into ``out_dir``.

        Each file is written atomically (``wgpsim.files.atomic_write``): an interrupted run leaves
        no half-written file.
        """
        unsafe = [n for n in (*self.tables, *self.figures) if not is_safe_stem(str(n))]
        if unsafe:  # before any file is written (a kind names files after its candidates)
            raise ConfigError(
                f"{self.kind}: {shown(unsafe[0])} cannot name a file (use letters, digits and "
                "_.+- only)"
            )
        if parquet:
            require("pyarrow", "parquet", "writing Parquet tables")
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for name, table in self.tables.items():
            written.append(out_dir / f"{name}.csv")
            if isinstance(table, Columns):
                atomic_write(written[-1], table.write_csv)
            else:
                atomic_write(written[-1], lambda p, df=table: df.to_csv(p, index=False))
            if parquet:
                written.append(out_dir / f"{name}.parquet")
                df = _frame(table)
                atomic_write(written[-1], lambda p, df=df: df.to_parquet(p, index=False))
        for name, make in self.figures.items():
            written.append(out_dir / f"{name}.png")
            atomic_write(written[-1], lambda p, make=make: _save_figure(make, p))
        return written


def _frame(table: Any) -> Any:
    """``table`` as a DataFrame if it is :class:`~wgpsim.columns.Columns` (else itself)."""
    return table.to_frame() if isinstance(table, Columns) else table


def _save_figure(make: Callable[[], Any], path: Path) -> None:
    fig = make() if callable(make) else make
    fig.savefig(path, format=path.suffix.lstrip(".") or "png", dpi=120, bbox_inches="tight")


def register_kind(name: str) -> Callable[[Runner], Runner]:
    """Decorator: make ``runner`` the experiment for ``kind: name``."""

    def decorate(runner: Runner) -> Runner:
        KINDS[name] = runner
        return runner

    return decorate
