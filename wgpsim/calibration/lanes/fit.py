"""The constants a CDNA part's lane-pair counters imply, per instruction, beside its hardware file:
the bank count, the phase groups (which lanes share a cycle of the LDS, and the linear map over
lane bits that names them) and the ``SQ_LDS_BANK_CONFLICT`` cycles of one conflicting
instruction.

A probe's extra cycles per instruction are ``(its SQ_LDS_BANK_CONFLICT - the one-lane
launch's) / REPEATS``; a pair conflicts when they are at least half a cycle. Then:

* **banks**: the bank sweep's first conflicting offset / 4 B (per instruction: a part's
  writes may see fewer banks than its reads) (lanes 0 and 1 hit the same bank
  first when lane 1's offset is 4 B x banks);
* **phases**: lanes that conflict share a phase; the groups are the connected sets of the
  conflict graph. When the phases are cosets of one subspace K of lane indices (the set of
  ``a xor b`` over conflicting pairs, closed under xor, and a measured pair conflicts exactly
  when ``a xor b`` is in K), the phase is a linear map over GF(2): each phase bit the xor of
  some lane bits, a basis of the masks orthogonal to K;
* **cycles per conflict**: the median extra cycles over the conflicting phase probes.

The value per probe is its ``SQ_LDS_BANK_CONFLICT`` (:func:`counter_values`) or, on a part or
ROCm without that counter, its ``s_memtime`` span (:func:`span_values`): each probe is a
latency chain, so a conflict lengthens it by the conflict's cycles.

The issue's gfx950 ``ds_read_b128`` phases (lanes 0-3, 12-15, 20-27 in one; 4 phases of 16):

>>> phase = lambda l: ((l >> 2 ^ l >> 3 ^ l >> 4) & 1) | (l >> 5 & 1) << 1
>>> pairs = {(a, b): phase(a) == phase(b) for a in range(64) for b in range(a + 1, 64)}
>>> groups, bits = phase_groups(pairs)
>>> groups[0][:12], len(groups), [bit_names(m) for m in bits]
((0, 1, 2, 3, 12, 13, 14, 15, 20, 21, 22, 23), 4, ['2^3^4', '5'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from wgpsim.calibration.lanes.counters import missing_counter
from wgpsim.calibration.lanes.pairs import REPEATS, WAVE
from wgpsim.calibration.probe import Probe
from wgpsim.errors import ConfigError, ModuleError
from wgpsim.hw.config import HardwareConfig
from wgpsim.hw.rules import lane_groups

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LaneFit",
    "bit_names",
    "compare_hardware",
    "counter_values",
    "extra_cycles",
    "fit_lanes",
    "phase_groups",
    "span_values",
]

COUNTER = "SQ_LDS_BANK_CONFLICT"
"""The counter the fit reads (cycles the LDS stalled on bank conflicts)."""

CONFLICT = 0.5
"""Extra cycles per instruction from which a pair conflicts (a conflict costs at least 1)."""


@dataclass(frozen=True)
class LaneFit:
    """What one instruction's probes imply (``None``: the probes that pin it were not run)."""

    op: str
    banks: int | None
    groups: tuple[tuple[int, ...], ...] | None
    phase_bits: tuple[int, ...] | None  # lane-bit masks; None: not linear (or not measured)
    conflicts: Mapping[tuple[int, int], bool]
    cycles_per_conflict: float | None


def _span(masks: Sequence[int]) -> list[int]:
    """A GF(2) basis (reduced, by leading bit) of the span of ``masks``."""
    basis: list[int] = []
    for m in masks:
        for b in basis:
            m = min(m, m ^ b)
        if m:
            basis.append(m)
            basis.sort(reverse=True)
    return basis


def _in_span(m: int, basis: Sequence[int]) -> bool:
    for b in basis:
        m = min(m, m ^ b)
    return m == 0


def bit_names(mask: int) -> str:
    """A phase bit as the xor of lane bits: ``bit_names(28) == '2^3^4'``."""
    return "^".join(str(i) for i in range(WAVE.bit_length()) if mask >> i & 1)


