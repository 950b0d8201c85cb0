"""``Columns``: a small table of named columns of plain values, for the tables a command writes
and prints without importing pandas (issue 18: pandas' import is about 0.26 CPU-s, a quarter
of a warm ``wgpsim run configs/lds_bandwidth.yaml``).

An experiment builds its rows, the CLI prints them and writes them as CSV, byte for byte what
``DataFrame.to_csv(path, index=False)`` writes for columns of one type each (ints, floats,
strings, bools; a missing value is an empty field); the Python API converts them with
:meth:`Columns.to_frame` (``run_experiment`` returns DataFrames).

>>> t = Columns.from_rows([{"layout": "plain", "cycles": 323, "speedup": 1.0},
...                        {"layout": "partitioned", "cycles": 195, "speedup": 323 / 195}])
>>> t.columns, t["cycles"], len(t)
(('layout', 'cycles', 'speedup'), (323, 195), 2)
>>> print(t.csv_text(), end="")
layout,cycles,speedup
plain,323,1.0
partitioned,195,1.6564102564102565
>>> t.select(["layout"]).rows()
[{'layout': 'plain'}, {'layout': 'partitioned'}]
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Columns:
    """Named columns of equal length (name -> tuple of values), in table order."""

    data: Mapping[str, tuple[Any, ...]]

    def __post_init__(self) -> None:
        lengths = {len(v) for v in self.data.values()}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")

    @classmethod
    def from_rows(
        cls, rows: Iterable[Mapping[str, Any]], columns: Sequence[str] | None = None
    ) -> Columns:
        """From row dicts; the columns are ``columns``, else every key in the order first seen
        (as ``pd.DataFrame(rows)`` orders them); a row without a column's key has None there."""
        rows = list(rows)
        names = columns if columns is not None else dict.fromkeys(k for r in rows for k in r)
        return cls({n: tuple(r.get(n) for r in rows) for n in names})

    @classmethod
    def of(cls, table: Columns | pd.DataFrame) -> Columns:
        """``table`` itself, or a DataFrame's columns as plain Python values (``tolist``)."""
        if isinstance(table, Columns):
            return table
        return cls({str(c): tuple(table[c].tolist()) for c in table.columns})

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.data)

    def __getitem__(self, name: str) -> tuple[Any, ...]:
        return self.data[name]

    def __contains__(self, name: object) -> bool:
        return name in self.data

    def __len__(self) -> int:
        return len(next(iter(self.data.values()), ()))

    def select(self, names: Iterable[str]) -> Columns:
        """The columns ``names``, in that order."""
        return Columns({n: self.data[n] for n in names})

    def rows(self) -> list[dict[str, Any]]:
        """One dict per row, numpy scalars as plain Python values (what ``--json`` prints)."""
        plain = {n: [_plain(v) for v in values] for n, values in self.data.items()}
        return [dict(zip(plain, row, strict=True)) for row in zip(*plain.values(), strict=True)]

    def csv_text(self) -> str:
        """The table as CSV text: what ``to_frame().to_csv(index=False)`` writes."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")  # pandas' defaults: minimal quoting
        writer.writerow(self.columns)
        cells = [[_csv_cell(v) for v in values] for values in self.data.values()]
        writer.writerows(zip(*cells, strict=True))
        return out.getvalue()

    def write_csv(self, path: str | Path) -> None:
        """Write :meth:`csv_text` to ``path`` (as pandas does: UTF-8, ``\\n`` line ends)."""
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(self.csv_text())

    def to_frame(self) -> pd.DataFrame:
        """The table as a DataFrame (pandas is imported here)."""
        import pandas as pd

        return pd.DataFrame({n: list(v) for n, v in self.data.items()}, columns=self.columns)


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _csv_cell(value: Any) -> str:
    """A value as pandas writes it: ``str`` (a float's shortest repr), a missing one empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


__all__ = ["Columns"]
