"""What the model runs for each lane-pair probe (:mod:`wgpsim.calibration.lanes.pairs`): its trace,
and the ``SQ_LDS_BANK_CONFLICT`` the model counts for it, so ``wgpsim calibrate lanes`` and
``wgpsim compare`` put the simulated beside the measured.

A probe's trace is one warp: clock, ``REPEATS`` x (the instruction with only lanes a and b
active, lane a at byte 0 and lane b at ``offset``; wait 0), clock, as its kernel's inline
assembly does. Its counters are static (a bank conflict belongs to one instruction:
:func:`wgpsim.measures.banks.bank_table`), so :func:`simulated_values` builds one trace row per
probe and multiplies by ``REPEATS``.

>>> from wgpsim.calibration.lanes.pairs import probe_of
>>> lane_trace(renamed(probe_of("gfx950", "ds_read_b128_l0_l12"), "ds_load_b128")).count_by_op()
{'ds_load_b128': 16, 'wait_ds': 16, 'clock': 2}

(``tests/test_calibration_lane_pairs.py`` runs them on a wave64 file with the phases measured
on a 64-bank part and fits the file's phases back from the simulated counters.)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from wgpsim.calibration.lanes.pairs import REPEATS, WAVE
from wgpsim.calibration.probe import Probe
from wgpsim.errors import ModuleError
from wgpsim.hw.config import HardwareConfig
from wgpsim.measures.banks import bank_table
from wgpsim.trace.instructions import INSTRUCTIONS
from wgpsim.trace.trace import Trace, TraceBuilder

__all__ = ["lane_addresses", "lane_trace", "renamed", "simulated_values"]


def _op(p: Probe) -> str:
    op = p.param("op")
    if op not in INSTRUCTIONS:
        raise ModuleError(
            f"{p.name}: this wgpsim's instruction catalogue has no {op!r} to simulate"
        )
    return op


def lane_addresses(p: Probe) -> np.ndarray:
    """The probe's byte address per lane (-1: inactive).

    >>> from wgpsim.calibration.lanes.pairs import probe_of
    >>> a = lane_addresses(probe_of("gfx942", "ds_read_b32_l3_l17"))
    >>> int(a[3]), int(a[17]), int((a >= 0).sum())
    (0, 1024, 2)
    """
    addr = np.full(WAVE, -1, dtype=np.int64)
    if p.family != "one_lane":
        addr[p.param("lane_b")] = p.param("offset")
    addr[p.param("lane_a")] = 0
    return addr


def lane_trace(p: Probe) -> Trace:
    """The probe's trace: clock, ``REPEATS`` x (its instruction, wait 0), clock."""
    op, addr = _op(p), lane_addresses(p)
    b = TraceBuilder(1, WAVE)
    b.clock(0, "start")
    for _ in range(REPEATS):
        b.lds(0, op, addr)
        b.wait_ds(0, 0)
    b.clock(0, "end")
    return b.build()


def simulated_values(probes: Sequence[Probe], hw: HardwareConfig) -> dict[str, float]:
    """Per probe, the ``SQ_LDS_BANK_CONFLICT`` the model counts for its ``REPEATS``
    instructions (the static bank table of one row per probe, x ``REPEATS``)."""
    if not probes:
        return {}
    b = TraceBuilder(1, WAVE)
    for p in probes:
        b.lds(0, _op(p), lane_addresses(p))
    table = bank_table(b.build(), hw)
    cycles = table["bank_conflict_cycles"].to_numpy()
    return {p.name: float(REPEATS * c) for p, c in zip(probes, cycles, strict=True)}


def renamed(p: Probe, op: str) -> Probe:
    """``p`` for instruction ``op`` (another catalogue's name of the same access)."""
    params = dict(p.params, op=op)
    return Probe(
        p.name.replace(p.param("op"), op), p.family, p.warps, tuple(sorted(params.items()))
    )
