"""The fast engine against the simpy reference: random traces, the whole ``Result`` must agree.

Hypothesis draws traces of 1-8 warps mixing every LDS instruction (contiguous, strided with bank
conflicts, broadcast, scattered, straddling partitions, inactive lanes) with ``wait_ds``,
barriers, delays and clocks, on the default hardware and on variants that stress the issue and
arbiter rules (small queues, slow issue, low dscnt, Triton lane grouping, 128 banks, warp drift
with a seed). Every counter, every clock read (in order), the total cycles and the event log must be
identical. The engines state the rules independently (``des``: the plain ``wgpsim.hw.rules``;
``fast``: its compiled kernels, checked against the plain rules in
``tests/test_engine_fast_rules.py``), so a disagreement is a bug in one of them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wave64_hardware import wave64

from wgpsim.engine import ENGINES, des, fast, simulate
from wgpsim.errors import TraceError
from wgpsim.hw import load_hardware
from wgpsim.trace.generate import microbenchmark_trace
from wgpsim.trace.instructions import INSTRUCTIONS, LANES
from wgpsim.trace.trace import TraceBuilder

HW = load_hardware()
P = HW.partitions.size
LDS_BYTES = HW.partitions.lds_bytes
LANE = np.arange(LANES)
VARIANTS = {
    "default": HW,
    "triton_lanes": HW.with_overrides(**{"passes.lane_grouping": "triton"}),
    "queue_1": HW.with_overrides(**{"timing.queue_depth": 1}),
    "issue_3": HW.with_overrides(**{"timing.issue_interval": 3}),
    "dscnt_2": HW.with_overrides(**{"timing.dscnt_max": 2, "timing.lds_latency": 9}),
    "banks_128": HW.with_overrides(**{"banks.count": 128}),
    "store_banks_32": HW.with_overrides(**{"banks.store_count": 32}),
    "one_partition": HW.with_overrides(  # a chip without partitions: the LDS in one
        **{"partitions.size": LDS_BYTES, "partitions.count": 1, "partitions.lds": [0]},
        **{"partitions.l0": []},
    ),
    "round_robin": HW.with_overrides(**{"arbiter.grant_policy": "round_robin"}),
    "fixed_priority": HW.with_overrides(**{"arbiter.grant_policy": "fixed_priority"}),
    "lowest_pair": HW.with_overrides(**{"arbiter.tie_break": "lowest_pair"}),
    "xor_lanes": HW.with_overrides(  # pass bits as XORs of lane bits (issue 27's gfx9 phase)
        **{
            "passes.groupings.blog.ds_load_b128": [[2, 3, 4]],
            "passes.groupings.blog.ds_store_b128": [[0, 4], [1, 3]],
        }
    ),
}
DRIFT = {
    j: HW.with_overrides(**{"drift.model": "uniform", "drift.jitter_cycles": j}) for j in (1, 3, 8)
}
OPS = sorted(load_hardware().instructions)
LABELS = ("start", "mid", "end")


def assert_same(a, b) -> None:
    """Every field of two Results (but the engine's name), clocks and event log in order."""
    da, db = a.to_dict(), b.to_dict()
    assert (da.pop("engine"), db.pop("engine")) == ("des", "fast")
    assert da == db
    pd.testing.assert_frame_equal(a.clocks, b.clocks)
    assert (a.event_log is None) == (b.event_log is None)
    if a.event_log is not None:
        pd.testing.assert_frame_equal(a.events(), b.events())
        for x, y in zip(a.granted(), b.granted(), strict=True):  # the numbers timing reads
            np.testing.assert_array_equal(x, y)
    assert (a.op_log is None) == (b.op_log is None)
    if a.op_log is not None:  # every row's cycles (record_ops)
        np.testing.assert_array_equal(a.op_log, b.op_log)


@pytest.mark.parametrize("variant", ["default", "queue_1", "issue_3"])
def test_fast_equals_des_on_full_queues(variant):
    """Four warps streaming 12 loads each into two pairs sharing a partition: queues full,
    SIMDs taking turns, every grant serialized (a quick first check; the random traces
    below explore)."""
    b = TraceBuilder(4)
    for w in range(4):
        b.clock(w, "start")
        b.loads(w, "ds_load_b128", w * 4096 + 512 * np.arange(12)[:, None] + 16 * LANE)
        b.wait_ds(w, 0)
        b.clock(w, "end")
    hw = VARIANTS[variant]
    assert_same(
        simulate(b.build(), hw, engine="des", record_events=True, record_ops=True),
        simulate(b.build(), hw, engine="fast", record_events=True, record_ops=True),
    )


# -- random traces -----------------------------------------------------------------------------

addresses = st.tuples(
    st.integers(0, len(HW.partitions.lds) - 1),  # partition
    st.sampled_from([0, 256, 4096, P - 256, P - 1024]),  # offset in it (near the end: straddles)
    st.sampled_from(["contiguous", "stride", "broadcast", "scatter", "half"]),
    st.sampled_from([2, 4, 8, 16, 32]),  # stride in widths (bank conflicts from 32 B on)
    st.integers(0, 2**32 - 1),  # scatter seed / inactive lane mask
    st.booleans(),  # some inactive lanes
)


def lane_addresses(op: str, spec, lanes: int = LANES) -> np.ndarray:
    """``lanes`` valid lane addresses of ``op`` (aligned, inside the LDS) from a drawn
    ``spec``."""
    part, offset, pattern, mult, bits, holes = spec
    LANE = np.arange(lanes)
    ins = INSTRUCTIONS[op]
    width, align = ins.bytes_per_lane, ins.alignment
    base = part * P + offset
    if pattern == "contiguous":
        addr = base + width * LANE
    elif pattern == "stride":
        addr = base + width * mult * LANE
    elif pattern == "broadcast":
        addr = np.full(lanes, base)
    elif pattern == "half":  # two groups of lanes in two partitions
        addr = base + width * LANE + P * (lanes // 2 <= LANE)
    else:
        addr = np.random.default_rng(bits).integers(0, LDS_BYTES // 64, size=lanes) * 16
    addr = (addr % (LDS_BYTES - 256 - distance(op, spec))) // align * align
    if holes:
        addr = np.where(((bits >> LANE % 32) ^ (LANE >= 32)) & 1, addr, -1)
    return addr


def distance(op: str, spec) -> int:
    """A 2addr form's byte distance to the second address (``mult`` offset units), else 0."""
    return INSTRUCTIONS[op].offset_unit_bytes * spec[3]


warp_op = st.one_of(
    st.tuples(st.just("lds"), st.sampled_from(OPS), addresses),
    st.tuples(st.just("tdm"), st.lists(addresses, min_size=1, max_size=3)),
    st.tuples(st.just("wait_tensor"), st.integers(0, 2)),
    st.tuples(st.just("wait_ds"), st.integers(0, 3)),
    st.tuples(st.just("delay"), st.integers(0, 9)),
    st.tuples(st.just("clock"), st.sampled_from(LABELS)),
)


@st.composite
def traces(draw, max_ops: int = 8, lanes: int = LANES):
    """A valid trace: 1-8 warps of ``lanes`` lanes, each a few segments of ops separated by
    common barriers."""
    num_warps = draw(st.integers(1, 8))
    segments = draw(st.integers(1, 3))
    b = TraceBuilder(num_warps, lanes)
    for segment in range(segments):
        if segment:
            b.barrier()
        for w in range(num_warps):
            for op in draw(st.lists(warp_op, max_size=max_ops)):
                if op[0] == "lds":
                    addr = lane_addresses(op[1], op[2], lanes)
                    b.lds(w, op[1], addr, distance(op[1], op[2]))
                elif op[0] == "tdm":  # one TDM instruction of 1-3 rows of 256 B
                    rows = [lane_addresses("tensor_load_to_lds", a, lanes) for a in op[1]]
                    b.tdm(w, np.stack(rows))
                else:
                    getattr(b, op[0])(w, op[1])
    return b.build(lds_bytes=LDS_BYTES)


@settings(max_examples=700, deadline=None)
@given(trace=traces(), variant=st.sampled_from(sorted(VARIANTS)))
def test_fast_equals_des_on_random_traces(trace, variant):
    hw = VARIANTS[variant]
    assert_same(
        simulate(trace, hw, engine="des", record_events=True, record_ops=True),
        simulate(trace, hw, engine="fast", record_events=True, record_ops=True),
    )


WAVE64 = {  # a small wave64 hardware file (tests/wave64_hardware.py) and variants of it
    "wave64": wave64(),
    "wave64_triton": wave64(**{"passes.lane_grouping": "triton"}),
    "wave64_banks_128": wave64(**{"banks.count": 128}),
    "wave64_queue_1": wave64(**{"timing.queue_depth": 1}),
    "wave64_store_banks_32": wave64(**{"banks.store_count": 32}),  # gfx950: 64 read, 32 write
}


@settings(max_examples=300, deadline=None)
@given(trace=traces(lanes=64), variant=st.sampled_from(sorted(WAVE64)))
def test_fast_equals_des_on_wave64_traces(trace, variant):
    """64 lane addresses a row, lane masks beyond bit 31, XOR lane groups: cycle for cycle."""
    hw = WAVE64[variant]
    assert_same(
        simulate(trace, hw, engine="des", record_events=True, record_ops=True),
        simulate(trace, hw, engine="fast", record_events=True, record_ops=True),
    )


def test_wave64_stream_on_the_wave64_file():
    """Four warps of 64 lanes reading 16 B each (1 KiB a ds_load_b128): four conflict-free
    passes of 256 B each, so 4 port cycles a load; the engines agree."""
    b = TraceBuilder(4, lanes=64)
    for w in range(4):
        b.clock(w, "start")
        b.loads(w, "ds_load_b128", w * 8192 + 1024 * np.arange(8)[:, None] + 16 * np.arange(64))
        b.wait_ds(w, 0)
        b.clock(w, "end")
    trace = b.build()
    hw = WAVE64["wave64"]
    des_result = simulate(trace, hw, engine="des", record_events=True, record_ops=True)
    assert des_result.passes == 4 * 8 * 4
    assert des_result.bytes == 4 * 8 * 1024
    assert_same(des_result, simulate(trace, hw, engine="fast", record_events=True, record_ops=True))


def test_lane_count_must_match_the_hardware():
    b = TraceBuilder(1, lanes=64)
    b.load(0, "ds_load_b32", 4 * np.arange(64))
    with pytest.raises(TraceError, match="64 lanes per warp, but .* has wgp.warp_size 32"):
        simulate(b.build(), HW, engine="des")
    with pytest.raises(TraceError, match="32 lanes per warp, but .* has wgp.warp_size 64"):
        simulate(TraceBuilder(1).build(), WAVE64["wave64"], engine="fast")


@settings(max_examples=300, deadline=None)
@given(trace=traces(max_ops=6), jitter=st.sampled_from(sorted(DRIFT)), seed=st.integers(0, 2**31))
def test_fast_equals_des_with_drift(trace, jitter, seed):
    hw = DRIFT[jitter]
    assert_same(
        simulate(trace, hw, engine="des", seed=seed, record_ops=True),
        simulate(trace, hw, engine="fast", seed=seed, record_ops=True),
    )


@settings(max_examples=60, deadline=None)
@given(warps=st.integers(1, 8), loads=st.integers(1, 40), same_partition=st.booleans())
def test_fast_equals_des_on_streams(warps, loads, same_partition):
    """Long back-to-back streams: full queues, dscnt pressure, both ports and serialization."""
    b = TraceBuilder(warps)
    b.barrier()
    for w in range(warps):
        base = (w % 4) * 16384 + (0 if same_partition else (w % 2) * P)
        b.clock(w, "start")
        b.loads(w, "ds_load_b128", base + 512 * (np.arange(loads)[:, None] % 32) + 16 * LANE)
        b.wait_ds(w, 0)
    b.barrier()
    for w in range(warps):
        b.clock(w, "end")
    trace = b.build()
    assert_same(
        simulate(trace, HW, engine="des", record_events=True, record_ops=True),
        simulate(trace, HW, engine="fast", record_events=True, record_ops=True),
    )


# -- fixed cases ----------------------------------------------------------------------------------


def test_fast_follows_des_on_the_seed_microbenchmark():
    """Both layouts of the AMD blog's table, every counter (tests/test_engine_des.py holds
    the calibration itself)."""
    assert "fast" in ENGINES
    lanes = 16 * LANE
    plain = np.stack([w * 16384 + 512 * np.arange(32)[:, None] + lanes for w in range(4)])
    parted = np.stack(
        [(w // 2) * 16384 + (w % 2) * P + 512 * np.arange(32)[:, None] + lanes for w in range(4)]
    )
    for blocks in (plain, parted):
        trace = microbenchmark_trace(blocks, "ds_load_b128")
        assert_same(
            simulate(trace, HW, engine="des", record_events=True),
            simulate(trace, HW, engine="fast", record_events=True),
        )


def test_stuck_warps_fail_alike():
    b = TraceBuilder(2)
    b.barrier([0])  # warp 1 never arrives
    trace = b.build(check=False)
    with pytest.raises(TraceError) as want:
        des.run(trace, HW)
    with pytest.raises(TraceError) as got:
        fast.run(trace, HW)
    assert str(got.value) == str(want.value)


def test_empty_instruction_and_empty_trace():
    b = TraceBuilder(3)
    b.load(1, "ds_load_b64", [None] * LANES)  # no active lane: no pass, completes after latency
    b.wait_ds(1, 0)
    b.clock(1, "end")
    for trace in (b.build(), TraceBuilder(2).build()):
        assert_same(
            simulate(trace, HW, engine="des", record_events=True, record_ops=True),
            simulate(trace, HW, engine="fast", record_events=True, record_ops=True),
        )
