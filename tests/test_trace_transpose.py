"""ds_load_tr instruction models: Triton's fullTile layouts against the seed's exchange."""

from __future__ import annotations

import numpy as np
import pytest

from wgpsim.errors import LayoutError
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.trace.emulate import tr8_source_lane, tr16_source_lane
from wgpsim.trace.transpose import TR8, TR16, TRANSPOSED_LOADS, transposed_load_for

LANE = np.arange(32)[:, None]
REG = np.arange(8)[None, :]


def test_tile_is_identity_over_eight_lanes():
    for t in (TR8, TR16):
        assert t.tile() == LinearLayout.identity_1d(8, "lane", "offset")
        assert t.tile_size == 8


@pytest.mark.parametrize(
    ("t", "fn"), [(TR16, tr16_source_lane), (TR8, tr8_source_lane)], ids=["tr16", "tr8"]
)
def test_full_tile_is_the_seed_exchange(t, fn):
    """fullTile's addr = the source lane the seed's prose names; offset = lane % 8 (column E_i)."""
    assert np.array_equal(t.source_lanes(), np.broadcast_to(fn(LANE, REG), (32, 8)))
    assert np.array_equal(t.source_elements(), np.broadcast_to(LANE % 8, (32, 8)))


def test_full_tile_bases_figures_4a_4b():
    f16, f8 = TR16.full_tile(), TR8.full_tile()
    assert f16.out_dims == (("offset", 8), ("addr", 32))
    assert f16.get_bases("lane") == ((1, 0), (2, 0), (4, 0), (0, 8), (0, 16))
    assert f16.get_bases("register") == ((0, 1), (0, 2), (0, 4))
    # tr8: only two images change: lane=8 -> S4 (not S8), register=4 -> S8 (not S4)
    assert f8.get_bases("lane") == ((1, 0), (2, 0), (4, 0), (0, 4), (0, 16))
    assert f8.get_bases("register") == ((0, 1), (0, 2), (0, 8))
    for t in (TR8, TR16):
        ft = t.full_tile()
        assert ft.is_invertible()
        assert ft.divide_left(t.tile()) is not None


def test_row_owner_inverts_the_exchange():
    for t in (TR8, TR16):
        lane, reg = t.row_owner()
        # the owner of element 0 of row s is a lane with lane % 8 == 0 whose register r reads s
        assert np.all(lane % 8 == 0)
        assert np.array_equal(t.source_lanes()[lane, reg], np.arange(32))


def test_catalogue_and_element_widths():
    # the catalogue's transposed loads with a lane exchange: gfx1250's two (wave32), gfx950's two
    assert {k: t.lanes for k, t in TRANSPOSED_LOADS.items()} == {
        "ds_load_tr16_b128": 32,
        "ds_load_tr8_b64": 32,
        "ds_read_b64_tr_b16": 64,
        "ds_read_b64_tr_b8": 64,
    }
    assert transposed_load_for(16) is TR16 and transposed_load_for(8) is TR8
    assert (TR16.inst_bits, TR8.inst_bits) == (128, 64)
    with pytest.raises(LayoutError, match="valid: 8, 16"):
        transposed_load_for(4)
