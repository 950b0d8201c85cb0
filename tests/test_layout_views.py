"""Views (memdesc_subslice / index / trans / reshape): a view's element lives where the same
element of its parent allocation lives. Each view's addresses are checked element by element
against a load of the whole parent buffer (computed without the view machinery)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from wgpsim.errors import LayoutError
from wgpsim.layout import local_load_addresses, parse
from wgpsim.layout.distributed import BlockedLayout
from wgpsim.layout.views import SharedView

SWIZZLED = "#ttg.swizzled_shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>"
PADDED = "#ttg.padded_shared<[128:+8, 512:+16] {order = [1, 0], shape = [32, 128]}>"
PARTITIONED = (
    "#ttg.partitioned_shared<{numPartitions = 2, numGroups = 2, partitionDim = 0, "
    "partitionLayout = #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 8, order = [1, 0]}>}>"
)
BASES = {SWIZZLED: 0, PADDED: 0, PARTITIONED: [0, 65536]}


def _dst(shape):
    return BlockedLayout([1, 4], [4, 8], [2, 2], [1, 0]), tuple(shape)


def address_map(shared, shape, base=0) -> dict[tuple[int, ...], int]:
    """Element coordinate -> byte address, from a load of the whole ``shape``."""
    dst, shape = _dst(shape)
    addr = local_load_addresses(dst, shared, shape, 2, base)
    coords = dst.to_linear_layout(shape)
    out = {}
    for w, lane, r in itertools.product(*(range(n) for n in addr.shape)):
        x = coords.apply({"warp": w, "lane": lane, "register": r})
        out[tuple(x.values())] = int(addr[w, lane, r])
    return out


@pytest.mark.parametrize("text", [SWIZZLED, PADDED, PARTITIONED])
@pytest.mark.parametrize("offsets", [(0, 0), (0, 64), (16, 32), (16, 96)])
def test_subslice_reads_the_parents_elements(text, offsets):
    layout = parse(text)
    parent = address_map(layout, (32, 128), BASES[text])
    view = SharedView.of(layout, (32, 128)).subslice(offsets, (16, 32))
    got = address_map(view, (16, 32), BASES[text])
    assert len(got) == 16 * 32
    for x, a in got.items():
        assert a == parent[tuple(o + v for o, v in zip(offsets, x, strict=True))], x


def test_subslice_row_stride_is_the_parents():
    """The issue's case: a 16x32 fp16 view of a 16x128 swizzled buffer has 256 B rows."""
    view = SharedView.of(parse(SWIZZLED), (16, 128)).subslice((0, 0), (16, 32))
    got = address_map(view, (16, 32))
    assert got[(1, 0)] - got[(0, 0)] == 256  # a plain 16x32 alloc would give 64


def test_nested_subslices_add_up():
    layout = parse(PADDED)
    once = SharedView.of(layout, (32, 128)).subslice((16, 64), (16, 32))
    twice = (
        SharedView.of(layout, (32, 128)).subslice((16, 0), (16, 128)).subslice((0, 64), (16, 32))
    )
    assert twice == once
    assert address_map(twice, (16, 32)) == address_map(once, (16, 32))


def test_index_of_multibuffer_padded():
    """Buffer i starts at pad(i * 4096) elements: the padding of the buffers before it."""
    layout = parse(PADDED)
    bufs = SharedView.of(layout, (3, 32, 128))
    one = address_map(layout, (32, 128))
    for i in range(3):
        pad = layout.pad(i * 4096)
        assert bufs.index(i).base == pad
        got = address_map(bufs.index(i), (32, 128))
        assert got == {x: a + 2 * pad for x, a in one.items()}


def test_index_then_subslice():
    layout = parse(SWIZZLED)
    view = SharedView.of(layout, (2, 32, 128)).index(1).subslice((16, 32), (16, 32))
    parent = address_map(layout, (32, 128))
    for x, a in address_map(view, (16, 32)).items():
        assert a == 2 * 4096 + parent[(16 + x[0], 32 + x[1])]


@pytest.mark.parametrize("text", [SWIZZLED, PADDED, PARTITIONED])
def test_trans_reads_the_transposed_element(text):
    layout = parse(text)
    parent = address_map(layout, (32, 128), BASES[text])
    view = SharedView.of(layout, (32, 128)).trans((1, 0))
    got = address_map(view, (128, 32), BASES[text])
    assert all(a == parent[(x[1], x[0])] for x, a in got.items())
    sub = view.subslice((64, 16), (32, 16))
    for x, a in address_map(sub, (32, 16), BASES[text]).items():
        assert a == parent[(16 + x[1], 64 + x[0])]


def test_reshape_is_row_major():
    layout = parse(PADDED)
    parent = address_map(layout, (32, 128))
    view = SharedView.of(layout, (32, 128)).reshape((64, 64))
    for (r, c), a in address_map(view, (64, 64)).items():
        flat = r * 64 + c
        assert a == parent[(flat // 128, flat % 128)]


def test_bad_views_are_layout_errors():
    buf = SharedView.of(parse(SWIZZLED), (16, 128))
    with pytest.raises(LayoutError, match="multiple of its"):
        buf.subslice((0, 48), (16, 32))
    with pytest.raises(LayoutError, match="exceed"):
        buf.subslice((0, 128), (16, 32))
    with pytest.raises(LayoutError, match="not \\[16, 128\\]"):
        local_load_addresses(_dst((16, 128))[0], buf.subslice((0, 0), (16, 32)), (16, 128), 2)
    assert np.asarray(local_load_addresses(_dst((16, 128))[0], buf, (16, 128), 2)).shape == (
        4,
        32,
        16,
    )


def test_lower_takes_a_view():
    """The lowering reads the view's layout over the parent shape (a 256 B row stride)."""
    from wgpsim.trace.lowering import lower

    dst = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>"
    view = SharedView.of(parse(SWIZZLED), (16, 128)).subslice((0, 64), (16, 32))
    low = lower(view, dst, (16, 32), "fp16")
    plain = lower(parse(SWIZZLED), dst, (16, 32), "fp16")
    assert low.counts == plain.counts == {"ds_load_b128": 1}
    rows = low.addresses[0, 0, ::8]  # lanes 0, 8, 16, 24: rows 0, 1, 2, 3 of the view
    assert (np.diff(rows // 256) == 1).all() and not (
        np.diff(plain.addresses[0, 0, ::8]) == 256
    ).all()
