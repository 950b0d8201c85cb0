"""Trace files: JSONL and Parquet round trips, the base/stride form, hand-written files."""

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.errors import TraceError
from wgpsim.trace import (
    OPS,
    Trace,
    TraceBuilder,
    random_trace,
    read_jsonl,
    read_parquet,
    read_trace,
    write_jsonl,
    write_parquet,
    write_trace,
)

LANES = 32
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "traces"


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line and line[0] != "#"]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), suffix=st.sampled_from([".jsonl", ".parquet"]))
def test_random_traces_round_trip_exactly(tmp_path_factory, seed, suffix):
    trace = random_trace(np.random.default_rng(seed))
    path = tmp_path_factory.mktemp("rt") / f"t{suffix}"
    write_trace(trace, path)
    assert read_trace(path) == trace


def test_empty_and_warpless_traces_round_trip(tmp_path):
    empty = TraceBuilder(3).build()
    for suffix in (".jsonl", ".parquet"):
        write_trace(empty, tmp_path / f"e{suffix}")
        back = read_trace(tmp_path / f"e{suffix}")
        assert back == empty and back.num_warps == 3


def test_unused_labels_and_label_order_survive(tmp_path):
    b = TraceBuilder(1)
    b.clock(0, "b")
    b.clock(0, "a")
    t = b.build()
    t = Trace(t.warp, t.op, t.arg, t.addr, ("b", "a", "unused"), 1)
    for suffix in (".jsonl", ".parquet"):
        write_trace(t, tmp_path / f"l{suffix}")
        assert read_trace(tmp_path / f"l{suffix}").labels == ("b", "a", "unused")


def test_jsonl_uses_base_stride_only_for_full_progressions(tmp_path):
    b = TraceBuilder(1)
    b.load(0, "ds_load_b128", np.arange(LANES) * 16 + 1024)  # progression
    b.load(0, "ds_load_b32", np.full(LANES, 64))  # stride 0: a broadcast
    partial = list(np.arange(LANES) * 4)
    partial[31] = None
    b.load(0, "ds_load_b32", partial)  # an inactive lane: the list form
    scattered = np.arange(LANES) * 4
    scattered[[0, 1]] = scattered[[1, 0]]
    b.load(0, "ds_load_b32", scattered)
    t = b.build()
    path = write_jsonl(t, tmp_path / "t.jsonl")
    addrs = [r["addr"] for r in records(path) if "addr" in r]
    assert addrs[0] == {"base": 1024, "stride": 16}
    assert addrs[1] == {"base": 64, "stride": 0}
    assert addrs[2] == [4 * i for i in range(31)] + [None]
    assert addrs[3] == scattered.tolist()
    assert read_jsonl(path) == t


def test_base_stride_reads_as_lane_addresses(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"warp": 0, "op": "ds_load_b64", "addr": {"base": 256, "stride": 24}}\n')
    t = read_jsonl(path)
    assert t.addr[0].tolist() == [256 + lane * 24 for lane in range(LANES)]


def test_jsonl_writes_every_warp_barrier_compactly(tmp_path):
    b = TraceBuilder(3)
    b.barrier([0, 2])
    b.barrier()  # all warps, in warp order: one line
    b.barrier([2, 1, 0])  # out of order: one line per warp
    b.barrier([0, 1])
    b.barrier([2])  # with the previous: warps 0, 1, 2 in order, one line again
    b.barrier([1])
    t = b.build()
    barriers = [
        r for r in records(write_jsonl(t, tmp_path / "t.jsonl")) if r.get("op") == "barrier"
    ]
    assert [r.get("warp") for r in barriers] == [0, 2, None, 2, 1, 0, None, 1]
    assert read_jsonl(tmp_path / "t.jsonl") == t


def test_jsonl_header_and_comments(tmp_path):
    path = write_jsonl(TraceBuilder(5).build(), tmp_path / "t.jsonl")
    lines = path.read_text().splitlines()
    assert lines[0].startswith("#")
    assert json.loads(lines[1]) == {"num_warps": 5, "labels": []}


