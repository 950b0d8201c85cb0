"""Read rocprofv3 and rocprof-compute counter CSVs into one long table: kernel, dispatch,
counter, value.

Two layouts are read (the counters wgpsim compares: ``SQ_INSTS_LDS``, ``SQ_LDS_IDX_ACTIVE``,
``SQ_LDS_BANK_CONFLICT``; :mod:`wgpsim.measures.metrics` gives their definitions):

* **long**, rocprofv3's ``<pid>_counter_collection.csv`` (``rocprofv3 --pmc ...``; ROCm
  rocprofiler-sdk, "Using rocprofv3", kernel counter collection): one row per dispatch per
  counter (per dimension instance, when not collapsed), columns ``Correlation_Id,
  Dispatch_Id, Agent_Id, Queue_Id, Process_Id, Thread_Id, Grid_Size, Kernel_Id, Kernel_Name,
  Workgroup_Size, LDS_Block_Size, Scratch_Size, VGPR_Count, Accum_VGPR_Count, SGPR_Count,
  Start_Timestamp, End_Timestamp, Counter_Name, Counter_Value`` (the header rocprof-compute's
  own tests write for it); only ``Kernel_Name``, ``Counter_Name``, ``Counter_Value`` and a
  dispatch id (``Dispatch_Id`` / ``Dispatch_ID`` / ``dispatch_id``) are needed. Instances of
  one counter in one dispatch are summed.
* **wide**, rocprof-compute's ``pmc_perf.csv`` and rocprof v1's ``results.csv``: one row per
  dispatch, ``Dispatch_ID``, ``Kernel_Name`` and one column per counter.

>>> import io
>>> text = ("Dispatch_Id,Kernel_Name,Counter_Name,Counter_Value\\n"
...         "1,banks_s256,SQ_LDS_BANK_CONFLICT,120\\n1,banks_s256,SQ_LDS_BANK_CONFLICT,4\\n")
>>> read_counters(io.StringIO(text)).to_dict("records")
[{'kernel': 'banks_s256', 'dispatch': 1, 'counter': 'SQ_LDS_BANK_CONFLICT', 'value': 124.0}]
>>> wide = "Dispatch_ID,Kernel_Name,SQ_INSTS_LDS,GRBM_COUNT\\n0,banks_s4,2,900\\n"
>>> read_counters(io.StringIO(wide)).to_dict("records")[0]
{'kernel': 'banks_s4', 'dispatch': 0, 'counter': 'SQ_INSTS_LDS', 'value': 2.0}
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import IO, TYPE_CHECKING

from wgpsim.errors import ModuleError, shown
from wgpsim.inputs import read_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LDS_COUNTERS", "read_counters"]

LDS_COUNTERS = ("SQ_INSTS_LDS", "SQ_LDS_IDX_ACTIVE", "SQ_LDS_BANK_CONFLICT")
"""The LDS counters wgpsim simulates (``wgpsim.measures.metrics``)."""

MAX_COUNT = float(1 << 53)
"""Largest counter value read: 2**53, the last integer a float holds exactly."""

_DISPATCH = ("dispatch_id", "dispatch")
_KERNEL = ("kernel_name", "kernel")
_NAME = ("counter_name",)
_VALUE = ("counter_value",)
#: columns of a wide file that are not counters
_NOT_COUNTERS = {
    "dispatch_id", "gpu_id", "gpu-id", "queue_id", "queue-id", "pid", "tid", "grd", "grid_size",
    "wgr", "workgroup_size", "lds", "lds_block_size", "lds_per_workgroup", "scr", "scratch_size",
    "arch_vgpr", "vgpr_count", "accum_vgpr", "accum_vgpr_count", "sgpr", "sgpr_count",
    "wave_size", "sig", "obj", "kernel_name", "kernel_id", "correlation_id", "agent_id",
    "process_id", "thread_id", "start_timestamp", "end_timestamp", "begin_ns", "end_ns",
    "counter_id", "node",
}  # fmt: skip


def _number(cell: object) -> float:
    """A counter cell as a float: NaN if not a number; a number of 400 digits (which pandas
    reads as a Python int, and ``pd.to_numeric`` raises OverflowError on) is infinite."""
    try:
        return float(cell)  # type: ignore[arg-type]
    except OverflowError:  # an int pandas read whole
        return float("inf")
    except (TypeError, ValueError):
        return float("nan")


def _column(frame, names: tuple[str, ...]) -> str | None:
    lower = {c.lower(): c for c in frame.columns}
    return next((lower[n] for n in names if n in lower), None)


def read_counters(source: str | Path | IO[str], name: str | None = None) -> pd.DataFrame:
    """The counters of a rocprofv3 (long) or rocprof-compute (wide) CSV: one row per kernel,
    dispatch and counter, instances summed. Bad input is one ModuleError naming the file."""
    import pandas as pd

    where = name or str(source)
    if isinstance(source, (str, Path)):
        try:
            source = io.StringIO(read_text(source, "counter CSV", ModuleError))  # at most 8 MiB
        except FileNotFoundError:
            raise ModuleError(f"{where}: no such counter file") from None
    try:
        frame = pd.read_csv(source)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise ModuleError(f"{where}: not a counter CSV ({type(err).__name__})") from None
    kernel = _column(frame, _KERNEL)
    if kernel is None:
        raise ModuleError(f"{where}: no Kernel_Name column (a rocprofv3 or rocprof-compute CSV)")
    dispatch = _column(frame, _DISPATCH)
    ids = frame[dispatch] if dispatch else pd.Series(range(len(frame)))
    name_col, value_col = _column(frame, _NAME), _column(frame, _VALUE)
    if name_col and value_col:
        long = pd.DataFrame(
            {
                "kernel": frame[kernel].astype(str),
                "dispatch": ids,
                "counter": frame[name_col].astype(str),
                "value": frame[value_col],
            }
        )
    else:
        counters = [
            c for c in frame.columns if c.lower() not in _NOT_COUNTERS and c not in (kernel,)
        ]
        if not counters:
            raise ModuleError(f"{where}: no counter columns (and no Counter_Name/Counter_Value)")
        wide = frame[counters].assign(kernel=frame[kernel].astype(str), dispatch=ids)
        long = wide.melt(["kernel", "dispatch"], var_name="counter", value_name="value")
    values = pd.Series([_number(v) for v in long["value"]], index=long.index, dtype=float)
    bad = ~values.between(0, MAX_COUNT)  # NaN (not a number), infinite, negative, too large
    if bad.any():
        row = int(bad.to_numpy().nonzero()[0][0])
        problem = "is not a number" if values.isna().iloc[row] else "is out of range"
        raise ModuleError(
            f"{where}: counter {shown(long['counter'].iloc[row])}: value "
            f"{shown(long['value'].iloc[row])} {problem} (valid: 0..2**53)"
        )
    long["value"] = values.astype(float)
    return long.groupby(["kernel", "dispatch", "counter"], sort=False, as_index=False)[
        "value"
    ].sum()
