"""local_load lowering on gfx1250: Triton's decisions, and the emulator proving the exchange."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.engine import simulate
from wgpsim.errors import LayoutError
from wgpsim.hw import load_hardware
from wgpsim.layout.distributed import DistributedLinearLayout
from wgpsim.layout.dtypes import dtype_bits
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
from wgpsim.layout.shared import PaddedSharedLayout, PartitionedSharedLayout, SwizzledSharedLayout
from wgpsim.trace.lowering import Lowering, lower

# ---------------------------------------------------------------- notes section 4 (oracle)
WARPS = [[0, 1], [1, 0]]
MMA_B16 = AMDWMMALayout(3, False, WARPS, instr_shape=(16, 16, 32))
MMA_B8 = AMDWMMALayout(3, False, WARPS, instr_shape=(16, 16, 64))
MMA_B8_2X = AMDWMMALayout(3, False, WARPS, instr_shape=(16, 16, 128))
SHARED = SwizzledSharedLayout(1, 1, 1, (0, 1))  # dim0 contiguous
SHARED1 = SwizzledSharedLayout(1, 1, 1, (1, 0))  # dim1 contiguous
NO_WARPS = [[0, 0], [0, 0]]


def _linear(reg, lane, warp=NO_WARPS):
    return DistributedLinearLayout(reg, lane, warp, ())


def _padded(shape, order=(0, 1), pairs=((512, 16),)):
    return PaddedSharedLayout(pairs, order=order, shape=shape)


LL_VALID = _linear([[0, 1], [0, 2], [0, 4], [0, 8]], [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]])
LL_COMPLEX = _linear(
    [[0, 64], [16, 0], [0, 1], [32, 0], [0, 2], [0, 4], [64, 0], [0, 8], [0, 32]],
    [[1, 0], [2, 0], [4, 0], [0, 16], [8, 0]],
)
LL_INVALID = _linear([[0, 1], [0, 2], [0, 8], [0, 4]], [[1, 0], [4, 0], [2, 0], [8, 0], [16, 0]])

# (name, shared, dst, shape, dtype, Triton 3.9.0 instruction, count per thread)
ORACLE = [
    (
        "b16_load0",
        SHARED,
        DotOperandLayout(0, MMA_B16, 8),
        (128, 64),
        "fp16",
        "ds_load_tr16_b128",
        16,
    ),
    (
        "b16_load1",
        SHARED1,
        DotOperandLayout(1, MMA_B16, 8),
        (64, 128),
        "fp16",
        "ds_load_tr16_b128",
        16,
    ),
    (
        "b16_neg_load0",
        SHARED1,
        DotOperandLayout(0, MMA_B16, 8),
        (128, 64),
        "fp16",
        "ds_load_b128",
        16,
    ),
    (
        "b16_neg_load1",
        SHARED1,
        DotOperandLayout(1, MMA_B16, 8),
        (64, 128),
        "fp16",
        "ds_load_tr16_b128",
        16,
    ),
    (
        "b8_load0",
        SHARED,
        DotOperandLayout(0, MMA_B8_2X, 16),
        (128, 64),
        "i8",
        "ds_load_tr8_b64",
        32,
    ),
    ("b8_load1", SHARED1, DotOperandLayout(1, MMA_B8, 8), (64, 128), "i8", "ds_load_tr8_b64", 16),
    (
        "no_tr_load0",
        SHARED1,
        DotOperandLayout(0, MMA_B8_2X, 16),
        (128, 64),
        "i8",
        "ds_load_b128",
        8,
    ),
    ("no_tr_load1", SHARED, DotOperandLayout(1, MMA_B8, 8), (64, 128), "i8", "ds_load_b64", 16),
    ("ll", SHARED, LL_VALID, (64, 16), "bf16", "ds_load_tr16_b128", 4),
    ("ll_complex", SHARED, LL_COMPLEX, (64, 16), "bf16", "ds_load_tr16_b128", 8),
    ("ll_invalid", SHARED, LL_INVALID, (64, 16), "bf16", "ds_load_u16", 32),
    (
        "padding",
        _padded((128, 64)),
        DotOperandLayout(0, MMA_B16, 8),
        (128, 64),
        "fp16",
        "ds_load_tr16_b128",
        16,
    ),
    (
        "padding_too_small",
        _padded((128, 64), pairs=((1, 4),)),
        DotOperandLayout(0, MMA_B16, 8),
        (128, 64),
        "fp16",
        "ds_load_u16",
        128,
    ),
    (
        "partitioned_dim0",
        PartitionedSharedLayout(2, 1, 0, _padded((64, 64))),
        DotOperandLayout(0, MMA_B16, 8),
        (128, 64),
        "fp16",
        "ds_load_tr16_b128",
        16,
    ),
    (
        "partitioned_dim1",
        PartitionedSharedLayout(2, 1, 1, _padded((128, 32))),
        DotOperandLayout(0, MMA_B16, 8),
        (128, 64),
        "fp16",
        "ds_load_tr16_b128",
        16,
    ),
    (
        "partitioned_double_contiguity",
        PartitionedSharedLayout(2, 4, 1, _padded((64, 8), order=(1, 0))),
        DotOperandLayout(1, MMA_B8, 8),
        (64, 64),
        "i8",
        "ds_load_tr8_b64",
        8,
    ),
]
IDS = [c[0] for c in ORACLE]


def _bases(shared):
    return [0, 65536] if isinstance(shared, PartitionedSharedLayout) else 1024


def _lower(case, **kw) -> Lowering:
    _, shared, dst, shape, dtype, *_ = case
    return lower(shared, dst, shape, dtype, bases=_bases(shared), **kw)


@pytest.mark.parametrize("case", ORACLE, ids=IDS)
def test_oracle_instruction_and_count(case):
    low = _lower(case)  # the oracle counts Triton's LLVM-dialect output
    assert low.dialect_counts == {case[5]: case[6]}
    assert low.num_warps == 4


def test_figure5_valid_scrambled_invalid():
    kinds = [_lower(c).eligibility for c in ORACLE if c[0].startswith("ll")]
    assert kinds == ["valid", "scrambled-valid", "invalid"]
    reason = _lower(ORACLE[IDS.index("ll_invalid")]).reason
    assert "lane bases 1,2,4 must map to offsets 1,2,4; lane=2 (basis 1) maps to offset 4" in reason


def test_other_fallback_reasons():
    assert "padding interval 1 < 8" in _lower(ORACLE[IDS.index("padding_too_small")]).reason
    neg = _lower(ORACLE[IDS.index("b16_neg_load0")])
    assert neg.eligibility == "invalid" and "ds_load_b128" in neg.reason
    off = _lower(ORACLE[0], allow_transpose=False)
    assert off.eligibility == "disabled" and off.instruction == "ds_load_u16"


# ---------------------------------------------------------------- the seed's toy (Part I)
def _toy(reg):
    return _linear(reg, [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], [])


def test_seed_toy_one_instruction_and_triton_addresses():
    low = lower(SHARED, _toy([[0, 1], [0, 2], [0, 4]]), (32, 8), "bf16")
    assert low.counts == {"ds_load_tr16_b128": 1}
    assert low.cvt.get_bases("register") == ((32,), (64,), (128,))
    lane = np.arange(32)
    # Triton 3.9.0's generated IR: byte address ((lane & 7) << 6) | ((lane & 24) << 1)
    assert low.addresses[0, 0].tolist() == (((lane & 7) << 6) | ((lane & 24) << 1)).tolist()


def test_seed_toy_figure5_variants():
    assert lower(SHARED, _toy([[0, 2], [0, 1], [0, 4]]), (32, 8), "bf16").eligibility == (
        "scrambled-valid"
    )
    swapped = _linear([[0, 1], [0, 2], [0, 4]], [[2, 0], [1, 0], [4, 0], [8, 0], [16, 0]], [])
    low = lower(SHARED, swapped, (32, 8), "bf16")
    assert low.eligibility == "invalid" and low.counts == {"ds_load_u16": 8}
    assert "lane=1 (basis 0) maps to offset 2" in low.reason


# ---------------------------------------------------------------- the emulator proves it
def _fill_lds(shared, shape, elem_bits, bases, rng) -> tuple[np.ndarray, np.ndarray]:
    """Random tensor T laid out in LDS by the shared layout alone (forward map + padding)."""
    dt = np.dtype(f"<u{elem_bits // 8}")
    tensor = rng.integers(0, 1 << elem_bits, shape, dtype=np.uint64).astype(dt)
    sll = shared.to_linear_layout(shape)
    pad = getattr(shared, "pad", lambda o: o)
    base = np.atleast_1d(bases)
    nparts = sll.in_dim_size("partition") if sll.has_in_dim("partition") else 1
    off = np.arange(sll.in_dim_size("offset"))
    size = int(base.max() // dt.itemsize + pad(off.size) + 64)
    lds = np.zeros(size, dtype=dt)
    for p in range(nparts):
        ins = {"offset": off, "block": 0} | ({"partition": p} if nparts > 1 else {})
        coords = sll.apply({k: v for k, v in ins.items() if sll.has_in_dim(k)})
        idx = tuple(np.broadcast_to(coords[f"dim{d}"], off.shape) for d in range(len(shape)))
        lds[base[p] // dt.itemsize + pad(off)] = tensor[idx]
    return lds.view(np.uint8), tensor


def _expected(dst, shape, tensor, num_warps, num_regs):
    dll = dst.to_linear_layout(shape)
    w = np.arange(num_warps)[:, None, None]
    lane = np.arange(32)[None, :, None]
    reg = np.arange(num_regs)[None, None, :]
    c = dll.apply({"register": reg, "lane": lane, "warp": w, "block": 0})
    full = (num_warps, 32, num_regs)
    return tensor[tuple(np.broadcast_to(c[f"dim{d}"], full) for d in range(len(shape)))]


def _check_emulation(shared, dst, shape, dtype, bases, seed, **kw):
    low = lower(shared, dst, shape, dtype, bases=bases, **kw)
    rng = np.random.default_rng(seed)
    lds, tensor = _fill_lds(shared, shape, dtype_bits(dtype), bases, rng)
    got = low.emulate(lds)
    want = _expected(dst, shape, tensor, low.num_warps, low.num_registers)
    assert np.array_equal(got, want), low.instruction
    return low


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(ORACLE), st.integers(0, 2**31), st.booleans())
def test_every_lane_holds_what_dst_says(case, seed, transpose):
    """Random data in LDS, lowered instructions through the emulator == dst's elements."""
    _, shared, dst, shape, dtype, *_ = case
    _check_emulation(shared, dst, shape, dtype, _bases(shared), seed, allow_transpose=transpose)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from([(0, 1), (1, 0)]))