def test_hand_written_file_without_header(tmp_path):
    path = tmp_path / "hand.jsonl"
    path.write_text(
        "# comment\n\n"
        '{"op": "barrier"}\n'
        '{"warp": 2, "op": "clock", "label": "start"}\n'
        '   \n'
        '{"warp": 2, "op": "ds_load_u8", "addr": [0, 1, 2, null, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]}\n'
        '{"warp": 1, "op": "delay", "cycles": 10}\n'
        '{"op": "barrier"}\n'
    )  # fmt: skip
    t = read_trace(path)
    assert t.num_warps == 3  # largest warp + 1
    assert [OPS[c] for c in t.op[:3]] == ["barrier"] * 3 and t.warp[:3].tolist() == [0, 1, 2]
    assert t.addr[4, 3] == -1 and t.lds_bytes() == 31
    assert t.labels == ("start",)


def test_parquet_schema(tmp_path):
    t = random_trace(np.random.default_rng(1), num_warps=3)
    path = write_parquet(t, tmp_path / "t.parquet")
    table = pq.read_table(path)
    assert table.column_names == ["warp", "op", "arg", "addr"]
    assert [f.nullable for f in table.schema] == [False] * 4
    assert table.schema.field("addr").type == pa.binary(4 * LANES)
    lanes = np.frombuffer(b"".join(table.column("addr").to_pylist()), "<i4")
    assert np.array_equal(lanes.reshape(-1, LANES), t.addr)
    assert table.column("op").to_pylist() == [OPS[c] for c in t.op]
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(3)
    assert pq.ParquetFile(path).metadata.num_row_groups == 1
    assert chunk.compression == "LZ4" and not chunk.has_dictionary_page
    meta = table.schema.metadata
    assert meta[b"wgpsim.num_warps"] == b"3"
    assert json.loads(meta[b"wgpsim.labels"]) == list(t.labels)


def test_parquet_errors(tmp_path):
    t = random_trace(np.random.default_rng(2), num_warps=2)
    table = pq.read_table(write_parquet(t, tmp_path / "t.parquet"))
    pq.write_table(table.drop_columns(["arg"]), tmp_path / "no_arg.parquet")
    with pytest.raises(
        TraceError, match=r"no_arg.parquet: column 'arg' missing \(expected warp, op, arg, addr\)"
    ):
        read_parquet(tmp_path / "no_arg.parquet")
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(TraceError, match=r"junk.parquet: not a readable Parquet file"):
        read_parquet(tmp_path / "junk.parquet")


def test_parquet_reader_validates_with_row(tmp_path):
    b = TraceBuilder(1)
    b.delay(0, 1)
    b.load(0, "ds_load_b128", np.arange(LANES) * 16 + 65536)
    path = write_parquet(b.build(), tmp_path / "t.parquet")
    with pytest.raises(
        TraceError,
        match=r"t.parquet: row 1 \(warp 0, ds_load_b128\): field 'addr': .*outside the LDS",
    ):
        read_parquet(path, lds_bytes=65536)


def test_unknown_suffix(tmp_path):
    with pytest.raises(
        TraceError, match=r"t.csv: unknown trace format '.csv' \(valid: .jsonl, .parquet\)"
    ):
        read_trace(tmp_path / "t.csv")
    with pytest.raises(TraceError, match=r"unknown trace format"):
        write_trace(TraceBuilder(1).build(), tmp_path / "t.txt")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_writes_are_atomic(tmp_path, suffix, monkeypatch):
    path = tmp_path / f"t{suffix}"
    good = random_trace(np.random.default_rng(3))
    write_trace(good, path)

    class Boom(RuntimeError):
        pass

    def boom(*args, **kwargs):
        raise Boom

    import pyarrow.parquet as pq

    import wgpsim.trace.io as trace_io

    monkeypatch.setattr(trace_io, "_jsonl_lines", boom)
    monkeypatch.setattr(pq, "write_table", boom)  # trace.io imports pyarrow when it writes
    with pytest.raises(Boom):
        write_trace(random_trace(np.random.default_rng(4)), path)
    monkeypatch.undo()
    assert read_trace(path) == good  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left behind


@pytest.mark.parametrize(
    "name", ["two_pairs_conflict", "two_pairs_separate", "bank_conflict", "wave64_bank_conflict"]
)
def test_example_traces_load_and_round_trip(tmp_path, name):
    t = read_trace(EXAMPLES / f"{name}.jsonl")
    assert t.lds_bytes() > 0
    for suffix in (".jsonl", ".parquet"):
        assert read_trace(write_trace(t, tmp_path / f"{name}{suffix}")) == t


