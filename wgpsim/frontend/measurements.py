"""``measurements.csv``: one row per warp per probe run, the kit's exchange format.

Columns ``probe``, ``warp``, ``cycles`` (more are allowed and kept: ``repeat``, ``kernel``...).
The runner (``run_probes.py``), the proton reader (:mod:`wgpsim.frontend.proton_trace`) and
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

from wgpsim.errors import ModuleError, shown
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


MAX_CYCLES = 1 << 48
"""Longest span a measurement may report, in cycles: 2**48 (three days at 1 GHz), the bound of a
trace's delays (``wgpsim.trace.validate.MAX_DELAY_CYCLES``), so no count read nears int64."""

MAX_WARP = (1 << 16) - 1
"""Highest warp id a measurement may name (the traces' bound, ``wgpsim.trace.io.MAX_WARPS``;
a probe has at most 32 warps)."""

RANGES = {"warp": (0, MAX_WARP), "cycles": (0, MAX_CYCLES)}
"""The valid values of the numeric columns (whole numbers)."""


def whole_number(value: object, low: int, high: int) -> int:
    """``value`` (a CSV cell or a JSON number: ``62``, ``"62"``, ``62.0``) as an int in
    ``low..high``; a ValueError saying what it is otherwise (never a wrapped int64).

    >>> whole_number(" 62 ", 0, 100), whole_number(62.0, 0, 100)
    (62, 62)
    >>> whole_number("9223372036854775808", 0, 2**48)
    Traceback (most recent call last):
    ...
    ValueError: '9223372036854775808' is out of range (valid: 0..281474976710656)
    >>> whole_number("1e30", 0, 2**48)
    Traceback (most recent call last):
    ...
    ValueError: '1e30' is out of range (valid: 0..281474976710656)
    """
    valid = f"(valid: {low}..{high})"
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.lstrip("+-").isdigit():
        digits = len(text.lstrip("+-"))
        if digits > 20:
            raise ValueError(f"an integer of {digits} digits is out of range {valid}")
        number: float = int(text)
    elif isinstance(value, (int, float, str)) and not isinstance(value, bool):
        try:
            number = float(text)
        except (TypeError, ValueError):
            raise ValueError(f"{shown(value)} is not a whole number {valid}") from None
    else:
        raise ValueError(f"{shown(value)} is not a whole number {valid}")
    if number != number or not float(low) <= number <= float(high):  # NaN, inf, too large
        raise ValueError(f"{shown(value)} is out of range {valid}")
    if number != int(number):
        raise ValueError(f"{shown(value)} is not a whole number {valid}")
    return int(number)


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
    after the probes; :mod:`wgpsim.frontend.proton_trace`) or a measurements CSV."""
    if Path(path).suffix == ".json":
        from wgpsim.frontend.proton_trace import read_proton_trace

        return read_proton_trace(path)
    return read_measurements(path)
