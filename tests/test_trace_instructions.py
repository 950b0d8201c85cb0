"""The LDS instruction catalogue and op codes."""

import numpy as np
import pytest

from wgpsim.errors import TraceError
from wgpsim.trace.instructions import (
    CONTROL_OPS,
    INSTRUCTIONS,
    OP_ALIGNMENT,
    OP_BYTES_PER_LANE,
    OPS,
    instruction,
    is_lds,
    op_code,
    op_name,
)

# (name, bytes per lane, kind, element bits): widths from the instruction names (bN = N bits).
CATALOGUE = [
    ("ds_load_b32", 4, "load", 32),
    ("ds_load_b64", 8, "load", 64),
    ("ds_load_b96", 12, "load", 96),
    ("ds_load_b128", 16, "load", 128),
    ("ds_load_u8", 1, "load", 8),
    ("ds_load_u16", 2, "load", 16),
    ("ds_load_tr8_b64", 8, "load_tr", 8),
    ("ds_load_tr16_b128", 16, "load_tr", 16),
    ("ds_store_b8", 1, "store", 8),
    ("ds_store_b16", 2, "store", 16),
    ("ds_store_b32", 4, "store", 32),
    ("ds_store_b64", 8, "store", 64),
    ("ds_store_b128", 16, "store", 128),
]


@pytest.mark.parametrize(("name", "width", "kind", "elem_bits"), CATALOGUE)
def test_catalogue_widths(name, width, kind, elem_bits):
    ins = INSTRUCTIONS[name]
    assert (ins.name, ins.bytes_per_lane, ins.kind, ins.elem_bits) == (name, width, kind, elem_bits)


def test_catalogue_is_complete_and_frozen():
    assert set(INSTRUCTIONS) == {c[0] for c in CATALOGUE}
    with pytest.raises(AttributeError):
        INSTRUCTIONS["ds_load_b32"].bytes_per_lane = 8


def test_transposed_loads_read_like_plain_loads_of_their_width():
    # Seed, Part I: b64/b128 is the bits read per lane, tr8/tr16 the element width.
    assert (
        INSTRUCTIONS["ds_load_tr16_b128"].bytes_per_lane
        == INSTRUCTIONS["ds_load_b128"].bytes_per_lane
    )
    assert (
        INSTRUCTIONS["ds_load_tr8_b64"].bytes_per_lane == INSTRUCTIONS["ds_load_b64"].bytes_per_lane
    )


@pytest.mark.parametrize(
    ("name", "align"),
    [
        ("ds_load_u8", 1),
        ("ds_load_u16", 2),
        ("ds_load_b32", 4),
        ("ds_load_b64", 8),
        ("ds_load_b96", 4),
        ("ds_load_b128", 16),
        ("ds_load_tr8_b64", 8),
        ("ds_store_b128", 16),
    ],
)
def test_alignment(name, align):
    assert INSTRUCTIONS[name].alignment == align
    assert OP_ALIGNMENT[op_code(name)] == align


def test_ops_lists_instructions_then_control_ops():
    assert OPS[: len(INSTRUCTIONS)] == tuple(INSTRUCTIONS)
    assert OPS[len(INSTRUCTIONS) :] == ("wait_ds", "barrier", "clock", "delay") == CONTROL_OPS
    for code, name in enumerate(OPS):
        assert op_code(name) == code
        assert op_name(code) == name
        assert OP_BYTES_PER_LANE[code] == (
            INSTRUCTIONS[name].bytes_per_lane if name in INSTRUCTIONS else 0
        )


def test_unknown_names_list_valid_ones():
    with pytest.raises(
        TraceError, match=r"unknown op 'ds_load_b256' \(valid: ds_load_b32, .*delay\)"
    ):
        op_code("ds_load_b256")
    with pytest.raises(TraceError, match=r"unknown op code 99"):
        op_name(99)
    with pytest.raises(TraceError, match=r"unknown LDS instruction 'barrier' \(valid: ds_load_b32"):
        instruction("barrier")


def test_is_lds_scalar_and_vectorised():
    codes = np.arange(len(OPS), dtype=np.int16)
    expected = np.array([name in INSTRUCTIONS for name in OPS])
    assert np.array_equal(is_lds(codes), expected)
    assert is_lds(op_code("ds_store_b8")) is True
    assert is_lds(op_code("clock")) is False