def test_seed_toy_emulation(seed, order):
    low = _check_emulation(
        SwizzledSharedLayout(1, 1, 1, order),
        _toy([[0, 1], [0, 2], [0, 4]]),
        (32, 8),
        "bf16",
        0,
        seed,
    )
    assert low.transposed == (order == (0, 1))


@settings(max_examples=10, deadline=None)
@given(
    st.integers(0, 2**31),
    st.sampled_from(["fp16", "bf16", "i8", "fp8"]),
    st.sampled_from([1, 2, 4, 8, 16]),
    st.sampled_from([1, 2, 4]),
)
def test_wmma_b_operand_with_swizzle(seed, dtype, vec, max_phase):
    """16- and 8-bit WMMA B operands, N-contiguous with random swizzles: emulator agrees, and
    ds_load_tr applies iff the swizzle moves whole 8-element rows (vec >= 8 or no swizzle)."""
    bits = dtype_bits(dtype)
    mma = MMA_B16 if bits == 16 else MMA_B8
    shared = SwizzledSharedLayout(vec, 1, max_phase, (1, 0))
    low = _check_emulation(shared, DotOperandLayout(1, mma, 8), (64, 128), dtype, 0, seed)
    tr = "ds_load_tr16_b128" if bits == 16 else "ds_load_tr8_b64"
    assert (low.instruction == tr) == (vec >= 8 or max_phase == 1)


