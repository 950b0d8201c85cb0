"""Every validation rule, in memory (row named) and from a JSONL file (line and field named)."""

import json
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.engine.fast import trace_is_valid
from wgpsim.errors import TraceError
from wgpsim.trace import Trace, random_trace, read_jsonl
from wgpsim.trace import validate as numpy_validate
from wgpsim.trace.instructions import OPS, op_code
from wgpsim.trace.validate import DEFAULT_LDS_BYTES

_validate = sys.modules["wgpsim.trace.validate"]  # the module (``validate`` is its function)

LANES = 32


def validate(trace, lds_bytes=DEFAULT_LDS_BYTES, **where):
    """``wgpsim.trace.validate``, after asking the fast engine's compiled statement of the rules
    (``_fast_check.trace_is_valid``) the same question: the two must agree on every trace."""
    compiled = trace_is_valid(trace, lds_bytes)
    try:
        checked = numpy_validate(trace, lds_bytes, **where)
    except TraceError:
        assert not compiled, "the compiled check accepts a trace validate refuses"
        raise
    assert compiled, "the compiled check refuses a trace validate accepts"
    return checked


def row_trace(op, arg=0, addr=None, warp=0, num_warps=1, labels=()):
    addr = np.full(LANES, -1) if addr is None else np.asarray(addr)
    return Trace(
        [warp], [op_code(op) if isinstance(op, str) else op], [arg], addr[None], labels, num_warps
    )


def write_lines(tmp_path, records, name="t.jsonl"):
    path = tmp_path / name
    path.write_text("# a comment\n\n" + "\n".join(json.dumps(r) for r in records) + "\n")
    return path


def load(base, stride=None, op="ds_load_b128", warp=0):
    stride = {"ds_load_b128": 16, "ds_load_b32": 4}.get(op, 8) if stride is None else stride
    return {"warp": warp, "op": op, "addr": {"base": base, "stride": stride}}


# ---- in memory -----------------------------------------------------------------------------


def test_valid_trace_is_returned():
    t = row_trace("ds_load_b128", addr=np.arange(LANES) * 16)
    assert validate(t) is t


def test_unknown_op_code():
    with pytest.raises(
        TraceError,
        match=rf"^row 0 \(warp 0, op 99\): field 'op': unknown op code 99 \(valid: 0..{len(OPS) - 1}: ds_load_b32, ",
    ):
        validate(row_trace(99))


def test_warp_out_of_range():
    with pytest.raises(
        TraceError,
        match=r"row 0 \(warp 2, barrier\): field 'warp': 2 is not a warp \(valid: 0..1\)",
    ):
        validate(row_trace("barrier", warp=2, num_warps=2))


@pytest.mark.parametrize(
    ("op", "field", "message"),
    [("wait_ds", "n", "wait_ds count -1 is negative"), ("delay", "cycles", "delay -1 is negative")],
)
def test_negative_counts(op, field, message):
    with pytest.raises(TraceError, match=rf"field '{field}': {message} \(expected >= 0\)"):
        validate(row_trace(op, arg=-1))


def test_clock_label_index_must_exist():
    with pytest.raises(
        TraceError, match=r"field 'label': label index 1 is not in labels \['start'\]"
    ):
        validate(row_trace("clock", arg=1, labels=("start",)))


def test_lds_and_barrier_rows_take_no_arg():
    with pytest.raises(TraceError, match=r"field 'arg': expected 0 for barrier, got 3"):
        validate(row_trace("barrier", arg=3))


def test_control_ops_take_no_addresses():
    with pytest.raises(
        TraceError,
        match=r"\(warp 0, delay\): field 'addr': delay takes no lane addresses \(lane 0 has 0\)",
    ):
        validate(row_trace("delay", addr=np.zeros(LANES, int)))


def test_negative_address_other_than_inactive():
    addr = np.arange(LANES) * 4
    addr[3] = -8
    with pytest.raises(
        TraceError, match=r"lane 3 address -8 is negative \(-1 marks an inactive lane\)"
    ):
        validate(row_trace("ds_load_b32", addr=addr))


@pytest.mark.parametrize(
    ("op", "bad", "align"),
    [("ds_load_b128", 2, 4), ("ds_load_b64", 6, 4), ("ds_load_b32", 2, 4), ("ds_load_u16", 1, 2),
     ("ds_load_b96", 6, 4), ("ds_load_tr16_b128", 26, 4), ("ds_store_b64", 10, 4)],
)  # fmt: skip
def test_misaligned_address_names_the_alignment(op, bad, align):
    addr = np.full(LANES, -1)
    addr[5] = bad
    with pytest.raises(
        TraceError,
        match=rf"lane 5 address {bad} is not {align}-byte aligned \({op} needs multiples of {align}\)",
    ):
        validate(row_trace(op, addr=addr))


