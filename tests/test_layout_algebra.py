"""The linear-layout algebra: hand examples from the seed and the Triton notes, then the laws."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
import strategies as S
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.errors import LayoutError
from wgpsim.layout.linear_layout import LinearLayout

LL = LinearLayout
SEED_DST = LL.from_bases(
    {"register": [[0, 1], [0, 2], [0, 4]], "lane": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]]},
    ["dim0", "dim1"],
)
SEED_SHARED = LL.from_bases(
    {"offset": [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 1], [0, 2], [0, 4]]},
    ["dim0", "dim1"],
)
PROPS = settings(max_examples=100, deadline=None)


def ri_of(data):
    return lambda lo, hi: data.draw(st.integers(lo, hi))


def all_inputs(lay: LinearLayout) -> dict[str, np.ndarray]:
    """Every input point of ``lay`` as broadcastable index grids."""
    grids = np.meshgrid(*[np.arange(lay.in_dim_size(d)) for d in lay.in_dim_names], indexing="ij")
    return dict(zip(lay.in_dim_names, grids, strict=True))


# ------------------------------------------------------------------ the seed's examples
def test_seed_warp_example():
    warp = LL(warp=[[2, 1], [1, 0]], out_dims={"dim0": 4, "dim1": 2})
    assert warp.apply({"warp": 3}) == {"dim0": 3, "dim1": 1}


def test_seed_invert_and_compose_table():
    cvt = SEED_DST.invert_and_compose(SEED_SHARED)
    assert cvt.get_bases("register") == ((32,), (64,), (128,))
    assert cvt.get_bases("lane") == ((1,), (2,), (4,), (8,), (16,))
    assert cvt.out_dims == (("offset", 256),)
    assert cvt.apply({"register": 3, "lane": 5}) == {"offset": 101}
    # register=4 -> [0, 4] is the shared element at offset 128
    assert SEED_SHARED.apply({"offset": 128}) == SEED_DST.apply({"register": 4})


def test_seed_divide_left_by_contiguous_tile():
    cvt = SEED_DST.invert_and_compose(SEED_SHARED)
    q = cvt.divide_left(LL.identity_1d(8, "lane", "offset"))
    assert q == LL(register=[[4], [8], [16]], lane=[[1], [2]], out_dims={"offset": 32})
    assert LL.identity_1d(8, "lane", "offset") * q == cvt


# ------------------------------------------------------------------ constructors and queries
def test_strided_1d_4_8():
    lay = LL.strided_1d(4, 8, "i", "o")
    assert lay.get_bases("i") == ((8,), (16,))
    assert lay.out_dim_size("o") == 32
    assert not lay.is_surjective() and lay.is_injective()


def test_identity_zeros_empty():
    assert LL.identity_1d(8, "i", "o").apply({"i": 5}) == {"o": 5}
    z = LL.zeros_1d(4, "i", "o", out_dim_size=8)
    assert z.apply({"i": 3}) == {"o": 0} and z.out_dim_size("o") == 8 and not z.is_surjective()
    assert LL.identity_1d(0, "i", "o") == LL.empty()
    assert LL.empty().total_in_size == 1 and LL.empty().is_invertible()


def test_from_bases_infers_sizes_and_requires_surjective():
    lay = LL.from_bases([("lane", [[1, 0], [2, 0], [0, 1]])], ["dim0", "dim1"])
    assert lay.out_dims == (("dim0", 4), ("dim1", 2))
    with pytest.raises(LayoutError, match="not surjective"):
        LL.from_bases({"lane": [[1], [1]]}, ["dim0"], [4])
    with pytest.raises(LayoutError, match="out_dim_sizes must be given"):
        LL.from_bases({"lane": [[1]]}, ["dim0"], require_surjective=False)


def test_queries():
    assert SEED_DST.in_dim_names == ("register", "lane")
    assert SEED_DST.out_dim_names == ("dim0", "dim1")
    assert SEED_DST.in_dim_size("lane") == 32 and SEED_DST.num_bases("register") == 3
    assert SEED_DST.total_in_size == 256 == SEED_DST.total_out_size
    assert SEED_DST.rank == 8 and SEED_DST.is_invertible()
    m = SEED_DST.get_matrix()
    assert m.shape == (8, 8) and m.dtype == np.uint8
    assert m[0].tolist() == [0, 0, 0, 1, 0, 0, 0, 0]  # dim0 bit 0 comes from lane bit 0
    bcast = LL(register=[[1], [0], [1], [2]], out_dims={"o": 4})
    assert bcast.free_variable_masks() == {"register": 0b0110}
    assert not bcast.is_injective() and bcast.is_surjective()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"lane": [[1], [2]], "out_dims": {"o": 3}}, "out dim o size 3: must be a power of two"),
        (
            {"lane": [[1], [4]], "out_dims": {"o": 4}},
            r"lane basis 1 \[4\]: out of range for o of size 4",
        ),
        (
            {"lane": [[1, 0]], "out_dims": {"o": 4}},
            r"lane basis 0 \[1, 0\]: has 2 entries, expected 1",
        ),
        ({"lane": [[-1]], "out_dims": {"o": 4}}, r"lane basis 0 \[-1\]: out of range"),
    ],
)
def test_invalid_layouts_name_dim_basis_and_value(kwargs, message):
    with pytest.raises(LayoutError, match=message):
        LL(**kwargs)


def test_operation_errors():
    with pytest.raises(LayoutError, match="compose: out dims"):
        SEED_DST.compose(SEED_SHARED)
    with pytest.raises(LayoutError, match="not invertible"):
        LL.strided_1d(4, 8, "i", "o").invert()
    with pytest.raises(LayoutError, match="must be surjective"):
        SEED_DST.invert_and_compose(LL.strided_1d(4, 8, "i", "dim0").concat_outs(
            LL.zeros_1d(4, "i", "dim1", 8)))  # fmt: skip
    with pytest.raises(LayoutError, match=r"lane = 32 is out of range \[0, 32\)"):
        SEED_DST.apply({"lane": 32})
    with pytest.raises(LayoutError, match="no in dim 'warp'"):
        SEED_DST.apply({"warp": 0})


# ------------------------------------------------------------------ the operations, by hand
def test_product_examples_from_the_notes():
    i, o = "i", "o"
    a = LL.identity_1d(4, i, o) * LL.zeros_1d(2, i, o)
    assert a.get_bases(i) == ((1,), (2,), (0,)) and a.out_dim_size(o) == 4
    b = LL.zeros_1d(2, i, o) * LL.identity_1d(4, i, o)
    assert b.get_bases(i) == ((0,), (1,), (2,)) and b.out_dim_size(o) == 4
    c = LL.identity_1d(4, i, "o1") * LL.identity_1d(8, i, "o2")
    for x in range(32):
        assert c.apply({i: x}) == {"o1": x % 4, "o2": x // 4}


def test_product_dim_order_is_triton_supremum():
    a = LL(c=[[1]], a=[[1]], out_dims={"x": 2})
    b = LL(b=[[1]], c=[[1]], out_dims={"x": 2})
    assert (a * b).in_dim_names == ("b", "c", "a")


def test_product_merges_dims_listed_in_different_orders():
    """The issue's case (Triton 3.9.0 merges, it does not refuse), in and out dims alike."""
    a = LL(lane=[[1]], warp=[[2]], out_dims={"o": 4})
    b = LL(warp=[[1]], lane=[[0]], out_dims={"o": 2})
    assert a * b == LL(lane=[[1], [0]], warp=[[2], [4]], out_dims={"o": 8})
    c = LL(i=[[1, 0]], out_dims={"p": 2, "q": 2}) * LL(i=[[0, 1]], out_dims={"q": 2, "p": 2})
    assert c.out_dims == (("p", 4), ("q", 4)) and c.get_bases("i") == ((1, 0), (2, 0))


