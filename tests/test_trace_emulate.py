"""The functional LDS emulator: plain loads copy a lane's bytes, ds_load_tr exchanges rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.errors import TraceError
from wgpsim.trace.emulate import emulate, tr8_source_lane, tr16_source_lane
from wgpsim.trace.instructions import INSTRUCTIONS, LANES

PLAIN = ["ds_load_u8", "ds_load_u16", "ds_load_b32", "ds_load_b64", "ds_load_b96", "ds_load_b128"]


def _row_lds(elem_bits: int, row_elems: int) -> tuple[np.ndarray, np.ndarray]:
    """LDS where element e of the row read by lane s has value 100*s + e (rows 2 rows apart)."""
    dt = np.dtype(f"<u{elem_bits // 8}")
    rows = np.zeros((LANES, 2 * row_elems), dtype=dt)
    rows[:, :row_elems] = 100 * np.arange(LANES)[:, None] + np.arange(row_elems)
    # lanes read in a scrambled order of rows, to show addresses are independent (Figure 3)
    perm = np.random.default_rng(0).permutation(LANES)
    lds = np.zeros_like(rows)
    lds[perm] = rows
    addr = perm * 2 * row_elems * dt.itemsize
    return lds.view(np.uint8).ravel(), addr


def test_tr16_seed_examples():
    lds, addr = _row_lds(16, 8)
    out = emulate("ds_load_tr16_b128", lds, addr)
    assert out.shape == (32, 8) and out.dtype == np.uint16
    # D0 <- [S0:E0 .. S7:E0], D1 <- [S0:E1 .. S7:E1], D8 <- [S8:E0 .. S15:E0]
    assert out[0].tolist() == [100 * s for s in range(8)]
    assert out[1].tolist() == [100 * s + 1 for s in range(8)]
    assert out[8].tolist() == [100 * s for s in range(8, 16)]
    assert out[31].tolist() == [100 * s + 7 for s in range(24, 32)]


def test_tr8_two_runs_of_four():
    lds, addr = _row_lds(8, 8)
    out = emulate("ds_load_tr8_b64", lds, addr)
    assert out.shape == (32, 8) and out.dtype == np.uint8
    # D0-D7 draw from S0-S3 and S8-S11, D8-D15 from S4-S7 and S12-S15 (8-bit values wrap)
    expected = {0: [0, 1, 2, 3, 8, 9, 10, 11], 8: [4, 5, 6, 7, 12, 13, 14, 15]}
    expected |= {16 + k: [16 + s for s in v] for k, v in expected.items()}
    for lane, src in expected.items():
        for d in range(8):
            assert out[lane + d].tolist() == [(100 * s + d) % 256 for s in src]


def test_source_lane_functions_are_permutations_within_groups():
    lane = np.arange(32)[:, None]
    reg = np.arange(8)[None, :]
    for fn in (tr16_source_lane, tr8_source_lane):
        src = fn(lane, reg)
        # every (source lane, element = lane % 8) pair is delivered exactly once
        pairs = set(
            zip(
                src.ravel().tolist(),
                np.broadcast_to(lane % 8, src.shape).ravel().tolist(),
                strict=True,
            )
        )
        assert len(pairs) == 32 * 8
        # exchanges stay within 16-lane halves (tr8) or 8-lane groups (tr16)
        assert np.all(src // 16 == lane // 16)
    assert np.all(tr16_source_lane(lane, reg) // 8 == lane // 8)


@pytest.mark.parametrize("op", PLAIN)
def test_plain_loads_copy_own_bytes(op):
    width = INSTRUCTIONS[op].bytes_per_lane
    lds = np.arange(4096, dtype=np.uint32).astype(np.uint8)
    addr = np.arange(32) * 16
    out = emulate(op, lds, addr, elem_bits=8)
    assert out.shape == (32, width)
    assert np.array_equal(out, lds[addr[:, None] + np.arange(width)])


def test_default_element_widths():
    lds = np.arange(256, dtype=np.uint8)
    assert emulate("ds_load_b128", lds, np.zeros(32, int)).shape == (32, 4)
    assert emulate("ds_load_b96", lds, np.zeros(32, int)).dtype == np.uint32
    assert emulate("ds_load_u16", lds, np.full(32, 2)).tolist()[0] == [2 | 3 << 8]


def test_inactive_lanes_read_zero_and_batches_broadcast():
    lds = np.full(256, 7, dtype=np.uint8)
    addr = np.zeros((3, 32), dtype=int)
    addr[1, 5] = -1
    out = emulate("ds_load_b32", lds, addr, elem_bits=8)
    assert out.shape == (3, 32, 4)
    assert out[1, 5].tolist() == [0, 0, 0, 0] and out[0, 5].tolist() == [7] * 4


def test_errors_are_domain_errors():
    lds = np.zeros(64, dtype=np.uint8)
    with pytest.raises(TraceError, match="misaligned"):
        emulate("ds_load_b128", lds, np.full(32, 2))
    with pytest.raises(TraceError, match="past the end"):
        emulate("ds_load_b32", lds, np.full(32, 64))
    with pytest.raises(TraceError, match="store"):
        emulate("ds_store_b32", lds, np.zeros(32, int))
    with pytest.raises(TraceError, match="32 or 64 lanes, got \\(16,\\)"):
        emulate("ds_load_b32", lds, np.zeros(16, int))
    assert emulate("ds_load_b32", lds, 4 * (np.arange(64) % 16)).shape == (64, 1)  # wave64
    with pytest.raises(TraceError, match="dimension of 32 lanes, got \\(64,\\)"):
        emulate("ds_load_tr16_b128", lds, np.zeros(64, int))  # gfx1250's exchange is wave32
    with pytest.raises(TraceError, match="exchanges 16-bit"):
        emulate("ds_load_tr16_b128", lds, np.zeros(32, int), elem_bits=8)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["ds_load_tr16_b128", "ds_load_tr8_b64"]), st.integers(0, 2**32 - 1))
def test_tr_is_plain_load_then_fixed_exchange(op, seed):
    """Any addresses (Figure 3): ds_load_tr = the plain load's rows, then the fixed exchange."""
    rng = np.random.default_rng(seed)
    width = INSTRUCTIONS[op].bytes_per_lane
    lds = rng.integers(0, 256, 2048, dtype=np.uint8)
    addr = rng.integers(0, 2048 // width, 32) * width
    bits = INSTRUCTIONS[op].elem_bits
    rows = emulate({8: "ds_load_b64", 16: "ds_load_b128"}[bits], lds, addr, elem_bits=bits)
    out = emulate(op, lds, addr)
    fn = tr16_source_lane if bits == 16 else tr8_source_lane
    for lane in range(32):
        for r in range(8):
            assert out[lane, r] == rows[fn(lane, r), lane % 8]