def phase_groups(pairs: Mapping[tuple[int, int], bool]):
    """``(groups, phase_bits)`` of measured pairs ``(a, b) -> conflict``: the phase bits as
    lane-bit masks if the phases are linear (None otherwise), and the groups (each sorted, by
    first lane): the cosets of the map's kernel if linear (pairs with lane 0 are then enough),
    else the connected lane sets of the conflict graph."""
    parent = list(range(WAVE))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for (a, b), hit in pairs.items():
        if hit:
            parent[root(a)] = root(b)
    members: dict[int, list[int]] = {}
    for lane in range(WAVE):
        members.setdefault(root(lane), []).append(lane)
    groups = tuple(sorted(tuple(m) for m in members.values()))
    kernel = _span([a ^ b for (a, b), hit in pairs.items() if hit])
    if any(hit != _in_span(a ^ b, kernel) for (a, b), hit in pairs.items()):
        return groups, None
    orthogonal = [y for y in range(1, WAVE) if all(bin(y & k).count("1") % 2 == 0 for k in kernel)]
    bits = tuple(sorted(_span(orthogonal)))
    cosets: dict[tuple[int, ...], list[int]] = {}  # linear: the phases are the cosets of K
    for lane in range(WAVE):
        cosets.setdefault(tuple(bin(lane & m).count("1") % 2 for m in bits), []).append(lane)
    return tuple(sorted(tuple(c) for c in cosets.values())), bits


def extra_cycles(values: Mapping[str, float], probes: Sequence[Probe]) -> dict[str, float]:
    """Extra conflict cycles per instruction of every measured probe over its one-lane launch."""
    base = {
        p.param("op"): values[p.name] for p in probes if p.family == "one_lane" and p.name in values
    }
    out = {}
    for p in probes:
        if p.name in values and p.family != "one_lane":
            if p.param("op") not in base:
                raise ModuleError(
                    f"no measured one-lane launch of {p.param('op')} (the baseline of its probes)"
                )
            out[p.name] = (values[p.name] - base[p.param("op")]) / REPEATS
    return out


def counter_values(per_probe: pd.DataFrame, where: str = "counters") -> dict[str, float]:
    """Per probe, its ``SQ_LDS_BANK_CONFLICT`` (``counters.probe_counters``' table); a file
    without the counter is one ModuleError saying what is known of its absence."""
    mine = per_probe[per_probe["counter"] == COUNTER]
    if not len(mine):
        raise missing_counter(COUNTER, where)
    return dict(zip(mine["probe"], mine["value"].astype(float), strict=True))


def span_values(runs: pd.DataFrame) -> dict[str, float]:
    """Per probe, the median ``s_memtime`` span of its timed runs (``measurements.csv``): the
    fit's input where the part has no bank-conflict counter. The probe is a latency chain, so
    a conflicting instruction's extra cycles are in the span as in the counter."""
    medians = runs.groupby("probe")["cycles"].median()
    return {str(k): float(v) for k, v in medians.items()}


def fit_lanes(values: Mapping[str, float], probes: Sequence[Probe]) -> dict[str, LaneFit]:
    """Per instruction: its :class:`LaneFit`, from a value per probe (:func:`counter_values`
    or :func:`span_values`)."""
    extra = extra_cycles(values, probes)
    fits = {}
    for op in dict.fromkeys(p.param("op") for p in probes):
        sweep = [p for p in probes if p.param("op") == op and p.family == "bank_sweep"]
        hits = [p.param("offset") for p in sweep if extra.get(p.name, 0.0) >= CONFLICT]
        measured_sweep = any(p.name in extra for p in sweep)
        phase = [p for p in probes if p.param("op") == op and p.family == "phase"]
        pairs = {
            (p.param("lane_a"), p.param("lane_b")): extra[p.name] >= CONFLICT
            for p in phase
            if p.name in extra
        }
        groups, bits = phase_groups(pairs) if pairs else (None, None)
        costs = [extra[p.name] for p in phase if p.name in extra and extra[p.name] >= CONFLICT]
        fits[op] = LaneFit(
            op,
            min(hits) // 4 if hits else None if not measured_sweep else 0,
            groups,
            bits,
            pairs,
            float(np.median(costs)) if costs else None,
        )
    return fits


