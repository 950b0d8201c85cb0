"""Fuzz trace files through ``wgpsim replay``: JSON Lines written by hand (edited records, odd
values, odd text) and Parquet files (damaged bytes, odd schemas, odd values)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_runner import fuzz
from conftest import examples
from hypothesis import example, given
from hypothesis import strategies as st
from strategies_fuzz import SCALARS, VALUES

from wgpsim.trace.generate import streaming_trace
from wgpsim.trace.io import write_trace

OPS = ["ds_load_b128", "ds_load_b64", "ds_load_b32", "ds_load_tr16_b128", "ds_store_b128",
       "wait_ds", "barrier", "clock", "delay", "nop", ""]  # fmt: skip
FIELDS = ["warp", "op", "addr", "n", "cycles", "label", "num_warps", "labels", "distance", "x"]


@pytest.fixture(scope="module")
def workdir():
    path = Path(tempfile.mkdtemp(prefix="wgpsim-fuzz-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


ADDR = st.one_of(
    st.builds(lambda b, s: {"base": b, "stride": s}, st.integers(-4, 1 << 19),
              st.sampled_from([0, 4, 8, 16, -16, 3])),
    st.lists(st.one_of(st.none(), st.integers(-2, 1 << 19).map(lambda a: a & ~15)), min_size=0,
             max_size=33),
    VALUES,
)  # fmt: skip
RECORDS = st.one_of(
    st.fixed_dictionaries(
        {"warp": st.integers(-1, 8) | SCALARS, "op": st.sampled_from(OPS)},
        optional={"addr": ADDR, "n": st.integers(-1, 70) | SCALARS,
                  "cycles": st.integers(-1, 1 << 50) | SCALARS, "label": SCALARS,
                  "distance": st.integers(-8, 2048)},
    ),
    st.fixed_dictionaries({"num_warps": st.integers(-1, 1 << 17) | SCALARS},
                          optional={"labels": VALUES}),
    st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=4),
    VALUES,
)  # fmt: skip
LINES = st.one_of(
    RECORDS.map(lambda r: json.dumps(r, allow_nan=True)),
    st.text(max_size=40),
    st.sampled_from(["# a comment", "", "{", '{"warp": 0, "op": "barrier"', "[" * 3000,
                     '{"warp": 0, "op": "delay", "cycles": ' + "9" * 5000 + "}", "\ufeff{}"]),
)  # fmt: skip


@examples(1500)
@given(st.lists(LINES, min_size=1, max_size=6))
@example(['{"warp": 0, "op": "ds_load_b128", "addr": ' + "[" * 5000 + "]" * 5000 + "}"])
@example(['{"warp": 0, "op": "delay", "cycles": 9223372036854775000}'])
def test_jsonl_traces(workdir, lines):
    path = workdir / "trace.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    fuzz("replay", path, "--json")


GOOD = streaming_trace(2, 6, "ds_load_b128", [0, 8192], 16)


@pytest.fixture(scope="module")
def parquet_bytes(workdir):
    return write_trace(GOOD, workdir / "good.parquet").read_bytes()


@examples(800)
@given(
    st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), max_size=6),
    st.one_of(st.none(), st.integers(0, 4000)),
)
def test_damaged_parquet(workdir, parquet_bytes, flips, cut):
    data = bytearray(parquet_bytes)
    for at, value in flips:
        data[at % len(data)] = value
    path = workdir / "damaged.parquet"
    path.write_bytes(bytes(data[:cut] if cut is not None else data))
    fuzz("replay", path, "--json")


COLUMN_TYPES = [pa.int8(), pa.int32(), pa.int64(), pa.uint64(), pa.float64(), pa.string()]


@st.composite
def parquet_tables(draw) -> pa.Table:
    """A table near the trace schema: some columns missing, retyped, nulled, or odd values."""
    n = draw(st.integers(0, 6))
    columns = {}
    for name in ("warp", "op", "arg", "addr"):
        if draw(st.integers(0, 9)) == 0:
            continue  # missing column
        if name == "op":
            names = draw(st.lists(st.sampled_from(OPS), min_size=n, max_size=n))
            columns[name] = pa.array(names, pa.string()).dictionary_encode()
        elif name == "addr":
            flat = draw(st.lists(st.integers(-2, (1 << 31) - 1) | st.none(), min_size=n * 32,
                                 max_size=n * 32))  # fmt: skip
            kind = draw(st.sampled_from([pa.int32(), pa.int64()]))
            columns[name] = pa.FixedSizeListArray.from_arrays(pa.array(flat, kind), 32)
        else:
            kind = draw(st.sampled_from(COLUMN_TYPES))
            if pa.types.is_string(kind):
                values = draw(st.lists(st.text(max_size=3) | st.none(), min_size=n, max_size=n))
            elif pa.types.is_floating(kind):
                values = draw(st.lists(st.floats() | st.none(), min_size=n, max_size=n))
            else:
                info = np.iinfo(kind.to_pandas_dtype())
                values = draw(st.lists(st.integers(int(info.min), int(info.max)) | st.none(),
                                       min_size=n, max_size=n))  # fmt: skip
            columns[name] = pa.array(values, kind)
    meta = draw(
        st.dictionaries(
            st.sampled_from(["wgpsim.num_warps", "wgpsim.labels", "x"]),
            st.text(max_size=12) | VALUES.map(json.dumps),
            max_size=2,
        )
    )
    return pa.table(columns or {"x": pa.array([], pa.int8())}).replace_schema_metadata(meta)


@examples(250)
@given(parquet_tables())
def test_odd_parquet_tables(workdir, table):
    path = workdir / "odd.parquet"
    pq.write_table(table, path)
    fuzz("replay", path, "--json")
