"""The 2addr forms through the rules and both engines: hand-counted banks, bytes and partitions.

A ``ds_load_2addr_*`` / ``ds_store_2addr_*`` lane makes two accesses (its address, and the row's
``arg`` bytes on); a pass holds both accesses of its lanes (docs/DESIGN.md, "Instructions become
passes"). Every expected number below is counted by hand from the addresses.
"""

from __future__ import annotations

import numpy as np
import pytest

from wgpsim.engine import simulate
from wgpsim.hw import load_hardware
from wgpsim.hw.rules import split_passes
from wgpsim.trace import TraceBuilder, read_jsonl, write_jsonl

HW = load_hardware()
LANE = np.arange(32)
P = HW.partitions.size


@pytest.mark.parametrize(
    ("op", "addr", "distance", "want"),
    [
        # offsets 0 and 1 dword, lanes 8 B apart: dwords 0..63 once each, like ds_load_b64
        ("ds_load_2addr_b32", 8 * LANE, 4, [(32, 256, 1)]),
        # lanes 4 B apart, second access 256 B on: dwords 0-31 and 64-95, banks 0-31 twice
        ("ds_load_2addr_b32", 4 * LANE, 256, [(32, 256, 2)]),
        # stride64: distance 64 dwords = one bank row, the same banks again
        ("ds_load_2addr_stride64_b32", 4 * LANE, 256, [(32, 256, 2)]),
        # offsets 0 and 1 of b64, lanes 16 B apart: each 16-lane pass is dwords 0..63 once
        ("ds_load_2addr_b64", 16 * LANE, 8, [(16, 256, 1), (16, 256, 1)]),
        # b64 at 8*l and 8*l + 512: a pass is dwords 0-31 and 128-159 (or 32-63, 160-191)
        ("ds_store_2addr_b64", 8 * LANE, 512, [(16, 256, 2), (16, 256, 2)]),
        # every lane on one dword pair: a broadcast, one cycle
        ("ds_load_2addr_b32", np.zeros(32, int), 4, [(32, 256, 1)]),
    ],
)
def test_passes_of_two_address_forms(op, addr, distance, want):
    got = [(len(p.lanes), p.bytes, p.bank_cycles) for p in split_passes(op, addr, HW, distance)]
    assert got == want


def test_second_access_adds_its_partition():
    # first accesses in partition 0, second ones one partition on (distance 255 x 256 B)
    (one,) = split_passes("ds_load_2addr_stride64_b32", P - 128 + 4 * LANE, HW, 255 * 256)
    assert one.partitions == 0b11  # the first accesses straddle into partition 1
    (two,) = split_passes("ds_load_2addr_stride64_b32", 4 * LANE, HW, 255 * 256)
    assert two.partitions == 0b01 | (1 << ((255 * 256) // P))


def _trace(op: str, distance: int) -> TraceBuilder:
    b = TraceBuilder(4)
    b.barrier()
    for w in range(4):
        b.clock(w, "start")
        b.lds_many(w, op, w * 4096 + 1024 * np.arange(8)[:, None] + 4 * LANE, distance)
        b.wait_ds(w, 0)
        b.clock(w, "end")
    return b.build()


@pytest.mark.parametrize("engine", ["des", "fast"])
def test_engines_time_the_second_access(engine):
    # 2addr_b32 with the second access 256 B on meets its own first accesses' banks: 2 bank
    # cycles per instruction instead of 1 (distance 128: dwords 0-31 and 32-63, no conflict)
    clean = simulate(_trace("ds_load_2addr_b32", 128), HW, engine=engine)
    conflicted = simulate(_trace("ds_load_2addr_b32", 256), HW, engine=engine)
    assert clean.passes == conflicted.passes == 32
    assert clean.bytes == conflicted.bytes == 32 * 256
    assert clean.bank_conflict_cycles == 0 and conflicted.bank_conflict_cycles == 32
    assert conflicted.measurement() > clean.measurement()


def test_des_and_fast_agree_on_two_address_traces():
    for op, dist in (("ds_load_2addr_b64", 8), ("ds_store_2addr_stride64_b64", 512 * 3)):
        t = _trace(op, dist)
        des, fast = simulate(t, HW, engine="des"), simulate(t, HW, engine="fast")
        assert des.to_dict() | {"engine": ""} == fast.to_dict() | {"engine": ""}


def test_jsonl_keeps_the_distance(tmp_path):
    t = _trace("ds_load_2addr_b64", 64)
    path = write_jsonl(t, tmp_path / "t.jsonl")
    assert '"distance": 64' in path.read_text()
    assert read_jsonl(path) == t