def test_pseudoinvert_picks_the_earliest_offset():
    p = LL(offset=[[1], [0], [2]], out_dims={"dim0": 4}).pseudoinvert()
    assert p == LL(dim0=[[1], [4]], out_dims={"offset": 8})


def test_divide_left_failures():
    a = LL(lane=[[1], [2], [4], [12]], out_dims={"offset": 16})
    assert a.divide_left(LL.identity_1d(8, "lane", "offset")) is None  # 12 is not a multiple of 8
    assert a.divide_left(LL.identity_1d(32, "lane", "offset")) is None  # tile larger than a
    assert a.divide_left(LL.identity_1d(2, "register", "offset")) is None  # dim a lacks
    assert a.divide_left(LL.strided_1d(2, 2, "lane", "offset")) is None  # leading basis differs
    assert a.divide_left(LL.identity_1d(4, "lane", "offset")) == LL(
        lane=[[1], [3]], out_dims={"offset": 4}
    )


def test_divide_right():
    a = LL.identity_1d(8, "lane", "offset") * LL.identity_1d(4, "register", "offset")
    assert a.divide_right(LL.identity_1d(4, "register", "offset")) == LL(
        lane=[[1], [2], [4]], register=[], out_dims={"offset": 8}
    )
    assert a.divide_right(LL.identity_1d(4, "lane", "offset")) is None


