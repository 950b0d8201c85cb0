"""A small table as numpy columns: what the loop's accounting computes, with the pandas table
built only when one is read (``--csv``, HTML, a notebook), so the text report imports no pandas.

>>> t = Columns(("op", "exposed"), (np.array(["load A", "load B"], dtype=object),
...                                 np.array([12.0, 3.5])))
>>> len(t), t["exposed"].tolist(), [r.op for r in t.rows()]
(2, [12.0, 3.5], ['load A', 'load B'])
>>> t.records()  # as DataFrame.to_dict(orient="records") gives them: Python scalars
[{'op': 'load A', 'exposed': 12.0}, {'op': 'load B', 'exposed': 3.5}]
>>> t.frame().shape
(2, 2)
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, eq=False)
class Columns:
    """Equal-length columns ``values`` named ``names``, in order."""

    names: tuple[str, ...]
    values: tuple[np.ndarray, ...]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.values[self.names.index(name)]

    def __len__(self) -> int:
        return len(self.values[0]) if self.values else 0

    def rows(self) -> Iterator[Any]:
        """One named tuple per row (as ``DataFrame.itertuples(index=False)``)."""
        row = namedtuple("Row", self.names)  # noqa: PYI024 (names known at run time)
        for values in zip(*(v.tolist() for v in self.values), strict=True):
            yield row(*values)

    def records(self) -> list[dict[str, Any]]:
        """One dict per row with Python scalars (JSON-able)."""
        return [dict(zip(self.names, r, strict=True)) for r in self.rows()]

    def take(self, order: np.ndarray) -> Columns:
        """The rows in ``order`` (indices)."""
        return Columns(self.names, tuple(v[order] for v in self.values))

    def frame(self) -> pd.DataFrame:
        """The pandas table (built on each call; :class:`LoopTiming` keeps its own)."""
        import pandas as pd

        return pd.DataFrame(
            dict(zip(self.names, self.values, strict=True)), columns=list(self.names)
        )
