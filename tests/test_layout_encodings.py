"""Encodings -> linear layouts: the examples of the Triton notes (section 2), checked against
Triton 3.9.0 when they were written, plus properties and the errors users can cause."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.errors import LayoutError
from wgpsim.layout.distributed import BlockedLayout, DistributedLinearLayout
from wgpsim.layout.dtypes import dtype_bits, dtype_bytes
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
from wgpsim.layout.shared import (
    PaddedSharedLayout,
    PartitionedSharedLayout,
    SwizzledSharedLayout,
)


def bases(ll, dim):
    return [list(b) for b in ll.get_bases(dim)]


def distributed(ll):
    return {d: bases(ll, d) for d in ("register", "lane", "warp", "block")}


# ------------------------------------------------------------------ distributed
def test_blocked_64x64():
    ll = BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear_layout((64, 64))
    assert distributed(ll) == {
        "register": [[0, 1], [0, 2], [0, 4], [16, 0], [32, 0]],
        "lane": [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]],
        "warp": [[4, 0], [8, 0]],
        "block": [],
    }
    assert ll.in_dim_names == ("register", "lane", "warp", "block")
    assert ll.out_dims == (("dim0", 64), ("dim1", 64))


def test_blocked_smaller_shape_broadcasts_and_drops_registers():
    # Triton 3.9.0: lanes past the shape broadcast (zero bases); clamped registers are dropped.
    ll = BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear_layout((16, 4))
    assert bases(ll, "register") == [[0, 1], [0, 2]]
    assert bases(ll, "lane") == [[0, 0], [0, 0], [0, 0], [1, 0], [2, 0]]
    assert bases(ll, "warp") == [[4, 0], [8, 0]]


def test_blocked_repeats_along_order_first():
    ll = BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear_layout((256, 128))
    assert bases(ll, "register")[3:] == [[0, 64], [16, 0], [32, 0], [64, 0], [128, 0]]


def test_wmma_standard_64x64():
    ll = AMDWMMALayout(3, False, [[0, 1], [1, 0]], instr_shape=(16, 16, 32)).to_linear_layout(
        (64, 64)
    )
    assert distributed(ll) == {
        "register": [[1, 0], [2, 0], [4, 0], [0, 32], [32, 0]],
        "lane": [[0, 1], [0, 2], [0, 4], [0, 8], [8, 0]],
        "warp": [[0, 16], [16, 0]],
        "block": [],
    }


def test_wmma_32x16_transposed():
    ll = AMDWMMALayout(3, True, [[0, 1], [1, 0]], instr_shape=(32, 16, 64)).to_linear_layout(
        (64, 64)
    )
    assert bases(ll, "register") == [[0, 1], [0, 2], [0, 4], [0, 16], [32, 0]]
    assert bases(ll, "lane") == [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]]
    assert bases(ll, "warp") == [[0, 32], [16, 0]]


def test_wmma_from_warps_per_cta_is_the_seed_ctalayout():
    # Seed: warpsPerCTA = [2, 2] becomes ctaLayout {warp = [[0, 1], [1, 0]]}.
    assert AMDWMMALayout.from_warps_per_cta([2, 2]).warp_bases == ((0, 1), (1, 0))
    assert AMDWMMALayout.from_warps_per_cta([4, 2]).warp_bases == ((0, 1), (1, 0), (2, 0))


def test_wmma_swizzled_ctalayout_element_layout():
    # make_partitioned_dot_layouts(128, 128, ..., 4 warps, [16, 16, 32], transposed): the
    # 3.9.0 binding aborts on it; the notes give the element layout.
    mma = AMDWMMALayout(3, True, [[4, 4], [2, 0]], [[0, 1], [0, 2], [1, 0], [4, 0]], (16, 16, 32))
    assert distributed(mma.to_linear_layout((128, 128))) == {
        "register": [[0, 1], [0, 2], [0, 4], [0, 16], [0, 32], [16, 0], [64, 0]],
        "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]],
        "warp": [[64, 64], [32, 0]],
        "block": [],
    }


def test_seed_swizzled_ctalayout_separates_the_pairs():
    # Seed Part II: with reg = [[2, 0]], warp = [[2, 1], [1, 0]], in any one instruction (fixed
    # register) the warps of pair A (0, 2) and pair B (1, 3) sit on different M rows.
    mma = AMDWMMALayout(3, False, [[2, 1], [1, 0]], [[2, 0]], (16, 16, 32))
    ll = mma.to_linear_layout((64, 32))
    for reg in range(ll.in_dim_size("register")):
        rows = {w: ll.apply({"register": reg, "warp": w})["dim0"] // 16 for w in range(4)}
        assert {rows[0], rows[2]}.isdisjoint({rows[1], rows[3]})


def test_dot_operand_128x64():
    mma = AMDWMMALayout(3, False, [[0, 1], [1, 0]], instr_shape=(16, 16, 32))
    ll = DotOperandLayout(0, mma, 8).to_linear_layout((128, 64))
    assert distributed(ll) == {
        "register": [[0, 1], [0, 2], [0, 4], [0, 16], [0, 32], [32, 0], [64, 0]],
        "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [0, 8]],
        "warp": [[0, 0], [16, 0]],
        "block": [],
    }


def test_dot_operand_b_of_32x16_instruction():
    mma = AMDWMMALayout(3, True, [[0, 1], [1, 0]], instr_shape=(32, 16, 64))
    ll = DotOperandLayout(1, mma, 8).to_linear_layout((128, 128))
    assert bases(ll, "register") == [
        [1, 0], [2, 0], [4, 0], [16, 0], [32, 0], [0, 16], [64, 0], [0, 64],
    ]  # fmt: skip
    assert bases(ll, "warp") == [[0, 32], [0, 0]]


def test_linear_is_clamped_like_triton():
    # ds_transpose_ll_complex of ds_transpose_gfx1250.mlir: bases beyond 64x16 are clamped,
    # clamped registers dropped, clamped lanes broadcast.
    lin = DistributedLinearLayout(
        [[0, 64], [16, 0], [0, 1], [32, 0], [0, 2], [0, 4], [64, 0], [0, 8], [0, 32]],
        [[1, 0], [2, 0], [4, 0], [0, 16], [8, 0]],
        [[0, 0], [0, 0]],
    )
    ll = lin.to_linear_layout((64, 16))
    assert bases(ll, "register") == [[16, 0], [0, 1], [32, 0], [0, 2], [0, 4], [0, 8]]
    assert bases(ll, "lane") == [[1, 0], [2, 0], [4, 0], [0, 0], [8, 0]]


def test_linear_is_repeated_along_register_order():
    lin = DistributedLinearLayout([[0, 1]], [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]])
    ll = lin.to_linear_layout((64, 4))
    assert bases(ll, "register") == [[0, 1], [0, 2], [32, 0]]


# ------------------------------------------------------------------ shared
def test_swizzled_8_2_4():
    ll = SwizzledSharedLayout(8, 2, 4, [1, 0]).to_linear_layout((32, 64))
    assert bases(ll, "offset") == [
        [0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [1, 0], [2, 8], [4, 16], [8, 0], [16, 0],
    ]  # fmt: skip
    assert ll.in_dim_names == ("offset", "block")


def test_swizzled_matches_the_closed_form():
    # Element (r, c) at offset r * numCols + (c ^ vec * ((r // perPhase) % maxPhase)).
    lay, (rows, cols) = SwizzledSharedLayout(4, 2, 4, [1, 0]), (16, 32)
    inv = lay.to_linear_layout((rows, cols)).invert()
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    offset = inv.apply({"dim0": r, "dim1": c})["offset"]
    assert (offset == r * cols + (c ^ (4 * ((r // 2) % 4)))).all()


@settings(max_examples=40, deadline=None)
@given(
    vec=st.sampled_from([1, 2, 4, 8]),
    per_phase=st.sampled_from([1, 2, 4]),
    max_phase=st.sampled_from([1, 2, 4, 8]),
    order=st.sampled_from([(0, 1), (1, 0)]),
    shape=st.tuples(st.sampled_from([1, 2, 8, 32]), st.sampled_from([1, 4, 16, 64])),
)
def test_swizzled_is_a_bijection(vec, per_phase, max_phase, order, shape):
    ll = SwizzledSharedLayout(vec, per_phase, max_phase, order).to_linear_layout(shape)
    assert ll.is_invertible()
    assert dict(ll.out_dims) == {"dim0": shape[0], "dim1": shape[1]}


def test_padded_sizes_and_pad():
    lay = PaddedSharedLayout([(256, 8)], order=[1, 0], shape=[16, 32])
    assert lay.padded_elems(64 * 32) == 2048 + 64 - 8
    assert lay.alloc_bytes((64, 32), 2) == 2104 * 2
    assert lay.alloc_bytes((16, 32), 2) == (512 + 8) * 2  # no padding after the last element
    two = PaddedSharedLayout([(4, 4), (8, 2)], order=[0], shape=[16])
    offsets = np.arange(16)
    assert (two.pad(offsets) == offsets + (offsets // 4) * 4 + (offsets // 8) * 2).all()
    assert two.pad(9) == 9 + 8 + 2


def test_padded_linear_component():
    ll = PaddedSharedLayout([(512, 16)], order=[0, 1], shape=[128, 64]).to_linear_layout((128, 64))
    assert bases(ll, "offset")[:8] == [[1 << k, 0] for k in range(7)] + [[0, 1]]
    explicit = PaddedSharedLayout([(8, 1)], offset_bases=[[0, 1], [0, 2], [2, 0], [4, 0], [1, 0]])
    assert explicit.shape == (8, 4)
    assert bases(explicit.to_linear_layout((8, 4)), "offset") == [
        [0, 1], [0, 2], [2, 0], [4, 0], [1, 0],
    ]  # fmt: skip


def test_partitioned_worked_example_128x128_padded_inner():
    inner = PaddedSharedLayout.with_identity_for([[128, 8]], [32, 128], [1, 0])
    lay = PartitionedSharedLayout(2, 2, 0, inner)
    ll = lay.to_linear_layout((128, 128))
    assert ll.in_dim_names == ("offset", "block", "partition")
    assert bases(ll, "offset") == [[0, 1 << k] for k in range(7)] + [
        [1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [64, 0],
    ]  # fmt: skip
    assert bases(ll, "partition") == [[32, 0]]
    assert ll.out_dims == (("dim0", 128), ("dim1", 128))
    assert lay.num_logical_pieces == 4


def test_partitioned_buffer_sizes_match_the_allocator_tests():
    # test-allocation-partitioned.mlir: 64x32 f16, #PADDED = [256:+8] {order [1, 0], shape [16, 32]}
    padded = PaddedSharedLayout([(256, 8)], order=[1, 0], shape=[16, 32])
    swizzled = SwizzledSharedLayout(2, 2, 4, [1, 0])
    assert PartitionedSharedLayout(2, 2, 0, padded).buffer_bytes((64, 32), 2) == 2104
    assert PartitionedSharedLayout(4, 1, 0, padded).buffer_bytes((64, 32), 2) == 1052
    assert PartitionedSharedLayout(2, 4, 0, swizzled).buffer_bytes((64, 32), 2) == 2048
    assert PartitionedSharedLayout(4, 2, 0, swizzled).buffer_bytes((64, 32), 2) == 1024
    assert PartitionedSharedLayout(2, 2, 0, padded).alloc_bytes((64, 32), 2) == 2 * 2104


def test_partitioned_pieces_round_robin():
    # Logical piece j (along the partition dim) -> partition j % P, group j // P.
    lay = PartitionedSharedLayout(2, 4, 1, SwizzledSharedLayout(1, 1, 1, [1, 0]))
    inv = lay.to_linear_layout((4, 64)).invert()
    piece = 64 // 8
    for j in range(8):
        out = inv.apply({"dim0": 0, "dim1": j * piece})
        assert out["partition"] == j % 2
        assert out["offset"] == (j // 2) * (4 * piece)


# ------------------------------------------------------------------ errors and dtypes
@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: SwizzledSharedLayout(1, 3, 1, [0, 1]), "field 'perPhase' must be a positive power of two, got 3"),
        (lambda: SwizzledSharedLayout(1, 1, 1, [0, 0]), "field 'order' [0, 0] must be a permutation"),
        (lambda: BlockedLayout([1, 8], [4, 4], [4, 1], [1, 0]), "must multiply to a warp size, 32 or 64"),
        (lambda: BlockedLayout([1, 8], [4, 8], [4], [1, 0]), "field 'warps_per_cta' [4] must have rank 2"),
        (lambda: AMDWMMALayout(2, False, [[0, 1]]), "field 'version' must be 3"),
        (lambda: AMDWMMALayout(3, False, [[2, 1], [1, 0]]), "not surjective"),
        (lambda: AMDWMMALayout(3, False, [[0, 1]], instr_shape=(16, 32, 16)), "instrShape"),
        (lambda: DotOperandLayout(2, AMDWMMALayout(3, False, [[0, 1]]), 8), "'opIdx' must be 0 or 1"),
        (lambda: DotOperandLayout(0, BlockedLayout([1], [32], [1], [0]), 8), "must be an amd_wmma"),
        (lambda: PaddedSharedLayout([(6, 2)], order=[0], shape=[16]), "field 'interval' must be a positive power of two, got 6"),
        (lambda: PaddedSharedLayout([(8, 2), (8, 4)], order=[0], shape=[16]), "must be distinct"),
        (lambda: PaddedSharedLayout([(8, 2)], offset_bases=[[1, 1]]), "one power of two in one dim"),
        (lambda: PartitionedSharedLayout(1, 1, 0, SwizzledSharedLayout(1, 1, 1, [1, 0])), "'numPartitions' must be >= 2"),
        (lambda: PartitionedSharedLayout(2, 1, 2, SwizzledSharedLayout(1, 1, 1, [1, 0])), "'partitionDim' 2"),
        (lambda: BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear_layout((48, 64)), "power of two"),
        (lambda: BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0]).to_linear_layout((64,)), "rank 1, expected 2"),
        (lambda: PartitionedSharedLayout(2, 2, 0, SwizzledSharedLayout(1, 1, 1, [1, 0])).to_linear_layout((2, 8)), "multiple of"),
        (lambda: DistributedLinearLayout([[0, 1]], [[1]]), "different lengths"),
    ],
)  # fmt: skip
def test_errors_name_the_field(build, message):
    with pytest.raises(LayoutError) as err:
        build()
    assert message in str(err.value)


def test_dtypes():
    assert [dtype_bits(n) for n in ("fp16", "bf16", "fp32", "fp8", "i8", "u8", "i16", "i32")] == [
        16, 16, 32, 8, 8, 8, 16, 32,
    ]  # fmt: skip
    assert dtype_bytes("fp8e5m2") == 1 and dtype_bytes("F16") == 2
    with pytest.raises(LayoutError, match="unknown; valid: fp16"):
        dtype_bits("fp64")


def test_padded_shape_must_match_the_tensor():
    # The padding intervals count elements of the layout's own shape: applying it to another
    # shape would silently move every padded row, so it is refused with the shape to write.
    lay = PaddedSharedLayout([(32, 8)], order=[0, 1], shape=[64, 64])
    with pytest.raises(
        LayoutError, match=r"shape \[64, 64\] does not match the tensor shape \[32, 8\]"
    ):
        lay.to_linear_layout((32, 8))
    assert lay.to_linear_layout((64, 64)).is_injective()