def test_eight_byte_aligned_b128_is_what_padded_layouts_give_and_is_accepted():
    # a [64:+4] bf16 padding puts rows 8 bytes off a 16-byte boundary; gfx1250 compiles emit
    # ds_load_b128 / ds_load_tr16_b128 there (unaligned access mode), so the trace is valid
    for op in ("ds_load_b128", "ds_load_tr16_b128", "ds_store_b128"):
        assert validate(row_trace(op, addr=16 * np.arange(LANES) + 8)) is not None


@pytest.mark.parametrize(
    ("op", "distance", "message"),
    [("ds_load_2addr_b32", 0, r"field 'distance': 0 bytes .* takes 1..255 x 4 bytes"),
     ("ds_load_2addr_b64", 12, r"field 'distance': 12 bytes .* takes 1..255 x 8 bytes"),
     ("ds_load_2addr_b32", 1024, r"field 'distance': 1024 bytes .* takes 1..255 x 4 bytes"),
     ("ds_store_2addr_stride64_b64", 256, r"takes 1..255 x 512 bytes"),
     ("ds_load_b64", 8, r"field 'arg': expected 0 for ds_load_b64, got 8")],
)  # fmt: skip
def test_second_address_distance_fits_the_offset_fields(op, distance, message):
    with pytest.raises(TraceError, match=message):
        validate(row_trace(op, arg=distance, addr=8 * np.arange(LANES)))


def test_second_address_must_lie_inside_the_lds():
    addr = 8 * np.arange(LANES)
    assert validate(row_trace("ds_load_2addr_stride64_b64", arg=255 * 512, addr=addr), 1 << 18)
    with pytest.raises(TraceError, match=r"lane 31 address 248 \(\+130568 bytes\) lies outside"):
        validate(row_trace("ds_load_2addr_stride64_b64", arg=255 * 512, addr=addr), 130815)


def test_inactive_lanes_are_not_checked():
    validate(row_trace("ds_load_b128", addr=np.full(LANES, -1)))


def test_address_outside_the_lds():
    addr = np.full(LANES, -1)
    addr[7] = 327680 - 16
    validate(row_trace("ds_load_b128", addr=addr))  # the last 16 bytes
    addr[7] = 327680
    with pytest.raises(
        TraceError,
        match=r"lane 7 address 327680 \(\+16 bytes\) lies outside the LDS \(valid: 0..327664 for a 327680-byte LDS\)",
    ):
        validate(row_trace("ds_load_b128", addr=addr))
    addr[7] = 65536
    with pytest.raises(TraceError, match=r"valid: 0..65532 for a 65536-byte LDS"):
        validate(row_trace("ds_load_b32", addr=addr), lds_bytes=65536)


def test_barrier_some_warp_never_reaches():
    b = op_code("barrier")
    t = Trace([0, 1, 2, 0, 2], [b] * 5, [0] * 5, np.full((5, LANES), -1), (), 3)
    with pytest.raises(
        TraceError,
        match=r"^row 3 \(warp 0, barrier\): field 'op': warp 1 reaches only 1 barrier\(s\) but warp 0 reaches 2: this barrier would wait forever for warp 1",
    ):
        validate(t)


def test_earliest_bad_row_is_reported():
    t = row_trace("delay", arg=-1).concat(row_trace("wait_ds", arg=-1))
    with pytest.raises(TraceError, match=r"^row 0 "):
        validate(t)
    t = row_trace("wait_ds", arg=0).concat(
        row_trace("ds_load_b32", addr=np.full(LANES, 2)), row_trace("delay", arg=-1)
    )
    with pytest.raises(TraceError, match=r"^row 1 .*aligned"):
        validate(t)


def test_source_without_lines_names_the_row():
    with pytest.raises(TraceError, match=r"^t.parquet: row 0 \(warp 0, delay\)"):
        validate(row_trace("delay", arg=-1), source="t.parquet")


def test_large_traces_are_scanned_in_blocks():
    n = 200_000
    addr = np.broadcast_to(np.arange(LANES, dtype=np.int32) * 4, (n, LANES)).copy()
    addr[150_001, 9] = 3
    t = Trace(np.zeros(n, int), np.full(n, op_code("ds_load_b32")), np.zeros(n, int), addr)
    with pytest.raises(TraceError, match=r"^row 150001 .*lane 9 address 3 is not 4-byte aligned"):
        validate(t)


