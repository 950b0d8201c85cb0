"""#ttg.* text and YAML dicts: what users paste parses, everything round-trips, errors are clear."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.errors import LayoutError
from wgpsim.layout.distributed import BlockedLayout, DistributedLinearLayout, SliceLayout
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
from wgpsim.layout.notation import from_dict, parse, parse_any, to_dict, to_text
from wgpsim.layout.shared import (
    PaddedSharedLayout,
    PartitionedSharedLayout,
    SharedLinearLayout,
    SwizzledSharedLayout,
)

# ------------------------------------------------------------------ strategies
pow2 = st.sampled_from([1, 2, 4, 8])
orders2 = st.sampled_from([(0, 1), (1, 0)])


@st.composite
def blocked(draw):
    lanes_dim0 = draw(st.sampled_from([1, 2, 4, 8, 16, 32]))
    return BlockedLayout(
        (draw(pow2), draw(pow2)),
        (lanes_dim0, 32 // lanes_dim0),
        (draw(pow2), draw(pow2)),
        draw(orders2),
    )


basis2 = st.tuples(st.sampled_from([0, 1, 2, 4, 8, 16]), st.sampled_from([0, 1, 2, 4, 8, 16]))
linear = st.builds(
    DistributedLinearLayout,
    st.lists(basis2, min_size=1, max_size=4),
    st.lists(basis2, min_size=5, max_size=5),
    st.lists(basis2, max_size=3),
)
swizzled = st.builds(SwizzledSharedLayout, pow2, pow2, pow2, orders2)
pairs = st.lists(st.tuples(st.sampled_from([8, 64, 128, 256, 512]), pow2), min_size=1, max_size=3,
                 unique_by=lambda p: p[0])  # fmt: skip
padded = st.one_of(
    st.builds(
        lambda p, o, s: PaddedSharedLayout(p, order=o, shape=s),
        pairs,
        orders2,
        st.tuples(st.sampled_from([16, 32, 64]), st.sampled_from([16, 32, 128])),
    ),
    st.builds(
        lambda p, perm: PaddedSharedLayout(
            p, offset_bases=[[0, 1], [0, 2], [1, 0], [2, 0]][::perm]
        ),
        pairs,
        st.sampled_from([1, -1]),
    ),
)


@st.composite
def wmma(draw):
    wm, wn = draw(st.sampled_from([(1, 4), (2, 2), (4, 1), (2, 4)]))
    mma = AMDWMMALayout.from_warps_per_cta(
        [wm, wn],
        draw(st.booleans()),
        (*draw(st.sampled_from([(16, 16), (32, 16)])), draw(st.sampled_from([4, 32, 64, 128]))),
    )
    return mma


swizzled_wmma = st.just(AMDWMMALayout(3, True, [[2, 1], [1, 0]], [[2, 0]], (16, 16, 32)))
dot = st.builds(DotOperandLayout, st.sampled_from([0, 1]), st.one_of(wmma(), swizzled_wmma), pow2)
partitioned = st.builds(
    PartitionedSharedLayout,
    st.sampled_from([2, 4]),
    pow2,
    st.sampled_from([0, 1]),
    st.one_of(swizzled, padded),
)
batched_wmma = st.just(AMDWMMALayout(3, False, [[0, 1, 0], [0, 0, 1]], [[1, 0, 0]], (16, 16, 32)))
sliced = st.builds(
    SliceLayout, st.sampled_from([0, 1]), st.one_of(blocked(), wmma(), dot, batched_wmma)
)
shared_linear = st.builds(
    SharedLinearLayout,
    st.permutations([[0, 1], [0, 2], [1, 0], [2, 0], [4, 0]]),
    st.sampled_from([16, 32]),
)
any_layout = st.one_of(
    blocked(), linear, swizzled, padded, wmma(), swizzled_wmma, dot, partitioned,
    batched_wmma, sliced, shared_linear,
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(any_layout)
def test_text_round_trip(layout):
    text = to_text(layout)
    assert text.startswith("#ttg.")
    assert parse(text) == layout
    assert parse(f"#x = {text}") == layout
    assert parse(text.removeprefix("#ttg.")) == layout


@settings(max_examples=150, deadline=None)
@given(any_layout)
def test_dict_round_trip(layout):
    d = to_dict(layout)
    assert from_dict(d) == layout
    assert parse_any(d) == parse_any(to_text(layout)) == parse_any(layout) == layout


# ------------------------------------------------------------------ pasted forms
def test_triton_test_file_forms():
    text = """
    #mma_b16 = #ttg.amd_wmma<{version = 3, isTranspose = false, ctaLayout = {warp = [[0, 1], [1, 0]]}, instrShape = [16, 16, 32]}>
    #shared = #ttg.padded_shared<[512:+16] {order = [0, 1], shape = [64, 64]}>
    #partitioned = #ttg.partitioned_shared<{numPartitions = 2, numGroups = 1, partitionDim = 0, partitionLayout = #shared}>
    """
    assert parse(text) == PartitionedSharedLayout(
        2, 1, 0, PaddedSharedLayout([(512, 16)], order=[0, 1], shape=[64, 64])
    )
    mma = parse(text.strip().splitlines()[0])
    assert parse("#ttg.dot_op<{opIdx = 0, parent = #mma_b16, kWidth = 8}>", {"mma_b16": mma}) == (
        DotOperandLayout(0, mma, 8)
    )


def test_triton_printed_forms_of_new_encodings():
    """As Triton 3.9.0 prints them (a Gluon kernel's TTGIR). to_text gives the same text, except
    that an amd_wmma always names `warp` and a batched one says `rank = 3`: Triton's printer
    drops both, and its parser rejects the result (tests/test_notation_triton_parse.py)."""
    wmma3 = "ctaLayout = {register = [[1, 0, 0]], warp = [[0, 1, 0], [0, 0, 1]]}"
    cases = [
        ("#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 4], [0, 4]]}, alignment = 16>",) * 2,
        ("#ttg.slice<{dim = 0, parent = #ttg.amd_wmma<{version = 3, isTranspose = false, "
         "ctaLayout = {warp = [[0, 1], [1, 0]]}, instrShape = [16, 16, 32]}>}>",) * 2,
        (f"#ttg.amd_wmma<{{version = 3, isTranspose = false, {wmma3}, instrShape = [16, 16, 32]}}>",
         f"#ttg.amd_wmma<{{version = 3, isTranspose = false, rank = 3, {wmma3}, instrShape = [16, 16, 32]}}>"),
        ("#ttg.amd_wmma<{version = 3, isTranspose = false, ctaLayout = {}, instrShape = [16, 16, 32]}>",
         "#ttg.amd_wmma<{version = 3, isTranspose = false, ctaLayout = {warp = []}, instrShape = [16, 16, 32]}>"),
    ]  # fmt: skip
    for triton_text, ours in cases:
        assert to_text(parse(triton_text)) == ours
        assert parse(ours) == parse(triton_text)
    assert parse(cases[0][0]).alignment == 16
    assert parse(cases[2][0]).rank == 3 and parse(cases[3][0]).rank is None
    with pytest.raises(LayoutError, match="'rank' 2 must be 2 or 3, the length of every basis"):
        parse(cases[2][1].replace("rank = 3", "rank = 2"))


def test_new_encoding_errors():
    with pytest.raises(LayoutError, match=r"cover shape \[4, 8\], not the tensor shape \[8, 8\]"):
        parse(
            "#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 4], [0, 4]]}>"
        ).to_linear_layout((8, 8))
    with pytest.raises(LayoutError, match="surjective"):
        parse("#ttg.shared_linear<{offset = [[0, 1], [0, 2], [1, 0], [2, 4]]}, alignment = 16>")
    with pytest.raises(LayoutError, match="'parent' must be a distributed layout"):
        parse("#ttg.slice<{dim = 0, parent = #ttg.swizzled_shared<{vec = 1, perPhase = 1, "
              "maxPhase = 1, order = [0, 1]}>}>")  # fmt: skip
    with pytest.raises(LayoutError, match="rank 2, expected 3"):
        parse("#ttg.amd_wmma<{version = 3, ctaLayout = {register = [[1, 0, 0]]}, "
              "instrShape = [16, 16, 32]}>").to_linear_layout((64, 64))  # fmt: skip


def test_warps_per_cta_form_and_field_order():
    a = parse(
        "#ttg.amd_wmma<{version = 3, isTranspose = true, warpsPerCTA = [2, 2], instrShape = [16, 16, 128]}>"
    )
    b = parse(
        "#ttg.amd_wmma<{version = 3, ctaLayout = {warp = [[0, 1], [1, 0]]}, isTranspose = true, instrShape = [16, 16, 128]}>"
    )
    assert a == b == AMDWMMALayout(3, True, [[0, 1], [1, 0]], (), (16, 16, 128))


def test_seed_swizzled_ctalayout_text():
    text = "#ttg.amd_wmma<{version = 3, isTranspose = false, ctaLayout = {register = [[2, 0]], warp = [[2, 1], [1, 0]]}, instrShape = [16, 16, 32]}>"
    assert to_text(parse(text)) == text


def test_padded_explicit_offset_form():
    lay = parse(
        "#ttg.padded_shared<[4:+4,8:+2] {offset = [[1, 0], [2, 0], [0, 1], [0, 2]], block = []}>"
    )
    assert lay.interval_padding_pairs == ((4, 4), (8, 2))
    assert lay.offset_bases == ((1, 0), (2, 0), (0, 1), (0, 2))
    assert (
        to_text(lay)
        == "#ttg.padded_shared<[4:+4, 8:+2] {offset = [[1, 0], [2, 0], [0, 1], [0, 2]], block = []}>"
    )


def test_one_cta_fields_are_accepted():
    lay = parse(
        "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
        "order = [1, 0], CTAsPerCGA = [1, 1], CTASplitNum = [1, 1], CTAOrder = [1, 0]}>"
    )
    assert lay == BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])


def test_yaml_dicts_from_the_brief():
    assert from_dict(
        {"kind": "swizzled_shared", "vec": 1, "per_phase": 1, "max_phase": 1, "order": [1, 0]}
    ) == (SwizzledSharedLayout(1, 1, 1, [1, 0]))
    part = from_dict({"kind": "partitioned_shared", "num_partitions": 2, "num_groups": 2, "partition_dim": 0,
                      "partition_layout": {"kind": "swizzled_shared", "vec": 1, "perPhase": 1, "maxPhase": 1,
                                           "order": [1, 0]}})  # fmt: skip
    assert part.partition_layout == SwizzledSharedLayout(1, 1, 1, [1, 0])
    assert (
        from_dict({"kind": "linear", "register": [[0, 1]], "lane": [[1, 0]] * 5, "warp": []}).rank
        == 2
    )
    mma = from_dict(
        {
            "kind": "amd_wmma",
            "transposed": True,
            "warps_per_cta": [2, 2],
            "instr_shape": [16, 16, 32],
        }
    )
    assert mma.warp_bases == ((0, 1), (1, 0))
    dot = from_dict({"kind": "dot_op", "op_idx": 1, "parent": to_text(mma), "k_width": 8})
    assert dot.parent == mma


@pytest.mark.parametrize(
    "text, message",
    [
        ("#ttg.swizzled_shared<{vec = 1, perPhase = 3, maxPhase = 1, order = [0, 1]}>",
         "swizzled_shared: field 'perPhase' must be a positive power of two, got 3"),
        ("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1], swizzle = 2}>",
         "swizzled_shared: unknown field 'swizzle'; valid fields: vec, perPhase, maxPhase, order"),
        ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1]}>",
         "blocked: missing field(s) order"),
        ("#ttg.blocked<{sizePerThread = [1, 8] threadsPerWarp = [4, 8]}>", "expected '}' at column 38"),
        ("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}", "expected '>'"),
        ("#ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 8}>", "unknown alias #mma"),
        ("#ttg.nvmma_shared<{swizzlingByteWidth = 128}>", "unknown layout kind 'nvmma_shared'"),
        ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0], CTAsPerCGA = [2, 1]}>",
         "only one CTA is modelled"),
        ("#ttg.linear<{register = [[0, 1]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [], block = [[0, 8]]}>",
         "field 'block' must be empty"),
        ("#ttg.amd_wmma<{version = 3, isTranspose = false, ctaLayout = {warp = [[2, 1], [1, 0]]}, instrShape = [16, 16, 32]}>",
         "not surjective"),
        ("#ttg.padded_shared<[512:+12] {order = [0, 1], shape = [128, 64]}>",
         "field 'padding' must be a positive power of two, got 12"),
        ("", "empty layout text"),
    ],
)  # fmt: skip
def test_errors_name_what_and_where(text, message):
    with pytest.raises(LayoutError) as err:
        parse(text)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_parse_any_rejects_other_things():
    with pytest.raises(LayoutError, match="cannot read a layout from int"):
        parse_any(3)
    with pytest.raises(LayoutError, match="needs a 'kind' field"):
        from_dict({"vec": 1})