def test_sublayout_quotient_and_trivial_dims():
    lay = SEED_DST * LL.identity_1d(2, "block", "block")
    assert lay.is_trivial_over(["block"]) and not lay.is_trivial_over(["lane"])
    assert lay.quotient(["block"]) == SEED_DST
    assert SEED_DST.quotient(["lane"]) is None
    sub = SEED_DST.sublayout(["lane"], ["dim1"])
    assert sub == LL(lane=[[0]] * 5, out_dims={"dim1": 8})
    assert SEED_DST.zeros_like().apply({"register": 7, "lane": 31}) == {"dim0": 0, "dim1": 0}


def test_reshape_transpose_rename_concat():
    flat = SEED_DST.flatten_ins()
    assert flat.in_dim_names == ("register",) and flat.in_dim_size("register") == 256
    assert flat.apply({"register": 3 + (5 << 3)}) == SEED_DST.apply({"register": 3, "lane": 5})
    outs = SEED_DST.flatten_outs()
    assert outs.apply({"register": 1}) == {"dim0": 32}  # [0, 1] -> 0 + 1 * 32
    t = SEED_DST.transpose_outs(["dim1", "dim0"])
    assert t.apply({"register": 1}) == {"dim1": 1, "dim0": 0} and t != SEED_DST
    assert SEED_DST.transpose_ins(["lane", "register"]) != SEED_DST
    r = SEED_DST.rename_in_dim("lane", "thread").rename_out_dim("dim0", "m")
    assert r.in_dim_names == ("register", "thread") and r.out_dim_names == ("m", "dim1")
    w = LL.zeros_1d(2, "warp", "dim0", 32).concat_outs(LL.zeros_1d(2, "warp", "dim1", 8))
    both = SEED_DST.concat_ins(w)
    assert both.in_dim_names == ("register", "lane", "warp")
    assert LL(r=[[1], [0], [2]], out_dims={"o": 4}).remove_zero_bases("r") == LL.identity_1d(
        4, "r", "o"
    )


def test_equality_is_triton_equality():
    a = LL(lane=[[1]], out_dims={"o": 2})
    assert a == LL.identity_1d(2, "lane", "o")
    assert a != LL(lane=[[1]], out_dims={"o": 4})  # out sizes count
    assert hash(a) == hash(LL.identity_1d(2, "lane", "o"))


def test_value_semantics():
    cvt = SEED_DST.invert_and_compose(SEED_SHARED)
    assert pickle.loads(pickle.dumps(cvt)) == cvt
    with pytest.raises(dataclasses.FrozenInstanceError):
        cvt.bases = ()  # type: ignore[misc]


def test_repr_round_trip_and_table():
    cvt = SEED_DST.invert_and_compose(SEED_SHARED)
    text = repr(cvt)
    assert text == (
        "LinearLayout(register=[[32], [64], [128]], lane=[[1], [2], [4], [8], [16]], "
        'out_dims={"offset": 256})'
    )
    assert eval(text, {"LinearLayout": LinearLayout}) == cvt
    assert LL.from_repr(text) == cvt
    odd = LL([("my dim", [[1]])], [("o", 2)])
    assert LL.from_repr(repr(odd)) == odd
    lines = SEED_DST.table().splitlines()
    assert lines[0] == "register=1 -> (0, 1)" and lines[3] == "lane=1 -> (1, 0)"
    with pytest.raises(LayoutError, match="cannot parse"):
        LL.from_repr("__import__('os')")


# ------------------------------------------------------------------ the laws
@PROPS
@given(st.data())
def test_compose_is_associative(data):
    ri = ri_of(data)
    a = S.layout(ri)
    b_ins = S.shuffled(ri, a.out_dim_names)
    b = S.layout(ri, ins=b_ins, in_bits=[a.out_dim_bits(d) + ri(0, 1) for d in b_ins])
    c_ins = S.shuffled(ri, b.out_dim_names)
    c = S.layout(ri, ins=c_ins, in_bits=[b.out_dim_bits(d) + ri(0, 1) for d in c_ins])
    assert a.compose(b).compose(c) == a.compose(b.compose(c))


@PROPS
@given(st.data())
def test_invert_is_a_two_sided_inverse(data):
    lay = S.invertible_layout(ri_of(data), max_bits=3)
    inv = lay.invert()
    xs = all_inputs(lay)
    assert all(np.array_equal(v, xs[d]) for d, v in lay.compose(inv).apply(xs).items())
    ys = all_inputs(inv)
    assert all(np.array_equal(v, ys[d]) for d, v in inv.compose(lay).apply(ys).items())


@PROPS
@given(st.data())
def test_pseudoinvert_is_a_right_inverse(data):
    lay = S.surjective_layout(ri_of(data), max_bits=3)
    ys = all_inputs(lay.pseudoinvert())
    back = lay.apply(lay.pseudoinvert().apply(ys))
    assert all(np.array_equal(back[o], ys[o]) for o in lay.out_dim_names)


