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

An engine may hand over its clock reads as arrays (:class:`ClockReads`): ``measurement()`` then
reads them directly and the ``clocks`` table is built only when it is read (sweeps measure
thousands of runs and never look at the table).

>>> reads = ClockReads(np.array([0, 0]), np.array([0, 1]), np.array([11, 334]), ("start", "end"))
>>> r2 = Result(clocks=reads, total_cycles=345, bytes=0, passes=0, bank_cycles=0,
...     port_busy_cycles={}, partition_stall_cycles={}, partition_accesses=(), instructions={})
>>> r2.measurement(), r2.clocks.to_dict("list")
(323, {'warp': [0, 0], 'label': ['start', 'end'], 'cycle': [11, 334]})
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from wgpsim.errors import TraceError
from wgpsim.trace.instructions import OPS

if TYPE_CHECKING:  # pandas is imported where a table is built, so `import wgpsim.engine` is light
    import pandas as pd

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
LOG_COLUMNS = ("cycle", "pair", "port", "warp", "row", "k", "status")
"""The columns of an engine's event log (:class:`EventLog`), as int64."""
OP_TIMES = ("arrive", "issue", "granted", "served", "complete", "leave", "stall_cycles")
"""Per trace row, when asked (``simulate(..., record_ops=True)``; -1 where a column does not
apply): ``arrive`` the cycle the warp reached the row (before any drift jitter); LDS rows:
``issue`` the cycle it entered its pair's queue, ``granted`` the cycle its first pass was
granted, ``served`` the cycle its last pass's bank cycles end (no pass: ``issue``),
``complete`` the cycle it leaves the DS counter (``served + lds_latency``); every row:
``leave`` the cycle the warp moved past it (an LDS row: its issue; ``wait_ds``/``barrier``:
when it resumed); ``stall_cycles`` partition-conflict stall cycles of the row's passes."""
OP_COLUMNS = ("row", "warp", "op", *OP_TIMES)


@dataclass(frozen=True, eq=False)
class ClockReads:
    """Clock reads as arrays: ``warp``, ``label`` (an index into ``labels``) and ``cycle`` per
    read, in the order the engine recorded them."""

    warp: np.ndarray
    label: np.ndarray
    cycle: np.ndarray
    labels: tuple[str, ...]

    def frame(self) -> pd.DataFrame:
        """The ``Result.clocks`` table (warp, label, cycle)."""
        import pandas as pd

        names = np.array(self.labels, dtype=object)
        columns = (self.warp, names[self.label], self.cycle)
        return pd.DataFrame(dict(zip(CLOCK_COLUMNS, columns, strict=True)))

    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> ClockReads:
        """The reads of a ``clocks`` table (labels numbered in sorted order)."""
        labels, codes = np.unique(frame["label"].to_numpy(dtype=object), return_inverse=True)
        warp, cycle = (frame[c].to_numpy(dtype=np.int64) for c in ("warp", "cycle"))
        return cls(warp, codes.reshape(-1), cycle, tuple(str(x) for x in labels))

    def of(self, label: str) -> np.ndarray:
        """Which reads have ``label``."""
        if label not in self.labels:
            return np.zeros(len(self.label), dtype=bool)
        return self.label == self.labels.index(label)