def _model_passes(hw: HardwareConfig, op: str) -> list[int] | None:
    """The pass of each lane of ``op`` under ``hw`` (``hw.rules.lane_groups``, the model's own
    grouping); None when the file has no ``op``."""
    try:
        groups = lane_groups(op, hw)
    except ConfigError:
        return None
    passes = [0] * hw.wgp.warp_size
    for k, lanes in enumerate(groups):
        for lane in lanes:
            passes[int(lane)] = k
    return passes


COLUMNS = ["op", "constant", "measured", "simulated", "hardware", "agrees"]
"""The columns of :func:`compare_hardware`'s table."""


def _file_banks(hw: HardwareConfig, op: str) -> int:
    """The banks the file gives ``op`` (a write's may differ: ``banks.store_count``);
    ``banks.count`` for an instruction the catalogue does not know."""
    try:
        return hw.bank_count(op)
    except KeyError:
        return hw.banks.count


def _hardware_phases(hw: HardwareConfig, op: str, passes: list[int]) -> str:
    """The file's phases of ``op`` in a line, as :func:`_shown` writes the measured ones."""
    masks = [sum(1 << b for b in mask) for mask in hw.lane_masks(op)]
    return f"{len(set(passes))} phases: phase bits {', '.join(bit_names(m) for m in masks)}"


def _rows(fit: LaneFit, sim: LaneFit | None, hw: HardwareConfig) -> list[tuple]:
    """The table's rows of one instruction."""
    op, rows = fit.op, []
    if fit.banks is not None:
        got = fit.banks or f"none up to {2048 // 4}"
        model = "n/a" if sim is None else sim.banks
        banks = _file_banks(hw, op)
        rows.append((op, "banks", got, model, banks, fit.banks == banks))
    if fit.groups is not None:
        passes = _model_passes(hw, op)
        model = "n/a" if sim is None or sim.groups is None else _shown(sim)
        if passes is None:
            rows.append((op, "phases", _shown(fit), model, f"no {op} in the file", False))
        else:
            wrong = [
                ab for ab, hit in fit.conflicts.items() if hit != (passes[ab[0]] == passes[ab[1]])
            ]
            said = _hardware_phases(hw, op, passes)
            if wrong:
                said += f"; differs on {len(wrong)} pairs, e.g. {wrong[:3]}"
            rows.append((op, "phases", _shown(fit), model, said, not wrong))
    if fit.cycles_per_conflict is not None:
        model = None if sim is None else sim.cycles_per_conflict
        rows.append(
            (
                op,
                "conflict cycles",
                fit.cycles_per_conflict,
                "n/a" if model is None else model,
                "(the model's count)",
                None if model is None else fit.cycles_per_conflict == model,
            )
        )
    return rows


def compare_hardware(
    fits: Mapping[str, LaneFit],
    hw: HardwareConfig,
    simulated: Mapping[str, LaneFit] | None = None,
):
    """Per instruction and constant: what the measurements imply, what the model's own counters
    for the same probes imply (``simulated``: :func:`fit_lanes` of
    ``traces.simulated_values``; "n/a" for an instruction the catalogue lacks), the
    hardware file's value, and whether measured and file agree (the conflict cycles: measured
    and simulated). A DataFrame with :data:`COLUMNS`."""
    import pandas as pd

    if hw.wgp.warp_size != WAVE:
        row = ("*", "wgp.warp_size", WAVE, "n/a", hw.wgp.warp_size, False)
        return pd.DataFrame([row], columns=COLUMNS)
    rows = []
    for op, fit in fits.items():
        rows += _rows(fit, (simulated or {}).get(op), hw)
    return pd.DataFrame(rows, columns=COLUMNS)


def _shown(fit: LaneFit) -> str:
    """The measured phases in a line: their count, and the linear map or "not linear"."""
    count = f"{len(fit.groups)} phases"
    if fit.phase_bits is None:
        return f"{count} (not linear in the lane bits)"
    return f"{count}: phase bits {', '.join(bit_names(m) for m in fit.phase_bits)}"
