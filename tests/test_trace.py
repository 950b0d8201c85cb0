"""Trace (columns, queries, combining) and TraceBuilder."""

import numpy as np
import pytest

from wgpsim.errors import TraceError
from wgpsim.trace import OPS, Trace, TraceBuilder, op_code
from wgpsim.trace.trace import affine_rows

LANES = 32
B128 = op_code("ds_load_b128")


def lanes(base, stride):
    return base + np.arange(LANES) * stride


def small_builder():
    b = TraceBuilder(2)
    b.barrier()
    b.clock(0, "start")
    b.load(0, "ds_load_b128", lanes(0, 16))
    b.load(1, "ds_load_tr16_b128", lanes(512, 16))
    b.store(1, "ds_store_b32", [4 * i if i % 2 else None for i in range(LANES)])
    b.wait_ds(0, 0)
    b.delay(1, 7)
    b.clock(0, "end")
    b.clock(1, "start")
    return b


def test_builder_fills_the_columns():
    t = small_builder().build()
    assert t.num_warps == 2
    assert t.labels == ("start", "end")
    assert t.warp.dtype == np.int32 and t.op.dtype == np.int16
    assert t.arg.dtype == np.int64 and t.addr.dtype == np.int32 and t.addr.shape == (10, LANES)
    assert t.warp.tolist() == [0, 1, 0, 0, 1, 1, 0, 1, 0, 1]
    assert [OPS[c] for c in t.op] == [
        "barrier", "barrier", "clock", "ds_load_b128", "ds_load_tr16_b128", "ds_store_b32",
        "wait_ds", "delay", "clock", "clock",
    ]  # fmt: skip
    assert t.arg.tolist() == [0, 0, 0, 0, 0, 0, 0, 7, 1, 0]
    assert np.array_equal(t.addr[3], lanes(0, 16))
    assert t.addr[5].tolist() == [4 * i if i % 2 else -1 for i in range(LANES)]
    control = np.isin(t.op, [op_code(n) for n in ("barrier", "clock", "wait_ds", "delay")])
    assert (t.addr[control] == -1).all()


def test_queries():
    t = small_builder().build()
    assert len(t) == 10
    assert t.ops_of(1).tolist() == [1, 4, 5, 7, 9]
    assert t.for_warp(1) == t.take(t.ops_of(1))
    assert set(t.for_warp(1).warp.tolist()) == {1}
    assert t.count_by_op() == {
        "ds_load_b128": 1, "ds_load_tr16_b128": 1, "ds_store_b32": 1,
        "wait_ds": 1, "barrier": 2, "clock": 3, "delay": 1,
    }  # fmt: skip
    # two full 16-byte loads and a store of 16 active 4-byte lanes
    assert t.lds_bytes() == 2 * 32 * 16 + 16 * 4
    assert t.active_lanes().tolist() == [0, 0, 0, 32, 32, 16, 0, 0, 0, 0]
    assert t.clock_label(8) == "end"


def test_frame_and_text():
    t = small_builder().build()
    f = t.to_frame()
    assert list(f.columns) == ["warp", "op", "arg", "label", "active", "addr"]
    assert f.loc[3, "addr"] == "0 + 16*lane"
    assert f.loc[5, "addr"].startswith("[None, 4, None, 12")
    assert f.label.tolist()[8] == "end" and f.label.tolist()[3] == ""
    wide = t.to_frame(lanes=True)
    assert wide.loc[4, "lane31"] == 512 + 31 * 16
    assert repr(t).startswith("Trace(2 warps, 10 ops: ds_load_b128 1,")
    assert "ds_store_b32" in t.describe() and "start, end" in t.describe()


def test_equality_is_exact():
    a, b = small_builder().build(), small_builder().build()
    assert a == b
    c = small_builder()
    c.delay(0, 0)
    assert a != c.build()
    assert a != Trace(a.warp, a.op, a.arg, a.addr, ("start", "END"), 2)
    assert a != Trace(a.warp, a.op, a.arg, a.addr, a.labels, 3)


def test_trace_is_read_only():
    t = small_builder().build()
    with pytest.raises(ValueError):
        t.addr[0, 0] = 5
    with pytest.raises(AttributeError):
        t.num_warps = 3


def test_trace_does_not_freeze_the_callers_arrays():
    addr = np.full((1, LANES), -1, dtype=np.int32)
    Trace(np.zeros(1, np.int32), np.full(1, op_code("barrier"), np.int16), np.zeros(1, int), addr)
    addr[0, 0] = 3  # still writeable


def test_trace_columns_must_be_integers_of_matching_length():
    barrier = np.full(1, op_code("barrier"))
    with pytest.raises(TraceError, match=r"field 'arg': expected integers, got dtype float64"):
        Trace(np.zeros(1, int), barrier, np.zeros(1), np.full((1, LANES), -1))
    with pytest.raises(TraceError, match=r"field 'addr': expected shape \[n, 32\], got \[1, 16\]"):
        Trace(np.zeros(1, int), barrier, np.zeros(1, int), np.full((1, 16), -1))
    with pytest.raises(TraceError, match=r"columns differ in length: warp 2, op 1"):
        Trace(np.zeros(2, int), barrier, np.zeros(1, int), np.full((1, LANES), -1))


def test_concat_appends_per_warp_and_merges_labels():
    x = TraceBuilder(1)
    x.clock(0, "end")
    y = TraceBuilder(2)
    y.clock(1, "start")
    y.clock(0, "end")
    t = x.build().concat(y.build())
    assert t.num_warps == 2
    assert t.labels == ("end", "start")
    assert [t.clock_label(r) for r in range(3)] == ["end", "start", "end"]
    assert Trace.concat(x.build(), y.build()) == t