@dataclass(frozen=True, eq=False)
class EventLog:
    """The arbiter's log as numbers, as an engine records it: ``log`` is int64 [events, 7]
    with the columns ``LOG_COLUMNS`` (``port`` -1 and ``status`` 1 for a stalled cycle, ``k``
    the pass's index in the run's pass table); ``op`` is the trace's op codes and
    ``pass_index`` / ``partitions`` / ``bank_cycles`` the pass table's columns. The
    ``Result.events()`` table (``EVENT_COLUMNS``) is built from it only when read, so timing a
    loop imports no pandas.

    >>> log = np.array([[3, 0, 1, 2, 0, 0, 0], [4, 1, -1, 1, 0, 0, 1]])
    >>> ev = EventLog(log, np.array([0]), np.array([0]), np.array([1]), np.array([2]),
    ...               ("A", "B"), ("L", "C"))
    >>> ev.granted()  # cycle, row, bank cycles of the granted passes
    (array([3]), array([0]), array([2]))
    >>> ev.frame()[["cycle", "pair", "port", "status"]].values.tolist()
    [[3, 'A', 'C', 'granted'], [4, 'B', '', 'stalled']]
    """

    log: np.ndarray
    op: np.ndarray
    pass_index: np.ndarray
    partitions: np.ndarray
    bank_cycles: np.ndarray
    pair_names: tuple[str, ...]
    port_names: tuple[str, ...]

    def granted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The granted passes' cycle, trace row and bank cycles (int64), in log order."""
        mine = self.log[self.log[:, 6] == 0]
        return mine[:, 0], mine[:, 4], self.bank_cycles[mine[:, 5]].astype(np.int64)

    def frame(self) -> pd.DataFrame:
        """The log with ``EVENT_COLUMNS`` (names for pairs, ports, instructions, status)."""
        import pandas as pd

        if len(self.log) == 0:
            return pd.DataFrame([], columns=list(EVENT_COLUMNS))
        cycle, pair, port, warp, row, k, status = self.log.T
        pick = {
            "cycle": cycle,
            "pair": np.array(self.pair_names, dtype=object)[pair],
            "port": np.array([*self.port_names, ""], dtype=object)[port],  # -1 (stalled): ""
            "warp": warp,
            "row": row,
            "instruction": np.array(OPS, dtype=object)[self.op[row]],
            "pass_index": self.pass_index[k].astype(np.int64),
            "partitions": self.partitions[k].astype(np.int64),
            "bank_cycles": self.bank_cycles[k].astype(np.int64),
            "status": np.array(["granted", "stalled"], dtype=object)[status],
        }
        return pd.DataFrame(pick, columns=list(EVENT_COLUMNS))