def _tile_and_quotient(ri):
    ins, outs = S.shuffled(ri, S.IN_POOL), S.shuffled(ri, S.OUT_POOL)
    q_ins, q_outs = S.subset(ri, ins, 1, 4), S.subset(ri, outs, 1, 3)
    tile = S.layout(
        ri,
        ins=S.subset(ri, q_ins, 0, 4),
        outs=[(o, 1 << ri(0, 3)) for o in S.subset(ri, q_outs, 1, 3)],
    )
    q = S.layout(ri, ins=q_ins, outs=[(o, 1 << ri(0, 3)) for o in q_outs], max_bits=3)
    return tile, q


@PROPS
@given(st.data())
def test_divide_undoes_product(data):
    tile, q = _tile_and_quotient(ri_of(data))
    assert (tile * q).divide_left(tile) == q
    assert (q * tile).divide_right(tile) == q


@PROPS
@given(st.data())
def test_apply_of_product_is_the_pair_of_applies(data):
    ri = ri_of(data)
    inner, outer = _tile_and_quotient(ri)
    prod = inner * outer
    lo = {d: ri(0, inner.in_dim_size(d) - 1) for d in inner.in_dim_names}
    hi = {d: ri(0, outer.in_dim_size(d) - 1) for d in outer.in_dim_names}
    x = {
        d: lo.get(d, 0) | (hi.get(d, 0) << (inner.num_bases(d) if d in lo else 0))
        for d in prod.in_dim_names
    }
    a, b = inner.apply(lo), outer.apply(hi)
    for o, v in prod.apply(x).items():
        shift = inner.out_dim_bits(o) if o in a else 0
        assert v == a.get(o, 0) | (b.get(o, 0) << shift)


@PROPS
@given(st.data())
def test_invert_and_compose_reaches_the_same_outputs(data):
    ri = ri_of(data)
    outer = S.surjective_layout(ri, max_bits=3)
    outs = [
        (o, max(1, outer.out_dim_size(o) >> ri(0, 1))) for o in S.shuffled(ri, outer.out_dim_names)
    ]
    this = S.layout(ri, outs=outs, max_bits=3)
    c = this.invert_and_compose(outer)
    xs = all_inputs(this)
    want, got = this.apply(xs), outer.apply(c.apply(xs))
    assert all(np.array_equal(got[o], want[o]) for o in this.out_dim_names)


@PROPS
@given(st.data())
def test_reshape_round_trips(data):
    ri = ri_of(data)
    lay = S.layout(ri)
    ins = [(d, lay.in_dim_size(d)) for d in lay.in_dim_names]
    outs = list(lay.out_dims)
    assert lay.flatten_ins().reshape_ins(ins) == lay
    assert lay.flatten_outs().reshape_outs(outs) == lay
    bits = lay.total_in_bits
    cut = ri(0, bits)
    two = [("x", 1 << cut), ("y", 1 << (bits - cut))]
    assert lay.reshape_ins(two).reshape_ins(ins) == lay


@PROPS
@given(st.data())
def test_vectorised_apply_equals_pointwise_apply(data):
    lay = S.layout(ri_of(data), max_bits=3)
    xs = all_inputs(lay)
    vec = lay.apply(xs)
    flat = {d: v.ravel() for d, v in xs.items()}
    for k in range(lay.total_in_size if flat else 0):
        point = lay.apply({d: int(v[k]) for d, v in flat.items()})
        assert all(int(vec[o].ravel()[k]) == point[o] for o in lay.out_dim_names)
    idx = np.arange(lay.total_in_size)
    assert lay.apply_flat(idx).tolist() == [lay.apply_flat(int(i)) for i in idx]


def test_keyword_constructor_traps_give_layout_errors():
    ok = LinearLayout(register=[[1]], out_dims={"dim0": 4}, require_surjective=False)
    assert ok.out_dims == (("dim0", 4),) and not ok.is_surjective()
    with pytest.raises(LayoutError, match="not surjective"):
        LinearLayout(register=[[1]], out_dims={"dim0": 4}, require_surjective=True)
    assert LinearLayout(
        register=[[1]], out_dims={"dim0": 2}, require_surjective=True
    ).is_surjective()
    with pytest.raises(LayoutError, match=r"give out_dims with the in dims"):
        LinearLayout(register=[[1]])
    with pytest.raises(LayoutError, match=r"^identity_1d: size 3 must be a power of two$"):
        LinearLayout.identity_1d(3, "lane", "offset")
    with pytest.raises(LayoutError, match="not surjective"):
        LinearLayout.from_bases({"lane": [[0]]}, ["dim0"], [2])