# ---------------------------------------------------------------- element widths
def test_16_bit_picks_tr16_and_8_bit_tr8_twice_the_instructions_per_byte():
    b16 = lower(SHARED1, DotOperandLayout(1, MMA_B16, 8), (64, 128), "bf16")
    b8 = lower(SHARED1, DotOperandLayout(1, MMA_B8, 8), (64, 256), "fp8")  # same bytes
    assert b16.instruction == "ds_load_tr16_b128" and b8.instruction == "ds_load_tr8_b64"
    assert b8.num_instructions == 2 * b16.num_instructions
    for low in (b16, b8):
        assert low.num_instructions * low.vector_elems == low.num_registers


# ---------------------------------------------------------------- the seed's attention example
def _attention(**kw):
    mma = AMDWMMALayout.from_warps_per_cta([8, 1], instr_shape=(16, 16, 32))
    v_op = DotOperandLayout(1, mma, 8)
    return lower(SwizzledSharedLayout(1, 1, 1, (1, 0)), v_op, (128, 256), "fp16", num_warps=8, **kw)


def test_attention_v_operand_128_tr16_or_1024_u16():
    assert _attention().counts == {"ds_load_tr16_b128": 128}
    assert _attention(allow_transpose=False).counts == {"ds_load_u16": 1024}