# ---- from a JSONL file: line and field ------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"warp": 0, "op": "ds_load_b256", "addr": []},
         r"t.jsonl:3: field 'op': unknown op 'ds_load_b256' \(valid: ds_load_b32, .*, delay\)"),
        ({"warp": 0, "op": "ds_load_b32", "addr": list(range(0, 124, 4))},
         r"t.jsonl:3: field 'addr': expected 32 lane addresses, got 31"),
        (load(2), r"t.jsonl:3 \(warp 0, ds_load_b128\): field 'addr': lane 0 address 2 is not 4-byte aligned \(ds_load_b128 needs multiples of 4\)"),
        (load(327680 - 16 * 4), r"t.jsonl:3 \(warp 0, ds_load_b128\): field 'addr': lane 4 address 327680 \(\+16 bytes\) lies outside the LDS"),
        ({"warp": 0, "op": "delay", "cycles": -3}, r"t.jsonl:3: field 'cycles': -3 is negative \(expected >= 0\)"),
        ({"warp": 0, "op": "wait_ds", "n": -1}, r"t.jsonl:3: field 'n': -1 is negative \(expected >= 0\)"),
        ({"warp": 0, "op": "wait_ds", "n": 1.5}, r"t.jsonl:3: field 'n': expected an integer, got 1.5"),
        ({"warp": 0, "op": "wait_ds", "cycles": 1}, r"t.jsonl:3: field 'cycles': not used by wait_ds \(valid: warp, op, n\)"),
        ({"warp": 0, "op": "delay"}, r"t.jsonl:3: field 'cycles' missing \(required for delay: warp, op, cycles\)"),
        ({"op": "clock", "label": "x"}, r"t.jsonl:3: field 'warp' missing"),
        ({"warp": 0, "op": "clock", "label": 3}, r"t.jsonl:3: field 'label': expected a string, got 3"),
        ({"warp": -1, "op": "barrier"}, r"t.jsonl:3: field 'warp': -1 is negative"),
        ({"warp": 0, "addr": []}, r"t.jsonl:3: field 'op' missing \(valid: ds_load_b32,"),
        ({"warp": 0, "op": "ds_load_b32", "addr": ["a"] * 32}, r"t.jsonl:3: field 'addr': lane 0 is 'a', expected an integer or null"),
        ({"warp": 0, "op": "ds_load_b32", "addr": [-4] * 32}, r"t.jsonl:3: field 'addr': lane 0 address -4 is not a byte address in the LDS \(use null for an inactive lane\)"),
        ({"warp": 0, "op": "ds_load_b32", "addr": {"base": 0}}, r"t.jsonl:3: field 'addr': expected \{\"base\": B, \"stride\": S\}, got keys \['base'\]"),
        ({"warp": 0, "op": "ds_load_b32", "addr": {"base": 0, "stride": -4}}, r"t.jsonl:3: field 'addr': lane 1 address -4 is not a byte address"),
        ({"warp": 0, "op": "ds_load_b32", "addr": 5}, r"t.jsonl:3: field 'addr': expected a list of 32 addresses"),
    ],
)  # fmt: skip
def test_jsonl_errors_name_line_and_field(tmp_path, record, message):
    path = write_lines(tmp_path, [record])
    with pytest.raises(TraceError, match=message):
        read_jsonl(path)


def test_jsonl_capacity_is_passed_in(tmp_path):
    path = write_lines(tmp_path, [load(65536, 4, "ds_load_b32")])
    read_jsonl(path)
    with pytest.raises(TraceError, match=r"t.jsonl:3 .*valid: 0..65532 for a 65536-byte LDS"):
        read_jsonl(path, lds_bytes=65536)


def test_jsonl_not_json(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"op": "barrier"}\n{"op": barrier}\n')
    with pytest.raises(TraceError, match=r"t.jsonl:2: not valid JSON"):
        read_jsonl(path)


def test_jsonl_warp_beyond_header(tmp_path):
    path = write_lines(tmp_path, [{"num_warps": 2}, {"warp": 2, "op": "delay", "cycles": 1}])
    with pytest.raises(
        TraceError,
        match=r"t.jsonl:4 \(warp 2, delay\): field 'warp': 2 is not a warp \(valid: 0..1\)",
    ):
        read_jsonl(path)


def test_jsonl_header_only_first(tmp_path):
    path = write_lines(tmp_path, [{"op": "barrier"}, {"num_warps": 2}])
    with pytest.raises(
        TraceError, match=r"t.jsonl:4: field 'op' missing .*may only be the first record"
    ):
        read_jsonl(path)


