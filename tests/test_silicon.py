"""The bank/phase model of gfx950 and gfx942 against published silicon measurements.

The measurements are data files under tests/fixtures/silicon/, each naming its source:
``hipkittens_gfx950.yaml`` (MI355X: latency probes over all 2016 lane pairs of a wave64 and bank
counts by wrap-around, HipKittens ``analysis/paper_experiments/phases``), ``pyhip_gfx942.yaml``
(MI300: lane groups and a stride sweep, tingqli/pyhip ``tests/bank-conflict/README.md``), and
``documents.yaml`` (phase groups stated by AMD documents and Triton PR 11365). Nothing in them
is derived from wgpsim.

The model is ``wgpsim.hw.rules.pass_table`` on the target's hardware file: a probe is a trace row
with two active lanes that hit the same bank at different addresses (lane a at 0, lane b one
bank row on: the measurement's bank count x 4 bytes); the model predicts a conflict when a pass
of that row needs more than one bank cycle, which happens exactly when the two lanes share a
pass.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
import yaml

from wgpsim.hw import load_hardware
from wgpsim.hw.rules import pass_table
from wgpsim.packaged import hardware_path
from wgpsim.trace.instructions import INSTRUCTIONS, op_code

DATA = Path(__file__).parent / "fixtures" / "silicon"
WAVE = 64
PAIRS = list(combinations(range(WAVE), 2))  # the 2016 lane pairs of a wave64


def _load(name: str) -> dict:
    return yaml.safe_load((DATA / name).read_text())


HIPKITTENS = _load("hipkittens_gfx950.yaml")
PYHIP = _load("pyhip_gfx942.yaml")
DOCUMENTS = _load("documents.yaml")["documents"]


def _hw(target: str):
    return load_hardware(hardware_path(target))


def model_conflicts(op: str, hw, addr: np.ndarray) -> np.ndarray:
    """Per probe row of ``addr`` [rows, 64] (-1 = inactive lane): does the model serve some pass
    of ``op`` in more than one bank cycle?"""
    table = pass_table(np.full(len(addr), op_code(op)), addr, hw)
    conflicted = np.zeros(len(addr), dtype=bool)
    conflicted[table.row[table.bank_cycles > 1]] = True
    return conflicted


def pair_probes(banks: int) -> np.ndarray:
    """For every lane pair (a, b): lane a at byte 0, lane b at ``banks`` dwords on (the same
    bank, another address); every other lane inactive."""
    addr = np.full((len(PAIRS), WAVE), -1, dtype=np.int64)
    rows = np.arange(len(PAIRS))
    a, b = np.array(PAIRS).T
    addr[rows, a] = 0
    addr[rows, b] = 4 * banks
    return addr


def measured_conflicts(phases: list[list[int]]) -> np.ndarray:
    """Per lane pair: did the measurement put the two lanes in one phase (a conflict)?"""
    phase = np.full(WAVE, -1)
    for k, lanes in enumerate(phases):
        phase[lanes] = k
    assert sorted(np.concatenate(phases).tolist()) == list(range(WAVE))  # a partition of lanes
    a, b = np.array(PAIRS).T
    return phase[a] == phase[b]


def _cases():
    for m in HIPKITTENS["measurements"]:
        yield pytest.param("gfx950", m["instruction"], m["banks"], m["phases"],
                           id=f"hipkittens-gfx950-{m['instruction']}")  # fmt: skip
    for m in PYHIP["measurements"]:
        yield pytest.param("gfx942", m["instruction"], PYHIP["banks"], m["phases"],
                           id=f"pyhip-gfx942-{m['instruction']}")  # fmt: skip
    for d in DOCUMENTS:
        yield pytest.param(d["target"], d["instruction"], d["banks"], d["phases"],
                           id=f"document-{d['target']}-{d['instruction']}")  # fmt: skip


@pytest.mark.parametrize(("target", "op", "banks", "phases"), list(_cases()))
def test_the_model_conflicts_exactly_where_the_probe_did(target, op, banks, phases):
    """All 2016 lane pairs: a conflict in the model exactly where the source found one."""
    predicted = model_conflicts(op, _hw(target), pair_probes(banks))
    measured = measured_conflicts(phases)
    wrong = [PAIRS[i] for i in np.flatnonzero(predicted != measured)]
    assert not wrong, f"{len(wrong)} of 2016 pairs disagree, first {wrong[:5]}"
    assert measured.sum() == sum(len(p) * (len(p) - 1) // 2 for p in phases) > 0


def wrap_around(op: str, hw, limit_dwords: int) -> list[int]:
    """The HipKittens/CK bank probe on the model: lane 0 reads at dword 0, lane 1 at dword k
    for k = w .. ``limit_dwords`` (w = the dwords one lane reads, so the two never share a
    dword); the k at which the model sees a conflict."""
    width = INSTRUCTIONS[op].bytes_per_lane // 4
    starts = np.arange(width, limit_dwords + 1)
    addr = np.full((len(starts), WAVE), -1, dtype=np.int64)
    addr[:, 0] = 0
    addr[:, 1] = 4 * starts
    return starts[model_conflicts(op, hw, addr)].tolist()


def _wrap_cases():
    for m in HIPKITTENS["measurements"]:
        yield pytest.param("gfx950", m["instruction"], m["banks"], m["wrap_conflicts"],
                           id=f"hipkittens-gfx950-{m['instruction']}")  # fmt: skip
    yield pytest.param("gfx942", "ds_read_b32", PYHIP["banks"], [32, 64, 128, 256],
                       id="pyhip-gfx942-stride-sweep")  # fmt: skip


@pytest.mark.parametrize(("target", "op", "banks", "published"), list(_wrap_cases()))
def test_the_bank_count_found_by_wrap_around_is_the_published_one(target, op, banks, published):
    """Sweeping lane 1's offset, the first conflict comes when lane 1's last dword wraps onto
    lane 0's bank 0: that dword is the bank count. Every offset the source found conflicting
    conflicts in the model, and the model conflicts only around multiples of the count."""
    width = INSTRUCTIONS[op].bytes_per_lane // 4
    hits = wrap_around(op, _hw(target), max(published) + width)
    assert hits, f"{op}: no conflict up to {max(published) + width} dwords"
    assert hits[0] + width - 1 == banks
    assert set(published) <= set(hits)
    assert all(k % banks > banks - width or k % banks < width for k in hits)


def test_the_mi300_stride_sweep():
    """pyhip's MI300 sweep (all 64 lanes at lane * stride dwords): the model serves a stride in
    one bank cycle exactly where the kernel ran at the conflict-free speed (within 10% of
    stride 1), and the slower a stride ran, the more bank cycles the model gives it."""
    sweep = PYHIP["stride_sweep"]
    hw = _hw("gfx942")
    times = {
        s: t for s, t in sweep["microseconds"].items() if s * WAVE * 4 <= hw.partitions.lds_bytes
    }
    strides = sorted(times)
    addr = np.array([np.arange(WAVE) * 4 * s for s in strides], dtype=np.int64)
    table = pass_table(np.full(len(strides), op_code(sweep["instruction"])), addr, hw)
    cycles = np.ones(len(strides), dtype=np.int64)
    np.maximum.at(cycles, table.row, table.bank_cycles)
    fast = np.array([times[s] < 1.1 * times[1] for s in strides])
    assert (cycles == 1).tolist() == fast.tolist()
    by_cycles = sorted(zip(cycles.tolist(), [times[s] for s in strides], strict=True))
    slower = [t for _, t in by_cycles]
    assert all(b >= 0.99 * a for a, b in zip(slower, slower[1:], strict=False))
    assert {s for s in strides if not times[s] < 1.1 * times[1]} == {2, 4, 8, 16, 32, 64, 128, 256}
