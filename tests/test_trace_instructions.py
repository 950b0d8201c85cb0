"""The LDS instruction catalogue and op codes."""

import re

import numpy as np
import pytest

from wgpsim.errors import TraceError
from wgpsim.trace.instructions import (
    CONTROL_OPS,
    INSTRUCTIONS,
    OP_ALIGNMENT,
    OPS,
    instruction,
    is_lds,
    op_code,
    op_name,
    two_address_forms,
)

MNEMONIC = re.compile(
    r"ds_(?P<verb>load|store)_(?P<two>2addr_)?(?P<st64>stride64_)?(?:tr(?P<tr>\d+)_)?[bu](?P<bits>\d+)(?P<hi>_d16_hi)?"
)


def test_the_tdm_record():
    """The TDM's write rows (docs/DESIGN.md, "TDM writes"): 32 granules of 8 bytes, 256 B a
    row (one port cycle), a write (not a load), after every gfx1250 ds_* instruction (the
    gfx9 records come after it, so gfx1250's op codes are those of earlier traces)."""
    ins = INSTRUCTIONS["tensor_load_to_lds"]
    assert (ins.bytes_per_lane * 32, ins.kind, ins.is_load, ins.addresses) == (256, "tdm", False, 1)
    gfx12 = [n for n, i in INSTRUCTIONS.items() if i.family == "gfx12"]
    assert gfx12[-1] == "tensor_load_to_lds"
    assert list(INSTRUCTIONS)[: len(gfx12)] == gfx12


GFX9 = re.compile(
    r"ds_(?P<verb>read|write)(?P<two>2)?(?P<st64>st64)?_[bu](?P<bits>\d+)(?:_tr_b(?P<tr>\d+))?"
    r"(?P<hi>_d16_hi)?"
)


@pytest.mark.parametrize(
    "name", [n for n, i in INSTRUCTIONS.items() if n.startswith("ds_") and i.family == "gfx9"]
)
def test_each_gfx9_record_agrees_with_its_mnemonic(name):
    # CDNA3/CDNA4 spell the same accesses ds_read/ds_write: read2 = two accesses, st64 = offsets
    # in units of 64 elements, _tr_bK = a transposed load of K-bit elements (LLVM's assembler
    # names for gfx942/gfx950, as Triton 3.9.0's gfx950 assembly prints them)
    m = GFX9.fullmatch(name)
    assert m, name
    ins = INSTRUCTIONS[name]
    two = 2 if m["two"] else 1
    verb = {"read": "load", "write": "store"}[m["verb"]]
    assert (ins.addresses, ins.bytes_per_lane) == (two, two * int(m["bits"]) // 8)
    assert ins.offset_unit_elems == (64 if m["st64"] else 1)
    assert ins.kind == ("load_tr" if m["tr"] else verb)
    assert ins.d16_hi == bool(m["hi"])
    assert ins.elem_bits == (int(m["tr"]) if m["tr"] else int(m["bits"]))
    if two == 2:
        assert ins.single == f"ds_{m['verb']}_b{m['bits']}"
        assert two_address_forms(ins.single)[ins.offset_unit_elems] == name


@pytest.mark.parametrize(
    "name", [n for n, i in INSTRUCTIONS.items() if n.startswith("ds_") and i.family == "gfx12"]
)
def test_each_record_agrees_with_its_mnemonic(name):
    # The gfx1250 mnemonic spells the record: bN / uN = N bits per access, 2addr = two
    # accesses, stride64 = offsets in units of 64 elements, trK = a transposed load of K-bit
    # elements (LLVM's AMDGPU assembler names; the ISA guide's DS encoding).
    m = MNEMONIC.fullmatch(name)
    assert m, name
    ins = INSTRUCTIONS[name]
    two = 2 if m["two"] else 1
    assert ins.addresses == two
    assert ins.bytes_per_lane == two * int(m["bits"]) // 8
    assert ins.offset_unit_elems == (64 if m["st64"] else 1)
    assert ins.kind == ("load_tr" if m["tr"] else m["verb"])
    assert ins.d16_hi == bool(m["hi"])
    assert ins.exchange is None or m["tr"]  # tr4: rows placed by lowering_packed
    assert ins.elem_bits == (int(m["tr"]) if m["tr"] else int(m["bits"]))
    if two == 2:  # pairs the single-address access of the same verb and width
        assert ins.single == f"ds_{m['verb']}_b{m['bits']}"
        assert two_address_forms(ins.single)[ins.offset_unit_elems] == name


def test_catalogue_is_frozen():
    with pytest.raises(AttributeError):
        INSTRUCTIONS["ds_load_b32"].bytes_per_lane = 8


@pytest.mark.parametrize(
    ("name", "align"),
    [("ds_load_u8", 1), ("ds_load_u16", 2), ("ds_load_b32", 4), ("ds_load_b64", 4),
     ("ds_load_b96", 4), ("ds_load_b128", 4), ("ds_load_tr8_b64", 4), ("ds_store_b128", 4),
     ("ds_load_2addr_b32", 4), ("ds_store_2addr_stride64_b64", 4)],
)  # fmt: skip
def test_alignment_is_natural_up_to_a_dword(name, align):
    # unaligned access mode: 8-byte padded layouts give ds_load_b128 at 8-byte aligned
    # addresses in real gfx1250 compiles; a wide access needs only dword alignment
    assert INSTRUCTIONS[name].alignment == align
    assert OP_ALIGNMENT[op_code(name)] == align


def test_ops_lists_instructions_then_control_ops():
    assert OPS[: len(INSTRUCTIONS)] == tuple(INSTRUCTIONS)
    control = ("wait_ds", "barrier", "clock", "wait_tensor", "delay")
    assert OPS[len(INSTRUCTIONS) :] == control == CONTROL_OPS
    for code, name in enumerate(OPS):
        assert op_code(name) == code
        assert op_name(code) == name


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
