"""``#ttg.amd_mfma`` (gfx942 version 3, gfx950 version 4) against Triton 3.9.0's own
``to_linear_layout`` (through Gluon's ``AMDMFMALayout``), for every tile, transposition and
warp grid the gfx942/gfx950 corpus compiles use and a few more shapes; and the TTGIR text as
those compiles print it."""

from __future__ import annotations

import pytest

from wgpsim.layout.mma.mfma import AMDMFMALayout
from wgpsim.layout.notation import parse

CASES = [
    (version, instr, transposed, warps, shape)
    for version, instr in (
        (3, (32, 32, 8)),
        (3, (16, 16, 16)),
        (4, (32, 32, 16)),
        (4, (16, 16, 32)),
    )
    for transposed in (True, False)
    for warps, shape in (
        ((2, 2), (128, 128)),
        ((1, 4), (64, 256)),
        ((4, 1), (128, 32)),
        ((2, 4), (32, 16)),
        ((4, 1, 1), (4, 64, 64)),
    )
]


@pytest.fixture(scope="module")
def builder():
    pytest.importorskip("triton")
    from wgpsim.layout.gluon import gluon_builder

    return gluon_builder()


@pytest.mark.parametrize(("version", "instr", "transposed", "warps", "shape"), CASES)
def test_mfma_layout_is_tritons(builder, version, instr, transposed, warps, shape):
    import triton.experimental.gluon.language as gl

    theirs = builder.to_linear_layout(
        gl.amd.AMDMFMALayout(version, list(instr), transposed, list(warps))._to_ir(builder),
        list(shape),
    )
    mine = AMDMFMALayout(version, warps, instr, transposed).to_linear_layout(shape)
    for dim, got in (("register", theirs.reg_bases), ("lane", theirs.lane_bases),
                     ("warp", theirs.warp_bases)):  # fmt: skip
        assert [list(b) for b in mine.get_bases(dim)] == [list(b) for b in got], dim


def test_the_text_gfx950_compiles_print():
    text = (
        "#ttg.amd_mfma<{version = 4, warpsPerCTA = [2, 2], instrShape = [32, 32, 16], "
        "isTransposed = true}>"
    )
    assert parse(text) == AMDMFMALayout(4, (2, 2), (32, 32, 16), True)


def test_tiles_it_does_not_model_are_named():
    from wgpsim.errors import LayoutError

    with pytest.raises(LayoutError, match="instrShape.*not modelled"):
        AMDMFMALayout(3, (2, 2), (4, 4, 4))


DOT_CASES = [
    (version, instr, op_idx, k_width, warps, shape)
    for version, instr in (
        (3, (32, 32, 8)),
        (3, (16, 16, 16)),
        (4, (32, 32, 16)),
        (4, (16, 16, 32)),
    )
    for op_idx in (0, 1)
    for k_width in (4, 8, 16)
    for warps, shape in (
        ((2, 2), (128, 64)),
        ((1, 4), (64, 128)),
        ((4, 1), (32, 16)),
        ((4, 1, 1), (4, 64, 32)),
    )
]


@pytest.mark.parametrize(("version", "instr", "op_idx", "k_width", "warps", "shape"), DOT_CASES)
def test_mfma_dot_operand_is_tritons(builder, version, instr, op_idx, k_width, warps, shape):
    """``#ttg.dot_op`` of an MFMA parent (the A/B operands of every gfx942/gfx950 GEMM)."""
    import triton.experimental.gluon.language as gl

    from wgpsim.layout.mma.wmma import DotOperandLayout

    parent = gl.amd.AMDMFMALayout(version, list(instr), True, list(warps))
    theirs = builder.to_linear_layout(
        gl.DotOperandLayout(op_idx, parent, k_width)._to_ir(builder), list(shape)
    )
    mine = DotOperandLayout(
        op_idx, AMDMFMALayout(version, warps, instr, True), k_width
    ).to_linear_layout(shape)
    for dim, got in (("register", theirs.reg_bases), ("lane", theirs.lane_bases),
                     ("warp", theirs.warp_bases)):  # fmt: skip
        assert [list(b) for b in mine.get_bases(dim)] == [list(b) for b in got], dim
