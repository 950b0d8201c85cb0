"""``measurements.csv``: one row per warp per probe run, the kit's exchange format.

Columns ``probe``, ``warp``, ``cycles`` (more are allowed and kept: ``repeat``, ``kernel``...).
The runner (``run_probes.py``), the proton reader (:mod:`wgpsim.calibration.proton_trace`) and
``wgpsim calibrate predict`` all write it; ``fit`` and ``compare`` read it.

>>> import io
>>> read_measurements(io.StringIO("probe,warp,cycles\\nbanks_s4,0,62\\n")).to_dict("records")
[{'probe': 'banks_s4', 'warp': 0, 'cycles': 62}]
>>> read_measurements(io.StringIO("probe,warp\\nbanks_s4,0\\n"), "m.csv")
Traceback (most recent call last):
...
wgpsim.errors.ModuleError: m.csv: missing column 'cycles' (need probe, warp, cycles)
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import IO, TYPE_CHECKING

from wgpsim.calibration.measured_values import MAX_CYCLES, MAX_WARP, whole_number
from wgpsim.errors import ModuleError
from wgpsim.inputs import read_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "COLUMNS",
    "MAX_CYCLES",
    "MAX_WARP",
    "read_measurements",
    "read_spans",
    "whole_number",
    "write_measurements",
]

COLUMNS = ("probe", "warp", "cycles")
"""The columns every measurements file has."""

RANGES = {"warp": (0, MAX_WARP), "cycles": (0, MAX_CYCLES)}
"""The valid values of the numeric columns (whole numbers)."""


def read_measurements(source: str | Path | IO[str], name: str | None = None) -> pd.DataFrame:
    """The rows of a measurements CSV (a file read up to ``wgpsim.inputs.MAX_TEXT_BYTES``);
    a bad file is one ModuleError naming file, row, column, the value and its valid range."""
    import pandas as pd

    where = name or str(source)
    if isinstance(source, (str, Path)):
        try:
            source = io.StringIO(read_text(source, "measurements", ModuleError))
        except FileNotFoundError:
            raise ModuleError(f"{where}: no such measurements file") from None
    try:
        frame = pd.read_csv(source, dtype={c: str for c in COLUMNS})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise ModuleError(f"{where}: not a measurements CSV ({type(err).__name__})") from None
    for column in COLUMNS:
        if column not in frame.columns:
            raise ModuleError(f"{where}: missing column {column!r} (need {', '.join(COLUMNS)})")
    if not len(frame):
        raise ModuleError(f"{where}: no measurements")
    for column, (low, high) in RANGES.items():
        values = []
        for row, cell in enumerate(frame[column]):
            try:
                values.append(whole_number(cell, low, high))
            except ValueError as err:
                raise ModuleError(f"{where}: row {row + 2} column {column!r}: {err}") from None
        frame[column] = pd.Series(values, index=frame.index, dtype="int64")
    if frame["probe"].isna().any():
        row = int(frame["probe"].isna().to_numpy().nonzero()[0][0])
        raise ModuleError(f"{where}: row {row + 2}: empty probe name")
    return frame


def write_measurements(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` (at least :data:`COLUMNS`) as CSV, the three columns first."""
    columns = [*COLUMNS, *(c for c in frame.columns if c not in COLUMNS)]
    frame[columns].to_csv(path, index=False)
    return Path(path)


def read_spans(path: str | Path) -> pd.DataFrame:
    """Measurements from ``path``: a proton intra-kernel Chrome trace (``.json``, scopes named
    after the probes; :mod:`wgpsim.calibration.proton_trace`) or a measurements CSV."""
    if Path(path).suffix == ".json":
        from wgpsim.calibration.proton_trace import read_proton_trace

        return read_proton_trace(path)
    return read_measurements(path)