def test_bulk_loads_interleave_with_single_ops_in_order():
    b = TraceBuilder(1)
    b.delay(0, 1)
    b.loads(0, "ds_load_b64", np.stack([lanes(0, 8), lanes(256, 8)]))
    b.delay(0, 2)
    t = b.build()
    assert [OPS[c] for c in t.op] == ["delay", "ds_load_b64", "ds_load_b64", "delay"]
    assert t.addr[2, 0] == 256


def test_builder_errors_name_what_is_wrong():
    b = TraceBuilder(2)
    with pytest.raises(TraceError, match=r"field 'addr': expected 32 lane addresses, got 31"):
        b.load(0, "ds_load_b32", list(range(31)))
    with pytest.raises(TraceError, match=r"warp 2: expected 0..1"):
        b.load(2, "ds_load_b32", lanes(0, 4))
    with pytest.raises(TraceError, match=r"'ds_store_b32' is a store, not a load \(use .store\(\)"):
        b.load(0, "ds_store_b32", lanes(0, 4))
    with pytest.raises(TraceError, match=r"lane 0 address -5 is out of range"):
        b.load(0, "ds_load_b32", lanes(-5, 0))
    with pytest.raises(TraceError, match=r"expected 32 integers or None"):
        b.load(0, "ds_load_b32", ["x"] * 32)
    with pytest.raises(TraceError, match=r"unknown LDS instruction 'ds_load_b256'"):
        b.loads(0, "ds_load_b256", np.zeros((1, 32), dtype=int))


def test_build_validates():
    b = TraceBuilder(2)
    b.barrier([0])
    with pytest.raises(TraceError, match=r"warp 1 reaches only 0 barrier"):
        b.build()
    assert len(b.build(check=False)) == 1


def test_affine_rows():
    addr = np.stack([lanes(0, 16), lanes(64, 0), lanes(100, -2), np.r_[lanes(0, 4)[:31], 7]])
    mask, base, stride = affine_rows(addr)
    assert mask.tolist() == [True, True, True, False]
    assert base[:3].tolist() == [0, 64, 100] and stride[:3].tolist() == [16, 0, -2]


def test_memory_of_a_million_instruction_trace():
    n, warps = 1_000_000, 4
    per_warp = n // warps
    blocks = (np.arange(per_warp)[:, None] * 512 + lanes(0, 16)) % (1 << 16)
    b = TraceBuilder(warps)
    for w in range(warps):
        b.loads(w, "ds_load_b128", blocks)
    t = b.build()
    assert len(t) == n
    assert t.addr.nbytes == n * LANES * 4  # 128 B per row
    total = t.addr.nbytes + t.warp.nbytes + t.op.nbytes + t.arg.nbytes
    assert total == n * (128 + 4 + 2 + 8)
    assert total < 200 * 2**20
    assert t.lds_bytes() == n * 512


@pytest.mark.parametrize(
    ("column", "value"),
    [("warp", 2**32), ("warp", -(2**31) - 1), ("op", 2**15), ("addr", 2**40)],
)
def test_out_of_range_column_values_are_refused_not_wrapped(column, value):
    cols = {"warp": [0], "op": [0], "arg": [0], "addr": np.full((1, 32), -1, dtype=np.int64)}
    cols[column] = np.full_like(np.asarray(cols[column], dtype=np.int64), value)
    with pytest.raises(TraceError, match=rf"field '{column}': value {value} does not fit"):
        Trace(**cols)


def test_columns_already_of_the_right_dtype_are_kept():
    t = Trace(np.array([5], np.int32), np.array([0], np.int16), [0], np.zeros((1, 32), np.int32))
    assert t.warp.tolist() == [5] and t.addr.dtype == np.int32


def test_rows_builds_what_one_call_per_row_builds():
    from wgpsim.trace.instructions import CLOCK, TDM, WAIT_DS

    one = TraceBuilder(2)
    one.load(1, "ds_load_b128", lanes(0, 16))
    one.clock(1, "start")
    one.lds(1, "ds_load_2addr_b64", lanes(64, 8), 256)
    one.tdm(1, np.stack([lanes(0, 8), lanes(256, 8)]))
    one.wait_ds(1, 2)
    one.delay(0, 7)
    many = TraceBuilder(2)
    none = np.full(LANES, -1)
    many.rows(
        1,
        [B128, CLOCK, op_code("ds_load_2addr_b64"), TDM, TDM, WAIT_DS],
        [0, many.label_index("start"), 256, 0, 1, 2],
        [lanes(0, 16), none, lanes(64, 8), lanes(0, 8), lanes(256, 8), none],
    )
    many.delay(0, 7)
    assert many.build() == one.build()


def test_rows_names_the_op_of_a_bad_address_and_refuses_bad_columns():
    b = TraceBuilder(1)
    bad = lanes(0, 16)
    bad[3] = -5
    with pytest.raises(TraceError, match="ds_load_b128: field 'addr': lane 3 address -5"):
        b.rows(0, [B128], [0], [bad])
    with pytest.raises(TraceError, match="op code"):
        b.rows(0, [len(OPS)], [0], [lanes(0, 16)])
    with pytest.raises(TraceError, match="1 ops, 2 args"):
        b.rows(0, [B128], [0, 0], [lanes(0, 16)])
    with pytest.raises(TraceError, match="expected 32 lane addresses"):
        b.rows(0, [B128], [0], [np.arange(16)])