class _ClockTable:
    """``Result.clocks``: kept as given (a DataFrame, or an engine's :class:`ClockReads`) and a
    DataFrame when read (built once)."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:  # the dataclass asks for a default: there is none
            raise AttributeError("clocks")
        value = obj.__dict__["_clocks"]
        if isinstance(value, ClockReads):
            table = obj.__dict__.get("_clock_table")
            if table is None:
                table = obj.__dict__["_clock_table"] = value.frame()
            return table
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__["_clocks"] = value


@dataclass(frozen=True, eq=False)
class Result:
    """Counters of one run. ``clocks`` has one row per executed ``clock`` (warp, label, cycle);
    an engine may pass a :class:`ClockReads` instead of the table (built when read)."""

    clocks: pd.DataFrame = _ClockTable()  # type: ignore[assignment]
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
    event_log: EventLog | pd.DataFrame | None = field(default=None, repr=False)
    """The arbiter's log (``record_events``): an engine's :class:`EventLog`, or its table;
    read it with ``events()``."""
    op_log: np.ndarray | None = field(default=None, repr=False)
    """int64 [rows, len(OP_TIMES)] (``record_ops``); read it with ``ops()``."""

    @property
    def bank_conflict_cycles(self) -> int:
        """Bank cycles beyond one per pass (SQ_LDS_BANK_CONFLICT's analogue)."""
        return self.bank_cycles - self.passes

    def measurements(self, start: str = "start", end: str = "end") -> pd.Series:
        """Per warp: cycle of its last ``end`` clock minus cycle of its first ``start`` clock.

        Warps that read only one of the two labels are left out.
        """
        warp, first, last = self._spans(start, end)
        import pandas as pd

        return pd.Series(last - first, index=pd.Index(warp, name="warp"), name="cycles")

    def _reads(self) -> ClockReads:
        """The clock reads as arrays, whichever form the engine handed over."""
        value = self.__dict__["_clocks"]
        return value if isinstance(value, ClockReads) else ClockReads.from_frame(value)

    def _spans(self, start: str, end: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Warps that read both labels, with their first ``start`` and last ``end`` cycle (numpy:
        this runs once per simulation in sweeps, where a pandas groupby costs more than the
        fast engine's whole run)."""
        reads = self._reads()
        warp = reads.warp.astype(np.int64, copy=False)
        cycle = reads.cycle.astype(np.int64, copy=False)
        is_start, is_end = reads.of(start), reads.of(end)
        n = int(warp.max()) + 1 if warp.size else 0
        first = np.full(n, np.iinfo(np.int64).max)
        last = np.full(n, np.iinfo(np.int64).min)
        np.minimum.at(first, warp[is_start], cycle[is_start])
        np.maximum.at(last, warp[is_end], cycle[is_end])
        both = np.flatnonzero((first != np.iinfo(np.int64).max) & (last != np.iinfo(np.int64).min))
        return both, first[both], last[both]

    def measurement(self, start: str = "start", end: str = "end") -> int:
        """The kernel's measured cycles: the largest per-warp ``end - start``."""
        _, first, last = self._spans(start, end)
        if not first.size:
            reads = self._reads()
            have = sorted({reads.labels[i] for i in set(reads.label.tolist())})
            raise TraceError(
                f"no warp reads both clock labels {start!r} and {end!r} (labels read: {have})"
            )
        return int((last - first).max())

    def _has_measurement(self) -> bool:
        return self._spans("start", "end")[0].size > 0

    @property
    def measured_cycles(self) -> int:
        """``measurement()`` when the trace has "start"/"end" clocks, else ``total_cycles``."""
        return self.measurement() if self._has_measurement() else self.total_cycles

    @property
    def raw_bytes_per_cycle(self) -> float:
        """Bytes moved over the measured cycles (the seed's "raw B/cycle")."""
        return self.bytes / self.measured_cycles if self.measured_cycles else 0.0

    def events(self) -> pd.DataFrame:
        """The per-cycle arbiter log: one row per granted pass and per stalled cycle.

        ``row`` is the op's index in the trace (0-based, program order of the file);
        ``partitions`` is the pass's partition bitmask and ``partition_list`` the same as
        readable partition numbers ("0", "0,1").
        """
        if self.event_log is None:
            raise TraceError("no event log: run simulate(..., record_events=True)")
        log = self.event_log
        log = log.frame() if isinstance(log, EventLog) else log.copy()
        masks = log["partitions"].to_numpy()
        names = {m: ",".join(str(p) for p in range(64) if m >> p & 1) for m in set(masks.tolist())}
        log.insert(
            log.columns.get_loc("partitions") + 1, "partition_list", [names[m] for m in masks]
        )
        return log

    def granted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The granted passes of the event log: their cycle, trace row and bank cycles (int64
        arrays, in log order; no table is built)."""
        if self.event_log is None:
            raise TraceError("no event log: run simulate(..., record_events=True)")
        if isinstance(self.event_log, EventLog):
            return self.event_log.granted()
        mine = self.event_log[self.event_log["status"] == "granted"]
        return tuple(mine[c].to_numpy(dtype=np.int64) for c in ("cycle", "row", "bank_cycles"))

    def op_time(self, name: str) -> np.ndarray:
        """One ``OP_TIMES`` column of the per-row cycles (int64, a view; ``record_ops``)."""
        if self.op_log is None:
            raise TraceError("no per-op times: run simulate(..., record_ops=True)")
        return self.op_log[:, OP_TIMES.index(name)]

    def ops(self, trace=None) -> pd.DataFrame:
        """One row per trace row: ``row``, ``warp``, ``op`` (with ``trace``; else -1 and "")
        and the ``OP_TIMES`` columns (only if recorded: ``simulate(..., record_ops=True)``)."""
        if self.op_log is None:
            raise TraceError("no per-op times: run simulate(..., record_ops=True)")
        import pandas as pd

        n = len(self.op_log)
        frame = {"row": np.arange(n, dtype=np.int64)}
        if trace is not None:
            frame["warp"] = trace.warp.astype(np.int64)
            frame["op"] = np.array(OPS, dtype=object)[trace.op]
        else:
            frame["warp"], frame["op"] = np.full(n, -1, np.int64), np.full(n, "", object)
        frame.update(zip(OP_TIMES, self.op_log.T, strict=True))
        return pd.DataFrame(frame, columns=list(OP_COLUMNS))

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
        import pandas as pd

        return pd.Series(flat, dtype=object, name="result")
