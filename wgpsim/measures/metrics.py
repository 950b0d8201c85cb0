"""LDS metrics named and computed as rocprof-compute reports them, plus the one it cannot see.

rocprof-compute's "Local Data Share (LDS)" panel (documentation page "Local data share (LDS)",
https://rocm.docs.amd.com/projects/rocprofiler-compute/en/latest/conceptual/local-data-share.html,
and its metric file ``analysis_configs/<arch>/1200_lds.yaml``) builds its LDS metrics from a few
hardware counters. A wgpsim run counts the same things, one pass at a time:

=========================  ==========================================  ============================
rocprof-compute            its definition                              wgpsim's count
=========================  ==========================================  ============================
LDS Instructions           ``SQ_INSTS_LDS``: LDS instructions          LDS instructions of the trace
                           executed
``SQ_LDS_IDX_ACTIVE``      cycles the LDS was busy with indexed        bank cycles of every pass
                           accesses ("Index Accesses")                 (``Result.bank_cycles``)
``SQ_LDS_BANK_CONFLICT``   cycles the LDS was stalled by bank          bank cycles beyond one per
                           conflicts ("Bank Conflict")                 pass
Bank Conflicts/Access      ``BANK_CONFLICT / (IDX_ACTIVE -             the same ratio
                           BANK_CONFLICT)``
Bank Conflict Rate         "the ratio of LDS cycles spent servicing    ``100 x BANK_CONFLICT /
                           bank conflicts over the number of LDS       (IDX_ACTIVE - BANK_CONFLICT)``
                           cycles that would have been required to     (percent)
                           move the same amount of data in an
                           uncontended access"
Utilization                "the ratio of the total number of cycles    busy port-cycles / (ports x
                           LDS was active over the total CU cycles"    cycles of the run) (percent)
(none)                     a profiler has no counter for it            partition-conflict cycles:
                                                                       cycles a pair's head pass
                                                                       waited for a partition held
                                                                       by the other pair
=========================  ==========================================  ============================

In the model ``IDX_ACTIVE - BANK_CONFLICT`` is exactly the number of passes, the cycles the
same bytes need without a conflict, so the Bank Conflict Rate is the documented ratio itself.
(rocprof-compute's CDNA metric files scale the ratio by 3.125 = 100/32 instead of 100, a
normalisation of that hardware's counter; wgpsim reports the documented ratio as a percent.)
The WGP has two ports, L and C, where a CDNA CU's LDS is one unit, so Utilization counts busy
port-cycles out of both ports' cycles: 100 % is both ports busy every cycle.

The seed's plain microbenchmark layout (323 cycles): no bank conflicts, but both pairs read
partition 0, so in every cycle one pair's head waits for the other's (254 partition-conflict
cycles over 256 passes) and port C stays idle: 256 busy port-cycles out of 2 x 323.

>>> from wgpsim.engine import simulate
>>> from wgpsim.trace.generate import streaming_trace
>>> plain = streaming_trace(4, 32, "ds_load_b128", lambda w: w * 16384, timed=True)
>>> m = lds_metrics(simulate(plain, engine="fast"))
>>> m.lds_instructions, m.idx_active, m.bank_conflict, m.bank_conflict_rate
(128, 256, 0, 0.0)
>>> m.partition_conflict_cycles, round(m.utilization, 1)
(254, 39.6)
>>> m.to_dict()["Bank Conflict Rate (%)"]
0.0

Per instruction, without timing (bank conflicts belong to one instruction; partition conflicts
need the timing and are in the run's totals):

>>> from wgpsim.trace import TraceBuilder
>>> b = TraceBuilder(1)
>>> b.load(0, "ds_load_b128", 16 * np.arange(32))   # conflict-free
>>> b.load(0, "ds_load_b32", 256 * np.arange(32))   # every lane in bank 0
>>> print(instruction_metrics(b.build()).iloc[:, :5].to_string(index=False))
 instruction  LDS Instructions  SQ_LDS_IDX_ACTIVE  SQ_LDS_BANK_CONFLICT  Bank Conflict Rate (%)
ds_load_b128                 1                  2                     0                     0.0
 ds_load_b32                 1                 32                    31                  3100.0
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from wgpsim.engine.result import Result
from wgpsim.hw.config import HardwareConfig
from wgpsim.measures.banks import bank_table
from wgpsim.trace.instructions import INSTRUCTIONS

if TYPE_CHECKING:  # imported where a table is built, so the CLI's parser stays light
    import pandas as pd

__all__ = ["NAMES", "LdsMetrics", "conflict_rate", "instruction_metrics", "lds_metrics"]

NAMES = {
    "lds_instructions": "LDS Instructions",
    "idx_active": "SQ_LDS_IDX_ACTIVE",
    "bank_conflict": "SQ_LDS_BANK_CONFLICT",
    "bank_conflict_rate": "Bank Conflict Rate (%)",
    "conflicts_per_access": "Bank Conflicts/Access",
    "utilization": "Utilization (%)",
    "partition_conflict_cycles": "Partition Conflict Cycles",
}
"""Field of :class:`LdsMetrics` -> the name rocprof-compute prints (the last is wgpsim's own)."""

_LDS_KINDS = frozenset(i.kind for i in INSTRUCTIONS.values())


@dataclass(frozen=True)
class LdsMetrics:
    """One run's LDS metrics (see the module docstring for each definition)."""

    lds_instructions: int
    idx_active: int
    bank_conflict: int
    bank_conflict_rate: float
    conflicts_per_access: float
    utilization: float
    partition_conflict_cycles: int

    def to_dict(self) -> dict[str, Any]:
        """The metrics under rocprof-compute's names (:data:`NAMES`), in its panel's order."""
        return {NAMES[key]: value for key, value in asdict(self).items()}


def conflict_rate(idx_active: int, bank_conflict: int) -> tuple[float, float]:
    """``(Bank Conflict Rate in percent, Bank Conflicts/Access)`` from the two counters.

    >>> conflict_rate(idx_active=48, bank_conflict=16)
    (50.0, 0.5)
    """
    uncontended = idx_active - bank_conflict
    if uncontended <= 0:
        return 0.0, 0.0
    per_access = bank_conflict / uncontended
    return 100.0 * per_access, per_access


def lds_metrics(result: Result) -> LdsMetrics:
    """The LDS metrics of one simulated run (any engine's :class:`~wgpsim.engine.Result`)."""
    rate, per_access = conflict_rate(result.bank_cycles, result.bank_conflict_cycles)
    ports = max(len(result.port_busy_cycles), 1)
    busy = sum(result.port_busy_cycles.values())
    cycles = result.measured_cycles
    return LdsMetrics(
        lds_instructions=int(sum(n for k, n in result.instructions.items() if k in _LDS_KINDS)),
        idx_active=int(result.bank_cycles),
        bank_conflict=int(result.bank_conflict_cycles),
        bank_conflict_rate=rate,
        conflicts_per_access=per_access,
        utilization=100.0 * busy / (ports * cycles) if cycles else 0.0,
        partition_conflict_cycles=int(sum(result.partition_stall_cycles.values())),
    )


def instruction_metrics(trace, hw: HardwareConfig | None = None) -> pd.DataFrame:
    """Per LDS instruction name: count, ``SQ_LDS_IDX_ACTIVE``, ``SQ_LDS_BANK_CONFLICT``, Bank
    Conflict Rate and Conflicts/Access, from the static bank table (no timing), in first-use
    order."""
    import pandas as pd

    banks = bank_table(trace, hw)
    columns = ["instruction", *(NAMES[k] for k in list(NAMES)[:5])]
    if not len(banks):
        return pd.DataFrame(columns=columns)
    grouped = banks.groupby("instruction", sort=False).agg(
        count=("row", "size"),
        idx=("bank_cycles", "sum"),
        bc=("bank_conflict_cycles", "sum"),
    )
    rates = [
        conflict_rate(int(i), int(c)) for i, c in zip(grouped["idx"], grouped["bc"], strict=True)
    ]
    return pd.DataFrame(
        {
            "instruction": grouped.index.to_list(),
            NAMES["lds_instructions"]: grouped["count"].to_numpy(dtype=np.int64),
            NAMES["idx_active"]: grouped["idx"].to_numpy(dtype=np.int64),
            NAMES["bank_conflict"]: grouped["bc"].to_numpy(dtype=np.int64),
            NAMES["bank_conflict_rate"]: [r for r, _ in rates],
            NAMES["conflicts_per_access"]: [a for _, a in rates],
        }
    )[columns]
