"""Fuzz ``#ttg`` layout text and ``lower`` shapes through the CLI (``layout show``, ``layout cvt``,
``lower``): every input succeeds or ends in one line with exit 2, quickly."""

from __future__ import annotations

from cli_runner import fuzz
from conftest import examples
from hypothesis import example, given
from hypothesis import strategies as st

LAYOUTS = (
    "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], "
    "order = [1, 0]}>",
    "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], "
    "[16, 0]], warp = [], block = []}>",
    "#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>",
    "#ttg.padded_shared<[512:+16] {order = [1, 0], shape = [32, 64]}>",
    "#ttg.partitioned_shared<{numPartitions = 2, numGroups = 2, partitionDim = 0, "
    "partitionLayout = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, "
    "order = [1, 0]}>}>",
    "#ttg.amd_wmma<{version = 3, isTranspose = false, warpsPerCTA = [2, 2], "
    "instrShape = [16, 16, 32]}>",
    "#ttg.dot_op<{opIdx = 1, parent = #ttg.amd_wmma<{version = 3, isTranspose = false, "
    "warpsPerCTA = [8, 1], instrShape = [16, 16, 32]}>, kWidth = 8}>",
)
TOKENS = (
    "[", "]", "{", "}", "<", ">", ",", "=", ":", "+", "#", "#ttg.", " ", "0", "1", "-1", "3",
    "64", "4096", "9" * 25, "9" * 5000, "order", "vec", "true", "false", "\x00", "\u00e9",
    "[" * 300, "ttg.blocked", "#mma = ", "shape", "register", "lane", "warp",
)  # fmt: skip


@st.composite
def layout_texts(draw) -> str:
    """A real layout, edited: tokens inserted, spans deleted or replaced."""
    text = draw(st.sampled_from(LAYOUTS))
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(text)))
        span = draw(st.integers(0, 12))
        new = draw(st.sampled_from(TOKENS)) if draw(st.booleans()) else ""
        text = text[:at] + new + text[at + span :]
    return text


SHAPES = st.one_of(
    st.lists(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 4096]), min_size=1,
             max_size=3).map(lambda dims: "x".join(map(str, dims))),
    st.lists(st.integers(-2, 70000), min_size=1, max_size=4).map(
        lambda dims: "x".join(map(str, dims))
    ),
    st.text(alphabet="0123456789xX-+ .e", max_size=12),
    st.sampled_from(["16384x16384", "4096x4096", "9" * 5000, "1x" * 40 + "1", "0x8"]),
)  # fmt: skip


@examples(3400)
@given(layout_texts(), SHAPES)
@example("#ttg.blocked<{sizePerThread = " + "[" * 5000 + "}>", "4x4")  # RecursionError
@example(LAYOUTS[0].replace("[1, 8]", "[1, " + "9" * 5000 + "]"), "4x4")  # int digits
def test_layout_show(text, shape):
    fuzz("layout", "show", text, "--shape", shape, "--json")


@examples(1500)
@given(
    st.sampled_from(LAYOUTS) | layout_texts(),
    st.sampled_from(LAYOUTS) | layout_texts(),
    SHAPES,
    st.sampled_from(["fp16", "bf16", "fp8", "fp32", "i8", "int4", ""]),
)
def test_layout_cvt(dst, shared, shape, dtype):
    fuzz("layout", "cvt", "--dst", dst, "--shared", shared, "--shape", shape, "--dtype", dtype,
         "--json")  # fmt: skip


@examples(1500)
@given(
    st.sampled_from(LAYOUTS[2:5]) | layout_texts(),
    st.sampled_from(LAYOUTS[:2] + LAYOUTS[5:]) | layout_texts(),
    SHAPES,
    st.sampled_from(["fp16", "bf16", "fp8", "fp32"]),
    st.booleans(),
)
@example(LAYOUTS[2], LAYOUTS[0], "16384x16384", "fp16", False)  # shape past any LDS
@example(LAYOUTS[2], LAYOUTS[0], "4096x4096", "fp16", False)  # 256 times the LDS
def test_lower(shared, dst, shape, dtype, transpose):
    flags = [] if transpose else ["--no-transpose"]
    fuzz("lower", "--shared", shared, "--dst", dst, "--shape", shape, "--dtype", dtype,
         *flags, "--json")  # fmt: skip
