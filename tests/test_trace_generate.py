"""Trace generators: vector_loads, the seed's microbenchmark, streaming and random traces."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.errors import TraceError
from wgpsim.trace import (
    INSTRUCTIONS,
    OPS,
    microbenchmark_trace,
    op_code,
    random_trace,
    streaming_trace,
    validate,
    vector_loads,
)

LANES = 32


def seed_row_addresses(num_warps, regs, elem_bytes=2, row_elems=None):
    """The seed's blocked layout: warp w owns row w, lane l holds 8 contiguous fp16 at 8*l, and
    further registers stride along the row in 256-element steps."""
    row_elems = row_elems or 256 * (regs // 8)
    w, lane, r = np.meshgrid(np.arange(num_warps), np.arange(LANES), np.arange(regs), indexing="ij")
    elem = w * row_elems + (r // 8) * 256 + lane * 8 + r % 8
    return elem * elem_bytes


def names(trace, rows):
    return [OPS[c] for c in trace.op[rows]]


# ---- vector_loads ---------------------------------------------------------------------------


def test_vector_loads_on_contiguous_registers():
    addr = seed_row_addresses(num_warps=2, regs=16)  # two b128 loads per warp
    blocks = vector_loads(addr, elem_bytes=2, vec=8, op="ds_load_b128")
    assert blocks.shape == (2, 2, LANES)
    # instruction i of warp w: lane l reads the first of its 8 registers
    for w in range(2):
        for i in range(2):
            assert blocks[w, i].tolist() == addr[w, :, 8 * i].tolist()
    assert blocks[1, 1, 3] == 2 * (512 + 256 + 24)


def test_vector_loads_with_narrower_vectors():
    addr = seed_row_addresses(num_warps=1, regs=8)
    blocks = vector_loads(addr, elem_bytes=2, vec=4, op="ds_load_b64")
    assert blocks.shape == (1, 2, LANES)
    assert blocks[0, 1, 0] == addr[0, 0, 4] == 8


def test_vector_loads_rejects_non_contiguous_registers():
    addr = seed_row_addresses(num_warps=2, regs=8).copy()
    addr[1, 5, 6] += 64  # warp 1, lane 5, register 6 jumps away
    with pytest.raises(
        TraceError,
        match=r"vector_loads: warp 1 lane 5 register 6: address \d+ is not \d+ \+ 6\*2 \(registers 0..7 must be contiguous for one ds_load_b128\)",
    ):
        vector_loads(addr, elem_bytes=2, vec=8, op="ds_load_b128")
    # the same registers in two 4-register loads: register 6 still breaks its chunk 4..7
    with pytest.raises(TraceError, match=r"register 6: .*\+ 2\*2 \(registers 4..7"):
        vector_loads(addr, elem_bytes=2, vec=4, op="ds_load_b64")


def test_vector_loads_checks_shapes_and_width():
    addr = seed_row_addresses(num_warps=1, regs=8)
    with pytest.raises(
        TraceError, match=r"ds_load_b128 moves 16 bytes per lane but vec \* elem_bytes = 4 \* 2 = 8"
    ):
        vector_loads(addr, 2, 4, "ds_load_b128")
    with pytest.raises(TraceError, match=r"8 registers per lane is not a multiple of vec=16"):
        vector_loads(addr, 1, 16, "ds_load_b128")
    with pytest.raises(
        TraceError, match=r"must be \[warp, 32 or 64 lanes, register\], got \[1, 16, 8\]"
    ):
        vector_loads(addr[:, :16], 2, 8, "ds_load_b128")


def test_wave64_streams_and_random_traces():
    """64 lanes a warp: lane l of load i reads base + i * 64 * width + l * width; a random
    wave64 trace holds 64 addresses a row."""
    t = streaming_trace(2, 3, "ds_load_b64", [0, 8192], lanes=64)
    assert t.lanes == 64 and t.addr[1, 63] == 512 + 63 * 8
    assert random_trace(np.random.default_rng(3), num_warps=2, lanes=64).lanes == 64


# ---- the seed's microbenchmark --------------------------------------------------------------


def test_microbenchmark_matches_the_seeds_kernel():
    # Seed, Part II: four warps, 64 KiB working set, 32 ds_load_b128 per warp.
    addr = seed_row_addresses(num_warps=4, regs=8 * 32)
    t = microbenchmark_trace(vector_loads(addr, 2, 8, "ds_load_b128"), "ds_load_b128")
    assert t.num_warps == 4
    assert t.lds_bytes() == 64 * 1024  # the warps together read the tensor exactly once
    for w in range(4):
        ops = names(t, t.ops_of(w))
        assert ops == ["barrier", "clock"] + ["ds_load_b128"] * 32 + ["wait_ds", "barrier", "clock"]
        rows = t.ops_of(w)
        assert [t.clock_label(r) for r in rows if t.op[r] == op_code("clock")] == ["start", "end"]
        assert t.arg[rows[-3]] == 0  # wait_ds 0
    # every warp reads only its own row
    lds = t.lds_mask()
    for w in range(4):
        own = t.addr[lds & (t.warp == w)]
        assert own.min() == w * 16384 and own.max() == (w + 1) * 16384 - 16


def test_microbenchmark_without_wait():
    t = microbenchmark_trace(np.zeros((2, 3, LANES), dtype=int), "ds_load_b32", wait=False)
    assert names(t, t.ops_of(1)) == ["barrier", "clock"] + ["ds_load_b32"] * 3 + [
        "barrier",
        "clock",
    ]


def test_microbenchmark_shape_error():
    with pytest.raises(
        TraceError, match=r"addr_blocks must be \[warp, n_instr, 32 or 64\], got \[3, 32\]"
    ):
        microbenchmark_trace(np.zeros((3, LANES), dtype=int), "ds_load_b32")


# ---- streaming ------------------------------------------------------------------------------


def test_streaming_trace_addresses():
    t = streaming_trace(2, 3, "ds_load_b64", [0, 8192], stride=16, step=1024)
    assert len(t) == 2 * (3 + 1)
    for w, base in enumerate([0, 8192]):
        rows = t.ops_of(w)
        assert names(t, rows) == ["ds_load_b64"] * 3 + ["wait_ds"]
        for i, r in enumerate(rows[:3]):
            assert t.addr[r].tolist() == [base + i * 1024 + lane * 16 for lane in range(LANES)]


def test_streaming_trace_defaults_and_callable_base():
    t = streaming_trace(4, 2, "ds_load_b128", lambda w: w * 65536)
    r = t.ops_of(3)[1]
    assert t.addr[r].tolist() == [3 * 65536 + 512 + 16 * lane for lane in range(LANES)]
    timed = streaming_trace(4, 2, "ds_load_b128", lambda w: w * 65536, timed=True)
    assert names(timed, timed.ops_of(0))[:2] == ["barrier", "clock"]
    assert timed.lds_bytes() == t.lds_bytes() == 4 * 2 * 512


def test_streaming_trace_base_count():
    with pytest.raises(TraceError, match=r"base_of_warp gives 1 bases for 2 warps"):
        streaming_trace(2, 1, "ds_load_b32", [0])


# ---- random ---------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    num_warps=st.one_of(st.none(), st.integers(1, 8)),
    lds_kib=st.sampled_from([4, 64, 320]),
)
def test_random_traces_are_valid_and_reproducible(seed, num_warps, lds_kib):
    lds_bytes = lds_kib * 1024
    t = random_trace(np.random.default_rng(seed), num_warps, lds_bytes=lds_bytes)
    validate(t, lds_bytes)
    assert t == random_trace(np.random.default_rng(seed), num_warps, lds_bytes=lds_bytes)
    barriers = np.bincount(t.warp[t.op == op_code("barrier")], minlength=t.num_warps)
    assert len(set(barriers.tolist())) <= 1
    if num_warps is not None:
        assert t.num_warps == num_warps


def test_random_traces_cover_every_kind_of_op_and_address():
    rng = np.random.default_rng(7)
    traces = [random_trace(rng) for _ in range(30)]
    seen = set().union(*(t.count_by_op() for t in traces))
    gfx9 = {n for n, ins in INSTRUCTIONS.items() if ins.family == "gfx9"}  # other targets'
    assert seen == set(OPS) - gfx9
    lds = [t.addr[t.lds_mask()] for t in traces]
    rows = np.concatenate(lds)
    assert ((rows < 0).any(axis=1)).any()  # some inactive lanes
    assert (rows == rows[:, :1]).all(axis=1).any()  # some broadcasts
    assert ((rows[:, 1] - rows[:, 0]) >= 256).any()  # some wide strides (bank conflicts)


def test_random_trace_restricted_ops():
    t = random_trace(
        np.random.default_rng(3), 4, ops=["ds_load_b128"], p_control=0.0, max_barriers=0
    )
    assert set(t.count_by_op()) <= {"ds_load_b128"}
    assert INSTRUCTIONS["ds_load_b128"].bytes_per_lane * t.active_lanes().sum() == t.lds_bytes()