def test_two_pairs_examples_differ_only_in_the_partition_of_warp_1():
    conflict = read_trace(EXAMPLES / "two_pairs_conflict.jsonl")
    separate = read_trace(EXAMPLES / "two_pairs_separate.jsonl")
    lds = conflict.lds_mask()
    partition = 1 << 16  # the seed's 64 KiB partitions
    for t, warp1_partition in ((conflict, 0), (separate, 1)):
        assert set((t.addr[lds & (t.warp == 0)] // partition).ravel().tolist()) == {0}
        assert set((t.addr[lds & (t.warp == 1)] // partition).ravel().tolist()) == {warp1_partition}
    assert np.array_equal(conflict.op, separate.op) and np.array_equal(conflict.warp, separate.warp)


def test_parquet_with_plain_string_ops_and_null_lanes(tmp_path):
    # a Parquet file written by another tool: op as plain strings, inactive lanes as nulls
    rows = [None] * 31 + [64]
    table = pa.table(
        {
            "warp": pa.array([0, 0], pa.int32()),
            "op": pa.array(["ds_load_b32", "wait_ds"]),
            "arg": pa.array([0, 0], pa.int64()),
            "addr": pa.array([rows, [None] * 32], pa.list_(pa.int32(), 32)),
        }
    )
    pq.write_table(table, tmp_path / "other.parquet")
    t = read_parquet(tmp_path / "other.parquet")
    assert t.num_warps == 1 and t.labels == ()
    assert [OPS[c] for c in t.op] == ["ds_load_b32", "wait_ds"]
    assert t.addr[0].tolist() == [-1] * 31 + [64] and (t.addr[1] == -1).all()
    bad = table.set_column(1, "op", pa.array(["ds_load_b32", "nop"]))
    pq.write_table(bad, tmp_path / "bad.parquet")
    with pytest.raises(
        TraceError, match=r"bad.parquet: row 1: field 'op': unknown op 'nop' \(valid: ds_load_b32,"
    ):
        read_parquet(tmp_path / "bad.parquet")


@pytest.mark.parametrize(("op", "field"), [("wait_ds", "n"), ("delay", "cycles")])
def test_jsonl_operands_beyond_int64_are_refused(tmp_path, op, field):
    path = tmp_path / "big.jsonl"
    path.write_text(json.dumps({"warp": 0, "op": op, field: 2**63}) + "\n")
    with pytest.raises(TraceError, match=rf"big.jsonl:1: field '{field}': {2**63} is too large"):
        read_jsonl(path)
    path.write_text(json.dumps({"warp": 0, "op": op, field: 2**63 - 1}) + "\n")
    assert read_jsonl(path, check=False).arg.tolist() == [2**63 - 1]
    if op == "delay":  # read, but no replay may count that many cycles (validate's bound)
        with pytest.raises(TraceError, match=r"big.jsonl:1 \(warp 0, delay\): .*valid: at most"):
            read_jsonl(path)
    else:
        assert read_jsonl(path).arg.tolist() == [2**63 - 1]


def test_unreadable_trace_paths_are_trace_errors(tmp_path):
    (tmp_path / "dir.jsonl").mkdir()
    (tmp_path / "dir.parquet").mkdir()
    for name in ("dir.jsonl", "dir.parquet"):
        with pytest.raises(TraceError, match=rf"{name}: is a directory, expected a trace file"):
            read_trace(tmp_path / name)
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(b'{"op": "barrier"}\n\xff\xfe\x00\x81\n')
    with pytest.raises(TraceError, match=r"bin.jsonl: not UTF-8 text"):
        read_trace(binary)


def _plain_table():
    return pa.table(
        {
            "warp": pa.array([0, 1], pa.int32()),
            "op": pa.array(["ds_load_b32", "wait_ds"]),
            "arg": pa.array([0, 0], pa.int64()),
            "addr": pa.array([list(range(0, 128, 4)), [None] * 32], pa.list_(pa.int32(), 32)),
        }
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda t: t.set_column(0, "warp", pa.array(["0", "1"])),
            r"field 'warp': expected an integer column, got string",
        ),
        (
            lambda t: t.set_column(0, "warp", pa.array([0, None], pa.int32())),
            r"row 1: field 'warp' is null",
        ),
        (
            lambda t: t.set_column(2, "arg", pa.array([None, 0], pa.int64())),
            r"row 0: field 'arg' is null",
        ),
        (
            lambda t: t.set_column(1, "op", pa.array(["wait_ds", None])),
            r"row 1: field 'op' is null",
        ),
        (
            lambda t: t.set_column(1, "op", pa.array([1, 2], pa.int16())),
            r"field 'op': expected op names \(strings\), got int16",
        ),
        (
            lambda t: t.set_column(
                3,
                "addr",
                pa.array(
                    [[2**40 + 16 * lane for lane in range(32)], [-1] * 32], pa.list_(pa.int64(), 32)
                ),
            ),
            r"field 'addr': value 10995116\d+ does not fit int32",
        ),
        (
            lambda t: t.replace_schema_metadata({"wgpsim.num_warps": "two"}),
            r"metadata 'wgpsim.num_warps': 'two', expected an integer in 1\.\.",
        ),
        (
            lambda t: t.replace_schema_metadata({"wgpsim.num_warps": "0"}),
            r"metadata 'wgpsim.num_warps': '0'",
        ),
        (
            lambda t: t.replace_schema_metadata({"wgpsim.labels": "{not json"}),
            r"metadata 'wgpsim.labels': .*expected a JSON list of clock label strings",
        ),
        (
            lambda t: t.replace_schema_metadata({"wgpsim.labels": "[1, 2]"}),
            r"metadata 'wgpsim.labels'",
        ),
    ],
)
def test_parquet_columns_and_metadata_are_checked(tmp_path, change, message):
    pq.write_table(_plain_table(), tmp_path / "good.parquet")
    assert read_parquet(tmp_path / "good.parquet").num_warps == 2
    pq.write_table(change(_plain_table()), tmp_path / "bad.parquet")
    with pytest.raises(TraceError, match=rf"^bad.parquet: {message}"):
        read_parquet(tmp_path / "bad.parquet")


def _list_table(t: Trace) -> pa.Table:
    """``t`` as the format before issue 18 wrote it: ``addr`` a fixed_size_list<int32>[32]."""
    return pa.table(
        {
            "warp": pa.array(t.warp, pa.int32()),
            "op": pa.DictionaryArray.from_arrays(pa.array(t.op, pa.int16()), pa.array(OPS)),
            "arg": pa.array(t.arg, pa.int64()),
            "addr": pa.FixedSizeListArray.from_arrays(pa.array(t.addr.ravel()), t.lanes),
        }
    ).replace_schema_metadata(
        {"wgpsim.num_warps": str(t.num_warps), "wgpsim.labels": json.dumps(list(t.labels))}
    )


def test_files_in_the_format_before_still_read(tmp_path):
    t = random_trace(np.random.default_rng(5), num_warps=3)
    pq.write_table(_list_table(t), tmp_path / "old.parquet", row_group_size=7)
    assert read_parquet(tmp_path / "old.parquet") == t


def test_several_row_groups_read_as_one_trace(tmp_path):
    t = random_trace(np.random.default_rng(6), num_warps=4)
    table = pq.read_table(write_parquet(t, tmp_path / "one.parquet"))
    pq.write_table(table, tmp_path / "groups.parquet", row_group_size=5)
    assert pq.ParquetFile(tmp_path / "groups.parquet").metadata.num_row_groups > 2
    assert read_parquet(tmp_path / "groups.parquet") == t


def _binary_table(rows: int = 2) -> pa.Table:
    addr = np.full((rows, LANES), -1, dtype="<i4")
    addr[0] = np.arange(LANES) * 4
    return pa.table(
        {
            "warp": pa.array(np.arange(rows) % 2, pa.int32()),
            "op": pa.array(["ds_load_b32"] + ["wait_ds"] * (rows - 1)).dictionary_encode(),
            "arg": pa.array([0] * rows, pa.int64()),
            "addr": pa.array([r.tobytes() for r in addr], pa.binary(4 * LANES)),
        }
    )


@pytest.mark.parametrize("group_rows", [None, 1])
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda t: t.set_column(0, "warp", pa.array([0, None], pa.int32())),
            r"row 1: field 'warp' is null",
        ),
        (
            lambda t: t.set_column(0, "warp", pa.array([0, 2**40], pa.int64())),
            r"(row 1: field 'warp': 1099511627776 is too large \(at most 65535\)"
            r"|field 'warp': value 1099511627776 does not fit int32)",  # one row group | several
        ),
        (
            lambda t: t.set_column(1, "op", pa.array(["wait_ds", "nop"]).dictionary_encode()),
            r"row 1: field 'op': unknown op 'nop'",
        ),
        (
            lambda t: t.set_column(3, "addr", pa.array([b"\0" * 128, None], pa.binary(128))),
            r"row 1: field 'addr' is null",
        ),
        (
            lambda t: t.set_column(3, "addr", pa.array([b"\0" * 64] * 2, pa.binary(64))),
            r"field 'addr': expected fixed_size_binary\[128\] or fixed_size_binary\[256\] "
            r"\(32 or 64 little-endian int32 lane",
        ),
    ],
)
def test_parquet_128_byte_rows_are_checked(tmp_path, change, message, group_rows):
    pq.write_table(_binary_table(), tmp_path / "good.parquet", row_group_size=group_rows)
    assert read_parquet(tmp_path / "good.parquet").addr[0].tolist() == list(range(0, 128, 4))
    pq.write_table(change(_binary_table()), tmp_path / "bad.parquet", row_group_size=group_rows)
    with pytest.raises(TraceError, match=rf"^bad.parquet: {message}"):
        read_parquet(tmp_path / "bad.parquet")


