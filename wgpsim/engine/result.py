"""``Result``: what one simulated run measured (docs/DESIGN.md, "What a result holds").

Counters follow the rocprof LDS counters users compare against (rocprof-compute "Local Data
Share" panel): ``bank_cycles`` is the analogue of SQ_LDS_IDX_ACTIVE (cycles in the LDS
scheduler), ``bank_conflict_cycles`` (cycles beyond one per pass) of SQ_LDS_BANK_CONFLICT, so
rocprof's conflicts per access, BC / (IDX - BC), is ``bank_conflict_cycles / passes``.
``measurement()`` is what the seed's kernel reports: the difference of two ``clock`` reads of one
warp, maxed over warps.

>>> import pandas as pd
>>> r = Result(
...     clocks=pd.DataFrame({"warp": [0, 0, 1, 1], "label": ["start", "end"] * 2,
...                          "cycle": [11, 334, 11, 333]}),
...     total_cycles=345, bytes=65536, passes=256, bank_cycles=256,
...     port_busy_cycles={"L": 256, "C": 0}, partition_stall_cycles={"A": 128, "B": 128},
...     partition_accesses=(256, 0, 0, 0, 0, 0), instructions={"load": 128})
>>> r.measurement(), r.measurements().tolist(), round(r.raw_bytes_per_cycle, 1)
(323, [323, 322], 202.9)
>>> r.bank_conflict_cycles, r.to_dict()["port_busy_cycles"]
(0, {'L': 256, 'C': 0})
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from wgpsim.errors import TraceError

CLOCK_COLUMNS = ("warp", "label", "cycle")
EVENT_COLUMNS = (
    "cycle",
    "pair",
    "port",
    "warp",
    "row",
    "instruction",
    "pass_index",
    "partitions",
    "bank_cycles",
    "status",
)


@dataclass(frozen=True, eq=False)
class Result:
    """Counters of one run. ``clocks`` has one row per executed ``clock`` (warp, label, cycle)."""

    clocks: pd.DataFrame
    total_cycles: int
    bytes: int
    passes: int
    bank_cycles: int
    port_busy_cycles: dict[str, int]
    partition_stall_cycles: dict[str, int]
    partition_accesses: tuple[int, ...]
    instructions: dict[str, int]
    engine: str = "des"
    seed: int = 0
    hardware: str = "mi450"
    event_log: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def bank_conflict_cycles(self) -> int:
        """Bank cycles beyond one per pass (SQ_LDS_BANK_CONFLICT's analogue)."""
        return self.bank_cycles - self.passes

    def measurements(self, start: str = "start", end: str = "end") -> pd.Series:
        """Per warp: cycle of its last ``end`` clock minus cycle of its first ``start`` clock.

        Warps that read only one of the two labels are left out.
        """
        c = self.clocks
        first = c[c["label"] == start].groupby("warp")["cycle"].min()
        last = c[c["label"] == end].groupby("warp")["cycle"].max()
        both = first.index.intersection(last.index)
        return (last[both] - first[both]).rename("cycles").astype("int64")

    def measurement(self, start: str = "start", end: str = "end") -> int:
        """The kernel's measured cycles: the largest per-warp ``end - start``."""
        per_warp = self.measurements(start, end)
        if per_warp.empty:
            have = sorted(set(self.clocks["label"]))
            raise TraceError(
                f"no warp reads both clock labels {start!r} and {end!r} (labels read: {have})"
            )
        return int(per_warp.max())

    def _has_measurement(self) -> bool:
        return not self.measurements().empty

    @property
    def measured_cycles(self) -> int:
        """``measurement()`` when the trace has "start"/"end" clocks, else ``total_cycles``."""
        return self.measurement() if self._has_measurement() else self.total_cycles

    @property
    def raw_bytes_per_cycle(self) -> float:
        """Bytes moved over the measured cycles (the seed's "raw B/cycle")."""
        return self.bytes / self.measured_cycles if self.measured_cycles else 0.0

    def events(self) -> pd.DataFrame:
        """The per-cycle arbiter log: one row per granted pass and per stalled cycle."""
        if self.event_log is None:
            raise TraceError("no event log: run simulate(..., record_events=True)")
        return self.event_log

    def to_dict(self) -> dict[str, Any]:
        """JSON-able counters (snake_case keys); clocks as a list of records."""
        return {
            "engine": self.engine,
            "seed": self.seed,
            "hardware": self.hardware,
            "total_cycles": int(self.total_cycles),
            "measured_cycles": int(self.measured_cycles),
            "bytes": int(self.bytes),
            "raw_bytes_per_cycle": float(self.raw_bytes_per_cycle),
            "passes": int(self.passes),
            "bank_cycles": int(self.bank_cycles),
            "bank_conflict_cycles": int(self.bank_conflict_cycles),
            "port_busy_cycles": {k: int(v) for k, v in self.port_busy_cycles.items()},
            "partition_stall_cycles": {k: int(v) for k, v in self.partition_stall_cycles.items()},
            "partition_accesses": [int(v) for v in self.partition_accesses],
            "instructions": {k: int(v) for k, v in self.instructions.items()},
            "clocks": [
                {"warp": int(w), "label": str(lab), "cycle": int(c)}
                for w, lab, c in self.clocks[list(CLOCK_COLUMNS)].itertuples(index=False)
            ],
        }

    def summary(self) -> pd.Series:
        """The scalar counters as one flat Series (nested dicts become ``name_key``)."""
        flat: dict[str, Any] = {}
        for key, value in self.to_dict().items():
            if key == "clocks":
                continue
            if isinstance(value, dict):
                flat.update({f"{key}_{k}": v for k, v in value.items()})
            elif isinstance(value, list):
                flat.update({f"{key}_{i}": v for i, v in enumerate(value)})
            else:
                flat[key] = value
        return pd.Series(flat, dtype=object, name="result")
