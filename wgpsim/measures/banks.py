"""Static bank analysis: bank cycles and conflicts of every LDS instruction, without simulating.

Bank conflicts are a property of one instruction (seed, Note in Part II: "threads within a warp
run in lockstep, so bank conflicts are countable"), so they need no timing. The counters match
rocprof-compute's LDS counters: ``bank_cycles`` sums to SQ_LDS_IDX_ACTIVE's analogue and
``bank_conflict_cycles`` (cycles beyond one per pass) to SQ_LDS_BANK_CONFLICT's.

>>> from wgpsim.trace import TraceBuilder
>>> from wgpsim.hw import load_hardware
>>> b = TraceBuilder(1)
>>> b.load(0, "ds_load_b128", 16 * np.arange(32))   # the seed's load: conflict-free
>>> b.load(0, "ds_load_b32", 256 * np.arange(32))   # every lane in bank 0
>>> bank_table(b.build(), load_hardware())[["instruction", "passes", "bank_cycles", "bank_conflict_cycles"]]
   instruction  passes  bank_cycles  bank_conflict_cycles
0  ds_load_b128       2            2                     0
1   ds_load_b32       1           32                    31
>>> bank_summary(b.build(), load_hardware())["conflicts_per_access"]
10.333...
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from wgpsim.hw.config import HardwareConfig, load_hardware
from wgpsim.hw.rules import pass_table
from wgpsim.trace.instructions import NUM_LDS_OPS, OPS

if TYPE_CHECKING:  # imported where a table is built, so the CLI's parser stays light
    import pandas as pd

COLUMNS = (
    "row",
    "warp",
    "instruction",
    "passes",
    "bytes",
    "bank_cycles",
    "bank_conflict_cycles",
    "max_bank_cycles",
    "partitions",
)


def bank_table(trace, hw: HardwareConfig | None = None, *, per_pass: bool = False) -> pd.DataFrame:
    """One row per LDS instruction (or per pass with ``per_pass``): its passes, bytes, bank
    cycles, conflict cycles, slowest pass and the partitions it touches (bitmask)."""
    import pandas as pd

    hw = load_hardware() if hw is None else hw
    lds_rows = np.flatnonzero(trace.op < NUM_LDS_OPS)
    table = pass_table(trace.op[lds_rows], trace.addr[lds_rows], hw, trace.arg[lds_rows])
    rows = lds_rows[table.row]
    passes = pd.DataFrame(
        {
            "row": rows,
            "warp": trace.warp[rows].astype(np.int64),
            "instruction": np.array(OPS, dtype=object)[trace.op[rows]],
            "pass_index": table.index,
            "lanes": _popcount(table.lane_mask),
            "bytes": table.bytes,
            "bank_cycles": table.bank_cycles,
            "bank_conflict_cycles": table.bank_cycles - 1,
            "partitions": table.partitions,
        }
    )
    if per_pass:
        return passes
    grouped = passes.groupby("row", sort=True)
    out = grouped.agg(
        warp=("warp", "first"),
        instruction=("instruction", "first"),
        passes=("pass_index", "size"),
        bytes=("bytes", "sum"),
        bank_cycles=("bank_cycles", "sum"),
        bank_conflict_cycles=("bank_conflict_cycles", "sum"),
        max_bank_cycles=("bank_cycles", "max"),
    ).reset_index()
    if not len(out):
        return pd.DataFrame(columns=list(COLUMNS))
    order = np.argsort(rows, kind="stable")  # the groups' order: rows ascending
    first = np.flatnonzero(np.diff(rows[order], prepend=-1))
    out["partitions"] = np.bitwise_or.reduceat(np.asarray(table.partitions)[order], first)
    return out[list(COLUMNS)]


def _popcount(masks: np.ndarray) -> np.ndarray:
    """Set bits of each 32-bit lane mask (active lanes of a pass)."""
    octets = np.ascontiguousarray(masks, dtype="<u4").view(np.uint8).reshape(-1, 4)
    return np.unpackbits(octets, axis=1).sum(axis=1, dtype=np.int64)


def bank_conflict_cycles(trace, hw: HardwareConfig | None = None) -> int:
    """The trace's bank-conflict cycles (cycles beyond one per pass), without pandas or a run:
    what any engine's ``Result.bank_conflict_cycles`` says of the whole trace, since a pass's
    bank cycles depend on its lanes' addresses only.

    >>> from wgpsim.trace import TraceBuilder
    >>> from wgpsim.hw import load_hardware
    >>> b = TraceBuilder(1)
    >>> b.load(0, "ds_load_b32", 256 * np.arange(32))   # every lane in bank 0
    >>> bank_conflict_cycles(b.build(), load_hardware())
    31
    """
    hw = load_hardware() if hw is None else hw
    return _conflict_cycles(trace, np.flatnonzero(trace.op < NUM_LDS_OPS), hw)


def has_bank_conflicts(trace, hw: HardwareConfig | None = None) -> bool:
    """Whether ``bank_conflict_cycles(trace, hw) > 0``, reading the first eighth of the LDS
    rows first (one warp of a lock-step op trace; a conflicted layout usually shows there), so
    a search drops a conflicted candidate before simulating it at an eighth of the cost.

    >>> from wgpsim.trace import TraceBuilder
    >>> from wgpsim.hw import load_hardware
    >>> b = TraceBuilder(1)
    >>> b.load(0, "ds_load_b128", 16 * np.arange(32))
    >>> has_bank_conflicts(b.build(), load_hardware())
    False
    """
    hw = load_hardware() if hw is None else hw
    rows = np.flatnonzero(trace.op < NUM_LDS_OPS)
    first = (len(rows) + 7) // 8
    return any(_conflict_cycles(trace, part, hw) for part in (rows[:first], rows[first:]))


def _conflict_cycles(trace, rows: np.ndarray, hw: HardwareConfig) -> int:
    """The bank-conflict cycles of ``rows``: from the fast engine's compiled pass table when
    that engine costs nothing to use (``auto.fast_ready``), else from the reference rules (the
    two agree: ``tests/test_engine_fast_rules.py``)."""
    from wgpsim.engine.auto import fast_ready

    ops, addr, distance = trace.op[rows], trace.addr[rows], trace.arg[rows]
    if fast_ready():
        from wgpsim.engine.fast import bank_conflict_cycles

        return bank_conflict_cycles(ops, addr, hw, distance)
    table = pass_table(ops, addr, hw, distance)
    return int(table.bank_cycles.sum()) - len(table)


def bank_summary(trace, hw: HardwareConfig | None = None) -> pd.Series:
    """Totals over the trace, with rocprof's Conflicts/Access = BC / (IDX - BC)."""
    import pandas as pd

    t = bank_table(trace, hw)
    idx, bc = int(t["bank_cycles"].sum()), int(t["bank_conflict_cycles"].sum())
    return pd.Series(
        {
            "instructions": len(t),
            "passes": int(t["passes"].sum()),
            "bytes": int(t["bytes"].sum()),
            "bank_cycles": idx,
            "bank_conflict_cycles": bc,
            "conflicts_per_access": bc / (idx - bc) if idx > bc else 0.0,
        },
        dtype=object,
        name="banks",
    )