def _wave64_trace() -> Trace:
    """Two warps of 64 lanes: an affine b128 load, a scattered b32 store with an inactive lane
    beyond lane 31, a 2addr load, barriers and clocks."""
    b = TraceBuilder(2, lanes=64)
    b.barrier()
    b.clock(0, "start")
    b.load(0, "ds_load_b128", 16 * np.arange(64) + 4096)
    scattered = [None if lane == 40 else 4 * ((7 * lane) % 64) for lane in range(64)]
    b.store(1, "ds_store_b32", scattered)
    b.load(1, "ds_load_2addr_b64", 8 * np.arange(64), distance=1024)
    b.wait_ds(0, 0)
    b.clock(0, "end")
    return b.build()


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_wave64_traces_round_trip(tmp_path, suffix):
    t = _wave64_trace()
    back = read_trace(write_trace(t, tmp_path / f"t{suffix}"))
    assert back == t and back.lanes == 64
    store = back.addr[back.op == OPS.index("ds_store_b32")][0]
    assert store[40] == -1 and store[41] == 4 * ((7 * 41) % 64)


def test_wave64_jsonl_header_and_wave32_files_unchanged(tmp_path):
    """The header says "lanes": 64 for a wave64 trace; a wave32 file has no such field (the
    files written before read and write alike)."""
    path = write_jsonl(_wave64_trace(), tmp_path / "t.jsonl")
    assert records(path)[0] == {"num_warps": 2, "labels": ["start", "end"], "lanes": 64}
    assert records(path)[3]["addr"] == {"base": 4096, "stride": 16}
    b = TraceBuilder(1)
    b.load(0, "ds_load_b64", 8 * np.arange(32))
    assert "lanes" not in records(write_jsonl(b.build(), tmp_path / "w32.jsonl"))[0]