def test_trace_holds_every_instruction():
    low = _lower(ORACLE[0])
    t = low.trace()
    assert t.num_warps == 4
    assert t.count_by_op()["ds_load_tr16_b128"] == 4 * 16
    assert low.addresses.shape == (4, 16, 32)
    bare = low.trace(clocks=False, wait=False, barrier=False)
    assert len(bare) == 4 * 16


def test_input_errors():
    with pytest.raises(LayoutError, match="num_warps 8"):
        lower(SHARED, LL_VALID, (64, 16), "bf16", num_warps=8)
    with pytest.raises(LayoutError, match="dtype"):
        lower(SHARED, LL_VALID, (64, 16), "fp7")
    with pytest.raises(LayoutError, match="shape"):
        lower(SHARED, LL_VALID, "64by16", "bf16")
    fp32 = lower(SHARED, LL_VALID, (64, 16), "fp32")
    assert fp32.eligibility == "unsupported" and fp32.instruction == "ds_load_b32"


def test_addresses_are_local_load_addresses_and_bases_are_checked():
    from wgpsim.layout.addresses import local_load_addresses

    low = lower(SHARED, LL_VALID, (64, 16), "bf16", bases=4096)
    elem = local_load_addresses(LL_VALID, SHARED, (64, 16), 2, 4096)
    # every address a lane reads is the address of one of its destination elements
    for w in range(low.num_warps):
        for lane in range(32):
            assert set(low.addresses[w, :, lane].tolist()) <= set(elem[w].ravel().tolist())
    assert low.addresses.min() == 4096
    with pytest.raises(LayoutError, match="an unpartitioned layout has one buffer"):
        lower(SHARED, LL_VALID, (64, 16), "bf16", bases=[0, 65536])


def test_swapped_dst_and_shared_say_so():
    with pytest.raises(LayoutError, match=r"dst must be a distributed .* got swizzled_shared"):
        lower(LL_VALID, SHARED, (64, 16), "bf16")


