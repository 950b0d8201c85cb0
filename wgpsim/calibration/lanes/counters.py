"""A profiler's counters of the lane-pair probes, probe by probe: every probe launches its
instruction's kernel (``lds_OP``), so a dispatch is told apart by its place among that kernel's
dispatches. ``measurements.csv`` (``run_probes.py``) says which launch of which kernel each
probe's timed run was (``kernel``, ``launch``: warm-ups counted); the counter CSV
(:func:`wgpsim.calibration.rocprof_csv.read_counters`) has the dispatches, whose ids grow in
launch order. The k-th dispatch of kernel K (by id) is launch k of K.

>>> import pandas as pd
>>> runs = pd.DataFrame({"probe": ["p", "q"], "warp": [0, 0], "cycles": [9, 9],
...     "kernel": ["lds_ds_read_b32"] * 2, "launch": [0, 1]})
>>> counters = pd.DataFrame({"kernel": ["lds_ds_read_b32"] * 2, "dispatch": [7, 12],
...     "counter": ["SQ_LDS_BANK_CONFLICT"] * 2, "value": [0.0, 16.0]})
>>> probe_counters(counters, runs).to_dict("records")
[{'probe': 'p', 'counter': 'SQ_LDS_BANK_CONFLICT', 'value': 0.0}, {'probe': 'q', 'counter': 'SQ_LDS_BANK_CONFLICT', 'value': 16.0}]
>>> probe_counters(counters.iloc[:1], runs)
Traceback (most recent call last):
...
wgpsim.errors.ModuleError: counters: kernel 'lds_ds_read_b32' has 1 dispatches, measurements.csv launched it 2 times (profile the same run_probes.py run)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wgpsim.errors import ModuleError, shown

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["missing_counter", "probe_counters"]

MISSING_PMC = {
    "SQ_LDS_BANK_CONFLICT": (
        "gfx950 has no LDS bank-conflict PMC in some ROCm versions (ROCm/rocMLIR#2005: enabled "
        "for gfx942 after ROCm 7.0, 'still no counters for gfx950'); `rocprofv3 -L` lists what "
        "your ROCm has; without --counters the fit reads the probes' s_memtime spans"
    ),
}
"""Counters a chip or ROCm version may lack, and what is known of it."""


def missing_counter(counter: str, where: str) -> ModuleError:
    """The one-line error for a counter the file lacks, with what is known of its absence.

    >>> print(missing_counter("SQ_LDS_BANK_CONFLICT", "c.csv"))  # doctest: +ELLIPSIS
    c.csv: no SQ_LDS_BANK_CONFLICT rows (gfx950 has no LDS bank-conflict PMC ...
    """
    known = MISSING_PMC.get(counter)
    why = f" ({known})" if known else " (collect it with rocprofv3 --pmc)"
    return ModuleError(f"{where}: no {counter} rows{why}")


def probe_counters(counters: pd.DataFrame, runs: pd.DataFrame, where: str = "counters"):
    """Per probe and counter: the median over the probe's timed launches (one row each).
    ``runs`` needs ``probe``, ``kernel``, ``launch`` (``run_probes.py`` writes them)."""
    import pandas as pd

    for column in ("kernel", "launch"):
        if column not in runs.columns:
            raise ModuleError(
                f"measurements: no {column!r} column (written by run_probes.py of this wgpsim)"
            )
    launches = runs.drop_duplicates(["probe", "kernel", "launch"])
    rows = []
    for kernel, mine in launches.groupby("kernel", sort=False):
        its = counters[counters["kernel"] == kernel]
        ids = sorted(its["dispatch"].unique())
        need = int(mine["launch"].max()) + 1
        if len(ids) < need:
            raise ModuleError(
                f"{where}: kernel {shown(kernel)} has {len(ids)} dispatches, measurements.csv "
                f"launched it {need} times (profile the same run_probes.py run)"
            )
        ordinal = {d: k for k, d in enumerate(ids)}
        at = its.assign(launch=its["dispatch"].map(ordinal))
        joined = mine[["probe", "launch"]].merge(at[["launch", "counter", "value"]], on="launch")
        rows.append(joined)
    if not rows:
        raise ModuleError(f"{where}: no dispatch of a probe kernel")
    table = pd.concat(rows, ignore_index=True)
    return (
        table.groupby(["probe", "counter"], sort=False)["value"]
        .median()
        .reset_index()[["probe", "counter", "value"]]
    )
