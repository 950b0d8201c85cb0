"""The passes of a whole trace in the columns the fast engine's loop takes.

The rules themselves are stated once, in ``wgpsim.hw._kernels`` (docs/DESIGN.md, "Engine timing
rules"): ``loop_passes`` runs the same pass kernel as ``wgpsim.hw.rules.pass_table`` over every
trace row and keeps only what the loop needs; the loop calls ``_kernels.grant`` itself.

A 2-way bank conflict (lanes reading 0 and 512) and a broadcast, as in ``rules``:

>>> from wgpsim.trace.instructions import op_code
>>> addr = np.stack([512 * (np.arange(32) % 2), np.zeros(32, dtype=int)])
>>> t = loop_passes(np.full(2, op_code("ds_load_b32")), addr, load_hardware(), index=False)
>>> t.start.tolist(), t.bank_cycles.tolist(), t.partitions.tolist(), t.bytes
([0, 1, 2], [2, 1], [1, 1], 256)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wgpsim.hw.config import HardwareConfig, load_hardware  # noqa: F401 (doctest)
from wgpsim.hw.rules import lane_table, pass_columns

__all__ = ["LoopPasses", "loop_passes"]


@dataclass(frozen=True)
class LoopPasses:
    """The passes of every trace row, as the fast engine's loop takes them: the passes of row
    r are ``start[r]:start[r + 1]``; per pass its ``partitions`` mask, ``bank_cycles`` and
    (only if asked, for the event log) its ``index`` in its instruction; ``bytes`` of all."""

    start: np.ndarray
    partitions: np.ndarray
    bank_cycles: np.ndarray
    index: np.ndarray
    bytes: int

    def __len__(self) -> int:
        return len(self.partitions)


def loop_passes(
    ops: np.ndarray, addr: np.ndarray, hw: HardwareConfig, *, index: bool
) -> LoopPasses:
    """``rules.pass_table`` of every row, in the columns the loop needs, in the smallest dtypes
    (control rows have no pass)."""
    table = lane_table(hw)
    args, n = table.kernel_args(ops, addr)
    out = pass_columns(
        n, table, row=0, index=n if index else 0, lane_mask=0, bytes=0, start=len(ops) + 1
    )
    total = table.fill(args, out)
    return LoopPasses(out[6], out[4], out[5], out[1], int(total))