def test_jsonl_barrier_some_warp_never_reaches(tmp_path):
    records = [
        {"op": "barrier"},
        {"warp": 0, "op": "barrier"},
        {"warp": 2, "op": "barrier"},
        {"warp": 1, "op": "delay", "cycles": 1},
    ]
    path = write_lines(tmp_path, records)
    with pytest.raises(
        TraceError,
        match=r"t.jsonl:4 \(warp 0, barrier\): field 'op': warp 1 reaches only 1 barrier\(s\) but warp 0 reaches 2",
    ):
        read_jsonl(path)
    read_jsonl(path, check=False)  # loads when asked not to check


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"num_warps": 0}, r"t.jsonl:3: field 'num_warps': 0 is too small \(expected >= 1\)"),
        ({"num_warps": 1 << 20}, r"t.jsonl:3: field 'num_warps': 1048576 is too large \(at most 65536\)"),
        ({"num_warps": 2, "lds": 5}, r"t.jsonl:3: field 'lds': not a header field \(valid: num_warps, labels, lanes\)"),
        ({"num_warps": 2, "labels": "start"}, r"t.jsonl:3: field 'labels': expected a list"),
    ],
)  # fmt: skip
def test_jsonl_header_errors(tmp_path, record, message):
    with pytest.raises(TraceError, match=message):
        read_jsonl(write_lines(tmp_path, [record]))


def test_jsonl_huge_warp_id_is_refused_before_expanding_barriers(tmp_path):
    path = write_lines(tmp_path, [{"op": "barrier"}, {"warp": 10**12, "op": "barrier"}])
    with pytest.raises(
        TraceError, match=r"t.jsonl:4: field 'warp': 1000000000000 is too large \(at most 65535\)"
    ):
        read_jsonl(path)


def test_a_valid_trace_is_checked_once_per_size():
    from wgpsim.trace import TraceBuilder, validate

    b = TraceBuilder(1)
    b.load(0, "ds_load_b32", 4 * np.arange(32) + 60000)
    trace = b.build(check=False)
    assert validate(trace, 65536) is trace
    # A larger LDS cannot make it invalid; a smaller one is checked again and can.
    assert validate(trace, 327680) is trace
    with pytest.raises(TraceError, match="outside"):
        validate(trace, 32768)


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    lds_bytes=st.sampled_from([4096, 327680]),
    bad=st.sampled_from(["none", "negative", "misaligned", "outside", "control"]),
    op=st.sampled_from(["ds_load_b128", "ds_store_b32", "ds_load_u8", "ds_load_2addr_b64", None]),
)
def test_the_block_screen_finds_what_the_lane_check_finds(seed, lds_bytes, bad, op):
    # a valid random trace (one LDS op, so that the screen passes whole blocks, or all) with one
    # lane made bad (or none): validate with the whole-block screen (_clean) reports what the
    # lane-by-lane check alone reports
    rng = np.random.default_rng(seed)
    t = random_trace(rng, num_warps=2, lds_bytes=lds_bytes, ops=[op] if op else None)
    addr, lds = t.addr.copy(), t.lds_mask()
    rows = np.flatnonzero(~lds if bad == "control" else lds & (addr >= 0).any(axis=1))
    if bad != "none" and rows.size:
        row = int(rng.choice(rows))
        lane = int(rng.choice(np.flatnonzero(addr[row] >= 0))) if bad != "control" else 0
        code = int(t.op[row])
        width = _validate.OP_ACCESS_BYTES[code] + t.arg[row] * (_validate.OP_ADDRESSES[code] == 2)
        beyond = lds_bytes - int(width) + int(_validate.OP_ALIGNMENT[code])  # aligned, outside
        addr[row, lane] = {
            "negative": -5,
            "misaligned": addr[row, lane] + 2,
            "outside": beyond,
        }.get(bad, 0)

    def message(screen):
        with pytest.MonkeyPatch.context() as m:
            if not screen:
                m.setattr(_validate, "_clean", lambda *a: False)
            try:  # a new trace each time: a trace found valid is not checked again
                validate(Trace(t.warp, t.op, t.arg, addr, t.labels, t.num_warps), lds_bytes)
            except TraceError as err:
                return str(err)
            return None

    assert message(True) == message(False)


def test_the_fast_engine_checks_with_the_same_errors():
    from wgpsim.engine import simulate

    good = row_trace("ds_load_b128", addr=np.arange(LANES) * 16)
    assert simulate(good, engine="fast").passes == 2
    bad = row_trace("ds_load_b128", addr=np.arange(LANES) * 16 + 2)
    with pytest.raises(TraceError) as plain:
        numpy_validate(bad)
    for engine in ("fast", "auto"):
        with pytest.raises(TraceError) as compiled:
            simulate(bad, engine=engine)
        assert str(compiled.value) == str(plain.value)
