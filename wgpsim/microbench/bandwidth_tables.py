"""The tables of the LDS bandwidth microbenchmark (``kind: lds_bandwidth``,
:mod:`wgpsim.microbench.bandwidth`): the seed's table from the sweep's rows and the steady-state
fit behind each row, the table as the seed prints it, and the warnings of a poor fit.

Plain rows and values (:class:`~wgpsim.columns.Columns`), no pandas and no matplotlib.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wgpsim.columns import Columns
from wgpsim.errors import ConfigError
from wgpsim.measures.fit import SteadyStateFit, fit_steady_state
from wgpsim.measures.metrics import conflict_rate

#: Columns of the main table (also the ``--json`` fields).
TABLE_COLUMNS = (
    "layout",
    "cycles",
    "lds_bytes",
    "raw_bytes_per_cycle",
    "steady_bytes_per_cycle",
    "peak_bytes_per_cycle",
    "fixed_cycles",
    "r_squared",
    "speedup",
    "bank_conflict_cycles",
    "bank_conflict_rate",
)

POOR_FIT_R_SQUARED = 0.99
"""A fit with R² below this warns: ``cycles = fixed + bytes / rate`` does not describe the sweep
(the plain layout at 8 warps gives R² 0.975), so the steady rate and fixed cost are rough. The
AMD blog's layouts at 4 warps fit with R² 1.0000. (A judgement, not a hardware fact: 0.99 leaves
room for rounding of whole cycles at short bursts.)"""


def summarize(
    report_burst: int, sweep: Columns, peaks: Mapping[str, float]
) -> tuple[Columns, dict[str, SteadyStateFit]]:
    """The seed's table (one row per candidate at ``report_burst``) and the fits behind it.

    >>> sweep = Columns.from_rows([
    ...     {"layout": "plain", "burst": b, "bytes": 4096 * b, "cycles": 67 + 16 * b,
    ...      "lds_bytes": 65536, "raw_bytes_per_cycle": 4096 * b / (67 + 16 * b),
    ...      "bank_conflict_cycles": 0, "passes": 64 * b} for b in (8, 16, 32)])
    >>> table, fits = summarize(32, sweep, {"plain": 256})
    >>> table["cycles"], round(fits["plain"].rate, 1), round(fits["plain"].fixed, 1)
    ((579,), 256.0, 67.0)
    >>> display(table)["LDS"], display(table)["steady B/cycle"]
    (('64 KiB',), ('256.0',))
    """
    fits, rows = {}, []
    for layout, runs in _by_layout(sweep).items():
        nbytes = [run["bytes"] for run in runs]
        if len(set(nbytes)) < 2:  # the fit's one precondition, as a config error
            raise ConfigError(
                f"bursts {', '.join(str(run['burst']) for run in runs)} all move "
                f"{int(nbytes[0])} B with layout '{layout}', and the fit needs 2 "
                "distinct byte counts (a distributed layout wider than the tensor repeats "
                "elements: use longer bursts)"
            )
        fit = fits[layout] = fit_steady_state(nbytes, [run["cycles"] for run in runs])
        at = next(run for run in runs if run["burst"] == report_burst)
        rows.append(
            {
                "layout": layout,
                "cycles": int(at["cycles"]),
                "lds_bytes": int(at["lds_bytes"]),
                "raw_bytes_per_cycle": float(at["raw_bytes_per_cycle"]),
                "steady_bytes_per_cycle": fit.rate,
                "peak_bytes_per_cycle": float(peaks[layout]),
                "fixed_cycles": fit.fixed,
                "r_squared": fit.r_squared,
                "bank_conflict_cycles": int(at["bank_conflict_cycles"]),
                "bank_conflict_rate": conflict_rate(
                    int(at["bank_conflict_cycles"]) + int(at["passes"]),
                    int(at["bank_conflict_cycles"]),
                )[0],
            }
        )
    for row in rows:
        row["speedup"] = rows[0]["cycles"] / row["cycles"]
    return Columns.from_rows(rows, TABLE_COLUMNS), fits


def _by_layout(sweep: Columns) -> dict[str, list[dict[str, Any]]]:
    """The sweep's rows by candidate, candidates and rows in sweep order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in sweep.rows():
        groups.setdefault(row["layout"], []).append(row)
    return groups


def display(table: Columns) -> Columns:
    """The table as the seed prints it (strings, human headers)."""
    return Columns(
        {
            "layout": table["layout"],
            "cycles": tuple(map(str, table["cycles"])),
            "LDS": tuple(map(kib, table["lds_bytes"])),
            "raw B/cycle": tuple(map("{:.1f}".format, table["raw_bytes_per_cycle"])),
            "steady B/cycle": tuple(map("{:.1f}".format, table["steady_bytes_per_cycle"])),
            "peak B/cycle": tuple(map("{:g}".format, table["peak_bytes_per_cycle"])),
            "fixed cycles": tuple(map("{:.1f}".format, table["fixed_cycles"])),
            "R²": tuple(map("{:.4f}".format, table["r_squared"])),
            "speedup": tuple(map("{:.2f}x".format, table["speedup"])),
            "bank conflicts": tuple(
                f"{c} ({r:.0f}%)" if c else "0"
                for c, r in zip(
                    table["bank_conflict_cycles"], table["bank_conflict_rate"], strict=True
                )
            ),
        }
    )


def fit_notes(fits: Mapping[str, SteadyStateFit], warps: int) -> tuple[str, ...]:
    """A warning per candidate whose fit is poor (R² below :data:`POOR_FIT_R_SQUARED`)."""
    return tuple(
        f"{name}: poor steady-state fit (R² {fit.r_squared:.4f} < {POOR_FIT_R_SQUARED}) at "
        f"{warps} warps; cycles do not grow linearly with the burst, so the steady B/cycle "
        "and fixed cycles are rough (see sweep.csv)"
        for name, fit in fits.items()
        if fit.r_squared < POOR_FIT_R_SQUARED
    )


def kib(nbytes: int) -> str:
    """``64 KiB`` for whole KiB, ``67.98 KiB`` otherwise."""
    kib = nbytes / 1024
    return f"{kib:g} KiB" if kib == int(kib) else f"{kib:.2f} KiB"


__all__ = ["POOR_FIT_R_SQUARED", "TABLE_COLUMNS", "display", "fit_notes", "kib", "summarize"]
