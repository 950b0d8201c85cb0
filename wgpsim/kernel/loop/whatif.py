"""The what-ifs of a timed loop: the same trace on changed hardware, or a changed trace.

Each what-if is a hardware override (``HardwareConfig.with_overrides``) and/or a trace
transform, never a change in the engines (docs/DESIGN.md, "Loop timing"):

- ``ideal_banks``: every pass takes 1 bank cycle. Banks 64 bytes wide and 4,096 of them
  (``banks.width_bytes=64``, ``banks.count=4096``): the 64-byte units of 256 KiB each get a bank
  of their own, so no two distinct units of a pass share one unless they lie a multiple of
  256 KiB apart (a pass touching partitions 0 and 4 at the same offset: the run's bank-conflict
  cycles say so, and the what-if reports them). Bytes, passes and partitions do not change.
- ``separate_partitions``: the SIMD pairs never touch a common partition. Every pair gets its
  own copy of the LDS partitions: pair p's addresses move up by p x ``lds_bytes`` on hardware
  with that many more partitions (``partitions.count``, ``lds``, ``l0``, ``lds_bytes``). A shift
  by ``lds_bytes`` keeps every bank (327,680 / 4 = 81,920 dwords, a multiple of 64 banks), so
  only the cross-pair partition conflicts go.
- ``no_lds``: infinitely fast LDS (the bound): the LDS rows (the TDM's writes too) and the
  ``wait_ds`` / ``wait_tensor`` rows are dropped; the other work, the barriers and the clocks
  stay.

>>> from wgpsim.hw import load_hardware
>>> from wgpsim.trace.trace import TraceBuilder
>>> b = TraceBuilder(2)
>>> for w in range(2):
...     b.load(w, "ds_load_b64", 8 * np.arange(32))
>>> t, hw = separate_partitions(b.build(), load_hardware())
>>> t.addr[:, 0].tolist(), hw.partitions.count, hw.partitions.lds_bytes
([0, 327680], 11, 655360)
"""

from __future__ import annotations

import numpy as np

from wgpsim.hw.config import HardwareConfig
from wgpsim.trace.instructions import NUM_LDS_OPS, WAIT_DS, WAIT_TENSOR
from wgpsim.trace.trace import Trace

IDEAL_BANKS = {"banks.width_bytes": 64, "banks.count": 4096, "banks.store_count": 4096}
"""The override of ``ideal_banks`` (see the module docstring)."""

WHAT_IFS = {
    "ideal_banks": "every pass 1 bank cycle (banks.width_bytes=64, banks.count=4096)",
    "separate_partitions": "each SIMD pair on partitions of its own (a copy of the LDS per pair)",
    "no_lds": "infinitely fast LDS: LDS rows and their waits dropped (the bound)",
}
"""The what-ifs by name, each with the one line the report prints."""


def applies(name: str, hw: HardwareConfig) -> bool:
    """Whether what-if ``name`` means anything on ``hw``: separating partitions needs more than
    one LDS partition (gfx942 and gfx950 have one; MI450 five).

    >>> from wgpsim.hw import load_hardware
    >>> applies("separate_partitions", load_hardware()), applies("no_lds", load_hardware())
    (True, True)
    """
    return name != "separate_partitions" or len(hw.partitions.lds) > 1


def ideal_banks(trace: Trace, hw: HardwareConfig) -> tuple[Trace, HardwareConfig]:
    """The same trace on hardware whose banks never conflict (module docstring)."""
    return trace, hw.with_overrides(**IDEAL_BANKS)


def separate_partitions(trace: Trace, hw: HardwareConfig) -> tuple[Trace, HardwareConfig]:
    """Pair p's LDS addresses moved up by p x ``lds_bytes`` onto hardware with a copy of the
    LDS partitions per pair (module docstring)."""
    pair = np.array([hw.pair_of_warp(w) for w in range(trace.num_warps)], dtype=np.int64)
    shift = (pair[trace.warp] * hw.partitions.lds_bytes)[:, None]
    addr = np.where(trace.addr >= 0, trace.addr.astype(np.int64) + shift, -1)
    moved = Trace(trace.warp, trace.op, trace.arg, addr, trace.labels, trace.num_warps)
    return moved, hw.with_lds_per_pair()


def no_lds(trace: Trace, hw: HardwareConfig) -> tuple[Trace, HardwareConfig]:
    """The trace without its LDS and ``wait_ds`` rows (infinitely fast LDS)."""
    keep = _kept(trace)
    kept = Trace(
        trace.warp[keep],
        trace.op[keep],
        trace.arg[keep],
        trace.addr[keep],
        trace.labels,
        trace.num_warps,
    )
    return kept, hw


TRANSFORMS = {
    "ideal_banks": ideal_banks,
    "separate_partitions": separate_partitions,
    "no_lds": no_lds,
}


def same_run(name: str, result, trace: Trace, hw: HardwareConfig):
    """``result`` (the loop's own run) when the what-if ``name`` on ``trace``, ``hw`` (its
    transform's output) is provably that run again, else None: ``ideal_banks`` of a loop
    without bank conflicts, when its ideal banks give none either (a pass takes 1 bank cycle
    under both banks, and the engines read the banks only through a pass's bank cycles), as
    for the matmul example's loop.

    >>> same_run("no_lds", None, None, None) is None
    True
    """
    if name != "ideal_banks" or result.bank_conflict_cycles:
        return None
    from wgpsim.measures.banks import has_bank_conflicts

    return None if has_bank_conflicts(trace, hw) else result


def kept_rows(name: str, trace: Trace) -> np.ndarray:
    """The rows of ``trace`` that the what-if ``name`` keeps, in order (to carry provenance)."""
    return np.flatnonzero(_kept(trace)) if name == "no_lds" else np.arange(len(trace))


def _kept(trace: Trace) -> np.ndarray:
    """Rows that are neither LDS instructions (TDM writes included) nor waits for them (what
    ``no_lds`` keeps)."""
    return (trace.op >= NUM_LDS_OPS) & (trace.op != WAIT_DS) & (trace.op != WAIT_TENSOR)