def test_wave64_parquet_columns(tmp_path):
    """256-byte addr values (64 little-endian int32), and the list column of 64 lanes reads
    the same."""
    t = _wave64_trace()
    table = pq.read_table(write_parquet(t, tmp_path / "t.parquet"))
    assert table.schema.field("addr").type == pa.binary(256)
    pq.write_table(_list_table(t), tmp_path / "list.parquet")
    assert read_parquet(tmp_path / "list.parquet") == t


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '{"num_warps": 1, "lanes": 48}',
            r"t.jsonl:1: field 'lanes': expected 32 or 64, got 48",
        ),
        (
            '{"warp": 0, "op": "ds_load_b32", "addr": [' + ", ".join(["0"] * 64) + "]}",
            r"t.jsonl:1: field 'addr': expected 32 lane addresses, got 64 \(a wave64 trace says",
        ),
        (
            '{"num_warps": 1, "lanes": 64}\n{"warp": 0, "op": "ds_load_b32", "addr": ['
            + ", ".join(["0"] * 32)
            + "]}",
            r"t.jsonl:2: field 'addr': expected 64 lane addresses, got 32",
        ),
    ],
)
def test_wave64_jsonl_errors(tmp_path, text, message):
    path = tmp_path / "t.jsonl"
    path.write_text(text + "\n")
    with pytest.raises(TraceError, match=message):
        read_jsonl(path)
