"""The lane-pair probes of the CDNA kit (gfx942, MI300X/MI325X; gfx950, MI350X/MI355X): one LDS
instruction with two active lanes, whose profiler counters say whether the two lanes conflict.

Each probe is one launch of a one-warp (wave64) kernel that issues ``REPEATS`` times the same
``ds_read_*`` or ``ds_write_*`` with only lanes ``lane_a`` and ``lane_b`` active (EXEC masked in
the kernel's inline assembly): lane ``lane_a`` at LDS byte 0, lane ``lane_b`` at byte ``offset``.
``SQ_LDS_BANK_CONFLICT`` of the dispatch, less that of the one-lane launch of the same
instruction, is ``REPEATS`` x the conflict cycles of one instruction. Three families:

==============  =================================================  ===========================
family          the launch                                         pins
==============  =================================================  ===========================
``one_lane``    lane 0 alone (the baseline: nothing to conflict    what the kernel's own LDS
                with)                                              traffic adds
``bank_sweep``  lanes 0 and 1, lane 1 at ``offset`` = the          the bank count: the first
                instruction's width x 2**k up to ``MAX_OFFSET``    offset that conflicts is
                                                                   4 B x banks
``phase``       every pair of the 64 lanes, lane b at              the phase groups: lanes that
                ``PHASE_OFFSET`` (the same bank as lane a under    conflict share a phase
                any bank count up to 256, another address)
==============  =================================================  ===========================

for each of ``ds_read_b32/b64/b128`` and ``ds_write_b32/b64/b128`` (``OPS``). The bank sweep
assumes lanes 0 and 1 share a phase (every published CDNA phase table has them together); the
phase probes check it.

>>> probes = catalogue("gfx950")
>>> len(probes), probes[0].name, probes[0].param("kernel")
(12156, 'ds_read_b32_one_lane', 'lds_ds_read_b32')
>>> [p.param("offset") for p in probes if p.family == "bank_sweep" and p.param("op") == "ds_read_b128"]
[16, 32, 64, 128, 256, 512, 1024, 2048]
>>> probe_of("gfx942", "ds_write_b64_l3_l17").params
(('kernel', 'lds_ds_write_b64'), ('lane_a', 3), ('lane_b', 17), ('offset', 1024), ('op', 'ds_write_b64'))
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

from wgpsim.calibration.probe import Probe
from wgpsim.errors import ModuleError, did_you_mean

__all__ = [
    "FAMILIES",
    "LANE_FAMILIES",
    "MAX_OFFSET",
    "OPS",
    "PHASE_OFFSET",
    "REPEATS",
    "TARGETS",
    "WAVE",
    "catalogue",
    "kernel_name",
    "probe_of",
]

TARGETS = ("gfx942", "gfx950")
"""The CDNA targets the lane-pair probes compile for (``GPUTarget("hip", NAME, 64)``)."""

WAVE = 64
"""Lanes of a CDNA wave (wave64)."""

OPS = {
    "ds_read_b32": 4,
    "ds_read_b64": 8,
    "ds_read_b128": 16,
    "ds_write_b32": 4,
    "ds_write_b64": 8,
    "ds_write_b128": 16,
}
"""The probed instructions and their bytes per lane (the CDNA3 ISA's DS_READ_B32 ... names)."""

FAMILIES = ("one_lane", "bank_sweep", "phase")
"""The lane-pair families, in the order the kit runs them."""

LANE_FAMILIES = frozenset(FAMILIES)

REPEATS = 16
"""Instructions per launch: the counter of one launch is 16 x one instruction's."""

MAX_OFFSET = 2048
"""Largest offset of the bank sweep: 4 B x 512 banks, past any bank count a part has."""

PHASE_OFFSET = 1024
"""Lane b's offset in a phase probe: a multiple of 4 B x 256 banks, so both lanes hit the same
banks under any bank count up to 256, at different addresses (no broadcast)."""


def kernel_name(op: str) -> str:
    """The kernel (one per instruction) every probe of ``op`` launches; profilers report it.

    >>> kernel_name("ds_read_b128")
    'lds_ds_read_b128'
    """
    return f"lds_{op}"


def _probe(family: str, name: str, op: str, a: int, b: int, offset: int) -> Probe:
    params = {"kernel": kernel_name(op), "lane_a": a, "lane_b": b, "offset": offset, "op": op}
    return Probe(name, family, 1, tuple(sorted(params.items())))


@lru_cache(maxsize=4)
def catalogue(target: str) -> tuple[Probe, ...]:
    """Every lane-pair probe for ``target``, instruction by instruction (names are unique)."""
    if target not in TARGETS:
        raise ModuleError(f"no lane-pair probes for {target!r} (valid: {', '.join(TARGETS)})")
    out: list[Probe] = []
    for op, width in OPS.items():
        out.append(_probe("one_lane", f"{op}_one_lane", op, 0, 0, 0))
        offset = width
        while offset <= MAX_OFFSET:
            out.append(_probe("bank_sweep", f"{op}_o{offset}", op, 0, 1, offset))
            offset *= 2
        for a, b in combinations(range(WAVE), 2):
            out.append(_probe("phase", f"{op}_l{a}_l{b}", op, a, b, PHASE_OFFSET))
    return tuple(out)


@lru_cache(maxsize=4)
def _by_name(target: str) -> dict[str, Probe]:
    return {p.name: p for p in catalogue(target)}


def probe_of(target: str, name: str) -> Probe:
    """The lane-pair probe ``name`` of ``target`` (a ModuleError naming the closest otherwise)."""
    known = _by_name(target)
    if name not in known:
        raise ModuleError(f"unknown {target} probe {name!r}{did_you_mean(name, known)}")
    return known[name]
