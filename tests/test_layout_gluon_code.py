"""Gluon objects in, Gluon code out. ``to_gluon_code`` prints the Gluon expression of a layout;
evaluated under Gluon it is a layout that reads back (``from_gluon``) to ours, with our linear
layout. (``to_gluon`` evaluates that code, so ``test_layout_gluon_conformance`` also holds it
against Triton's own ``to_linear_layout``.) Gluon objects are taken wherever a layout is
(``lower``, ``local_load_addresses``, ``tensor_buffers``, ``parse_any``)."""

from __future__ import annotations

import pytest
from test_layout_gluon_conformance import sample_cases

import wgpsim
from wgpsim.layout import local_load_addresses, parse, parse_any
from wgpsim.layout.distributed import DistributedLinearLayout
from wgpsim.layout.gluon import from_gluon, to_gluon, to_gluon_code
from wgpsim.layout.shared import PaddedSharedLayout, PartitionedSharedLayout

pytest.importorskip("triton")
pytestmark = pytest.mark.triton
import triton.experimental.gluon.language as ttgl  # noqa: E402

PADDED = PaddedSharedLayout([(512, 16)], order=[0, 1], shape=[64, 64])
EXTRA = [
    (PADDED, [64, 64]),
    (PaddedSharedLayout([(256, 8)], offset_bases=[[0, 1], [0, 2], [1, 0], [2, 0]]), [4, 4]),
    (PartitionedSharedLayout(2, 2, 0, PADDED), [256, 64]),
]


def test_gluon_code_round_trips():
    cases = sample_cases() + EXTRA
    for lay, shape in cases:
        code = to_gluon_code(lay, shape)
        obj = eval(code, {"ttgl": ttgl})  # noqa: S307 - our own printed code
        back = from_gluon(obj)
        assert back.to_linear_layout(shape) == lay.to_linear_layout(shape), code
        if not isinstance(
            getattr(lay, "partition_layout", lay), DistributedLinearLayout | PaddedSharedLayout
        ):
            assert back == lay, code  # (a padded one reads back with explicit offset bases)
        assert type(obj).__module__.startswith("triton.experimental.gluon"), code
    assert len(cases) > 220


def test_gluon_objects_are_taken_wherever_a_layout_is():
    mma = "#ttg.amd_wmma<{version = 3, isTranspose = false, ctaLayout = {warp = [[1, 0], [2, 0], [4, 0]]}, instrShape = [16, 16, 32]}>"
    text_dst = f"#ttg.dot_op<{{opIdx = 1, parent = {mma}, kWidth = 8}}>"
    text_shared = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
    g_dst, g_shared = to_gluon(parse(text_dst)), ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    low = wgpsim.lower(shared=g_shared, dst=g_dst, shape=(128, 256), dtype="fp16")
    assert low.counts == wgpsim.lower(text_shared, text_dst, (128, 256), "fp16").counts
    assert low.counts == {"ds_load_tr16_b128": 128}
    assert (
        local_load_addresses(g_dst, g_shared, (128, 256), 2)
        == local_load_addresses(text_dst, text_shared, (128, 256), 2)
    ).all()
    assert parse_any(g_shared) == parse(text_shared)
    from wgpsim.hw.alloc import tensor_buffers

    part = ttgl.amd.cdna5.PartitionedSharedLayout(2, 1, 0, to_gluon(PADDED))
    assert [b.size for b in tensor_buffers("a", part, (128, 64), 2)] == [
        b.size for b in tensor_buffers("a", PartitionedSharedLayout(2, 1, 0, PADDED), (128, 64), 2)
    ]


def test_gluon_objects_in_the_piece_analysis():
    """The AMD blog's B operand (N-contiguous fp16, K = 128, 4 warps): eight [K, 16] pieces take
    2 TDM instructions and fill a quarter of each 128-byte line, given as Gluon objects too."""
    from wgpsim.microbench.pieces import band_pieces, element_addresses, piece_info

    inner = ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    part = ttgl.amd.cdna5.PartitionedSharedLayout(2, 4, 1, inner)
    info = piece_info(part, (128, 128), 1, 2, 4, 128)
    assert (info.num_pieces, info.piece_shape, info.tdm_instructions) == (8, (128, 16), 2)
    assert info.cacheline_use == 0.25
    # row-major, unpadded: element (1, 0) sits one 4-element row (8 bytes) after (0, 0)
    assert element_addresses(inner, (2, 4), 2, 64).tolist() == [[64, 66, 68, 70], [72, 74, 76, 78]]
    # bands of 16 columns along dim 1 are pieces 0..7 in order
    assert band_pieces(part, (128, 128), 1, 16) == [(j,) for j in range(8)]