def test_eight_byte_aligned_padding_traces_and_times():
    # [8:+4]: eligible for ds_load_tr16_b128 (interval 8 >= tile 8) as Triton decides; 4 bf16
    # of padding put every other row 8 bytes off a 16-byte boundary. gfx1250 compiles emit
    # the instruction there, so the trace is built and timed, banked by the dwords each lane
    # touches (rows 24 bytes apart: some lanes meet in a bank).
    dst = (
        "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], "
        "[8, 0], [16, 0]], warp = [], block = []}>"
    )
    low = lower(
        "#ttg.padded_shared<[8:+4] {order = [0, 1], shape = [32, 8]}>", dst, (32, 8), "bf16"
    )
    assert low.instruction == "ds_load_tr16_b128"
    assert (low.addresses % 16 == 8).any()
    result = simulate(low.trace(), load_hardware())
    conflicts = 0  # by hand: per 16-lane pass, the most distinct dwords in one of 64 banks, - 1
    for lanes in (range(16), range(16, 32)):
        dwords = {a // 4 + k for a in low.addresses[0, 0, list(lanes)].tolist() for k in range(4)}
        conflicts += max(sum(d % 64 == b for d in dwords) for b in range(64)) - 1
    assert result.passes == 2 and result.bank_conflict_cycles == conflicts > 0
    # below a dword the model stops: a 1-element bf16 padding is refused, naming it
    low = lower(
        "#ttg.padded_shared<[8:+1] {order = [0, 1], shape = [32, 8]}>", dst, (32, 8), "bf16"
    )
    with pytest.raises(LayoutError, match="padding a multiple of 2 elements"):
        low.trace()


def test_wave64_layout_lowers_with_its_64_lanes():
    """Lanes come from the layouts' lane bases: six lane bits give 64 lane addresses a row.
    lowerLdSt's widest vector for 8 contiguous bf16 a lane is one 16-byte load a lane (lane l
    reads row l at 16 * l); a 64-lane layout is checked against gfx950's ds_read_b64_tr_b16
    (gfx1250's ds_load_tr16_b128 exchanges within 32 lanes), whose rows are 4 elements that
    lanes 0-1 of the destination step along: here they step rows, so it does not apply. The
    trace replays on a wave64 hardware file only."""
    from wave64_hardware import wave64

    from wgpsim.errors import TraceError
    from wgpsim.layout.linear_layout import LinearLayout

    rows = [[1 << k, 0] for k in range(6)]
    shared = LinearLayout.from_bases({"offset": [[0, 1], [0, 2], [0, 4], *rows]}, ["dim0", "dim1"])
    dst = LinearLayout.from_bases(
        {"register": [[0, 1], [0, 2], [0, 4]], "lane": rows, "warp": []}, ["dim0", "dim1"]
    )
    low = lower(shared, dst, (64, 8), "bf16")
    assert (low.instruction, low.lanes, low.counts) == ("ds_load_b128", 64, {"ds_load_b128": 1})
    assert low.addresses[0, 0].tolist() == (16 * np.arange(64)).tolist()
    assert low.reason.startswith("lane bases 1,2 must map to offsets 1,2; lane=1 (basis 0)")
    trace = low.trace()
    assert trace.lanes == 64
    assert simulate(trace, wave64(), engine="des").passes == 4  # 1 KiB in 256 B passes
    with pytest.raises(TraceError, match="64 lanes per warp"):
        simulate(trace, load_hardware())


def test_wave64_blocked_layout_text():
    """A #ttg.blocked whose threadsPerWarp multiply to 64 (a gfx942/gfx950 compile's) lowers
    with 64 lanes: 8 fp16 a lane contiguous along dim 1, lane l of warp w at row w, 16 * l."""
    low = lower(
        "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>",
        "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 64], warpsPerCTA = [4, 1], "
        "order = [1, 0]}>",
        (4, 512),
        "fp16",
    )
    assert (low.counts, low.lanes, low.trace().lanes) == ({"ds_load_b128": 1}, 64, 64)
    assert low.addresses[2, 0, :3].tolist() == [2048, 2064, 2080]
