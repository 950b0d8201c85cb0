"""Parquet trace files: one row per op, for large traces (round-trip exactly).

Columns: ``warp`` int32, ``op`` dictionary<string> (the op name),
``arg`` int64, ``addr`` fixed_size_binary[4 * lanes] (the 32 or 64 lane addresses as
little-endian int32, -1 = inactive lane: 128 bytes for wave32, 256 for wave64), all non-null; the schema metadata holds ``wgpsim.num_warps`` and
``wgpsim.labels`` (JSON). The writer puts the trace in one row group, LZ4-compressed, plain
encoded but for ``op``'s dictionary: reading it is decompressing pages into Arrow buffers that
become the trace's arrays, no copy (``addr`` viewed as int32[rows, lanes]). A nested ``addr``
(``fixed_size_list<int32>[lanes]``, null lanes inactive: the format before) is still read, ten
times slower (Parquet's repetition levels, one per lane, dominate its decoding).

>>> import tempfile, pathlib
>>> from wgpsim.trace.generate import streaming_trace
>>> t = streaming_trace(2, 3, "ds_load_b128", [0, 1536], 16)
>>> with tempfile.TemporaryDirectory() as d:
...     read_parquet(write_parquet(t, pathlib.Path(d) / "t.parquet")) == t
True
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wgpsim.errors import TraceError, shown
from wgpsim.extras import require
from wgpsim.files import atomic_write
from wgpsim.inputs import check_affordable, json_value
from wgpsim.trace.instructions import OPS, WAVE_SIZES, op_code
from wgpsim.trace.trace import Trace
from wgpsim.trace.validate import DEFAULT_LDS_BYTES, validate

if TYPE_CHECKING:  # imported by the Parquet functions, so JSON Lines and `--help` stay light
    import pyarrow as pa
    import pyarrow.parquet as pq

MAX_WARPS = 1 << 16
"""Sanity bound on warp ids in a trace file (a format limit, far above any workgroup)."""


def field_int(
    value, where: str, field: str, minimum: int | None = None, limit: int | None = None
) -> int:
    """``value`` if it is an integer within ``minimum``..``limit``, else a TraceError naming
    ``where`` and ``field``.

    >>> field_int(-1, "t.jsonl:3", "n", 0)
    Traceback (most recent call last):
    ...
    wgpsim.errors.TraceError: t.jsonl:3: field 'n': -1 is negative (expected >= 0)
    """
    if type(value) is not int:
        raise TraceError(f"{where}: field {field!r}: expected an integer, got {shown(value)}")
    if minimum is not None and value < minimum:
        what = "negative" if value < 0 else "too small"
        raise TraceError(f"{where}: field {field!r}: {value} is {what} (expected >= {minimum})")
    if limit is not None and value > limit:
        raise TraceError(f"{where}: field {field!r}: {value} is too large (at most {limit})")
    return value


def write_parquet(trace: Trace, path: str | Path) -> Path:
    """Write ``trace`` as Parquet (schema in the module docstring), atomically: one row group,
    LZ4, plain encoding but for ``op``'s dictionary, so that reading it is a copy of the pages."""
    pa = require("pyarrow", "parquet", "writing Parquet")
    pq = require("pyarrow.parquet", "parquet", "writing Parquet")

    lanes = np.ascontiguousarray(trace.addr, dtype="<i4")
    addr = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(4 * trace.lanes), len(trace), [None, pa.py_buffer(lanes)]
    )
    ops = pa.DictionaryArray.from_arrays(pa.array(trace.op, pa.int16()), pa.array(OPS))
    schema = pa.schema(
        [
            pa.field("warp", pa.int32(), nullable=False),
            pa.field("op", ops.type, nullable=False),
            pa.field("arg", pa.int64(), nullable=False),
            pa.field("addr", addr.type, nullable=False),
        ],
        metadata={
            "wgpsim.num_warps": str(trace.num_warps),
            "wgpsim.labels": json.dumps(list(trace.labels)),
        },
    )
    columns = [pa.array(trace.warp, pa.int32()), ops, pa.array(trace.arg, pa.int64()), addr]
    table = pa.Table.from_arrays(columns, schema=schema)
    options = {
        "compression": "lz4",
        "use_dictionary": ["op"],
        "write_statistics": ["warp", "op", "arg"],
        "row_group_size": max(len(trace), 1),
    }
    return atomic_write(path, lambda tmp: pq.write_table(table, tmp, **options))


def read_parquet(
    path: str | Path, lds_bytes: int = DEFAULT_LDS_BYTES, *, check: bool = True
) -> Trace:
    """Read a Parquet trace; errors name the file, the row and the field.

    A file in the current format (``addr`` as 128- or 256-byte values) is read a whole row group at a
    time and its columns become the trace's arrays without a copy (with one row group, the
    writer's choice) or with one copy into the trace (several). A file from before 0.x with
    ``addr`` as ``fixed_size_list<int32>[32]`` (or [64]) is read ``_BATCH_ROWS`` rows at a time into
    preallocated arrays, so reading adds little beyond the trace itself.
    """
    pa = require("pyarrow", "parquet", "reading Parquet")
    pq = require("pyarrow.parquet", "parquet", "reading Parquet")

    path = Path(path)
    if path.is_dir():
        raise TraceError(f"{path}: is a directory, expected a trace file")
    try:
        file = pq.ParquetFile(path, buffer_size=_READ_BUFFER, pre_buffer=False)
        schema = file.schema_arrow
        missing = [c for c in _COLUMNS if c not in schema.names]
        if missing:
            raise TraceError(
                f"{path.name}: column {missing[0]!r} missing (expected warp, op, arg, addr)"
            )
        lists, lanes = _check_types(schema, path.name)
        read = _read_batches if lists else _read_row_groups
        warp, codes, arg, addr = read(file, path.name, lanes)
        del file
        pa.default_memory_pool().release_unused()  # Arrow's freed decoding buffers
    except FileNotFoundError:
        raise
    except (OSError, pa.ArrowException, UnicodeDecodeError) as e:  # damaged names, metadata
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TraceError(f"{path.name}: not a readable Parquet file ({reason})") from None
    num_warps, labels = _metadata(schema, warp, path.name)
    try:
        trace = Trace(warp, codes, arg, addr, labels, num_warps)
    except TraceError as err:
        raise TraceError(f"{path.name}: {err}") from None
    if check:
        validate(trace, lds_bytes, source=path.name)
    return trace


_COLUMNS = ("warp", "op", "arg", "addr")
_ROW_BYTES = 4 + 2 + 8
"""Bytes one trace row takes in memory but its lane addresses (warp, op, arg)."""
_READ_BUFFER = 1 << 20
"""Bytes of a column chunk read from the file at a time (pyarrow's default reads a whole
chunk first: a second copy of the trace when it does not compress)."""
_BATCH_ROWS = 8192
"""Rows decoded at a time from a file whose ``addr`` is a list column (1 MiB of addresses)."""


def _check_types(schema: pa.Schema, source: str) -> tuple[bool, int]:
    """The column types a trace needs: integers, op names, 32 or 64 integer lane addresses
    (128- or 256-byte values, or a list column as written before: then True), and the lanes."""
    import pyarrow as pa

    for name in ("warp", "arg"):
        kind = schema.field(name).type
        if not pa.types.is_integer(kind):
            raise TraceError(f"{source}: field {name!r}: expected an integer column, got {kind}")
    kind = schema.field("op").type
    names = kind.value_type if pa.types.is_dictionary(kind) else kind
    if not (pa.types.is_string(names) or pa.types.is_large_string(names)):
        raise TraceError(f"{source}: field 'op': expected op names (strings), got {kind}")
    kind = schema.field("addr").type
    for lanes in WAVE_SIZES:
        if kind == pa.binary(4 * lanes):
            return False, lanes
        if (
            pa.types.is_fixed_size_list(kind)
            and kind.list_size == lanes
            and pa.types.is_integer(kind.value_type)
        ):
            return True, lanes
    raise TraceError(
        f"{source}: field 'addr': expected {pa.binary(128)} or {pa.binary(256)} (32 or 64 "
        f"little-endian int32 lane addresses) or fixed_size_list<int32>[32 or 64], got {kind}"
    )


def _read_row_groups(
    file: pq.ParquetFile, source: str, lanes: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(warp, op codes, arg, addr [rows, lanes]) of a file whose ``addr`` holds 4*lanes-byte
    values,
    a whole row group at a time: one group's columns are returned as they were decoded (numpy
    views of Arrow's buffers), several are copied into preallocated arrays."""
    n = file.metadata.num_rows
    check_affordable(n * (_ROW_BYTES + 4 * lanes), f"{source}: {n:,} rows", TraceError)
    groups = file.metadata.num_row_groups
    if groups == 1:
        return _row_group(file, 0, 0, source, lanes)
    out = (np.empty(n, np.int32), np.empty(n, np.int16), np.empty(n, np.int64))
    out += (np.empty((n, lanes), np.int32),)
    start = 0
    for g in range(groups):
        columns = _row_group(file, g, start, source, lanes)
        end = start + len(columns[0])
        for name, array, values in zip(_COLUMNS, out, columns, strict=True):
            _put(array[start:end], values, name, source)
        start = end
    return out


def _row_group(
    file: pq.ParquetFile, group: int, start: int, source: str, lanes: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The four columns of row group ``group`` (rows from ``start`` on) as numpy arrays that
    share Arrow's buffers (the op codes are the dictionary's indices when its names are
    ``OPS`` in order, as written); integer columns keep the file's width."""
    table = file.read_row_group(group, columns=list(_COLUMNS), use_threads=False)
    columns = {}
    for name in _COLUMNS:
        chunks = table.column(name).chunks
        column = chunks[0] if len(chunks) == 1 else table.column(name).combine_chunks()
        columns[name] = _no_nulls(column, name, start, source)
    warp, arg = (_view(columns[c]) for c in ("warp", "arg"))
    addr = _view(columns["addr"], np.dtype("<i4"), lanes).reshape(-1, lanes)
    return warp, _op_codes(columns["op"], start, source), arg, addr


def _view(column: pa.Array, dtype: np.dtype | None = None, per_row: int = 1) -> np.ndarray:
    """The values of a non-null fixed-width ``column`` (``per_row`` of ``dtype`` a row; an
    integer column's own type if None) as numpy, sharing its Arrow buffer. Not ``to_numpy``:
    pyarrow imports pandas there (40 MB, 0.5 s), and a replay builds no table."""
    import pyarrow as pa

    if dtype is None:
        signed = "i" if pa.types.is_signed_integer(column.type) else "u"
        dtype = np.dtype(f"<{signed}{column.type.bit_width // 8}")
    count, skip = len(column) * per_row, column.offset * per_row * dtype.itemsize
    return np.frombuffer(column.buffers()[1], dtype=dtype, count=count, offset=skip)


def _read_batches(
    file: pq.ParquetFile, source: str, lanes: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(warp int32, op codes int16, arg int64, addr int32 [rows, lanes]) of a file whose ``addr``
    is a list column, batch by batch; null lanes read as -1."""
    n = file.metadata.num_rows
    check_affordable(n * (_ROW_BYTES + 4 * lanes), f"{source}: {n:,} rows", TraceError)
    warp, codes, arg = np.empty(n, np.int32), np.empty(n, np.int16), np.empty(n, np.int64)
    addr = np.empty((n, lanes), dtype=np.int32)
    start = 0
    batches = file.iter_batches(batch_size=_BATCH_ROWS, columns=list(_COLUMNS), use_threads=False)
    for batch in batches:
        end = start + batch.num_rows
        for name, out in (("warp", warp), ("arg", arg)):
            column = _no_nulls(batch.column(name), name, start, source)
            _put(out[start:end], column.to_numpy(zero_copy_only=False), name, source)
        codes[start:end] = _op_codes(batch.column("op"), start, source)
        rows = _no_nulls(
            batch.column("addr"),
            "addr",
            start,
            source,
            f" (expected {lanes} lane addresses; null or -1 for an inactive lane)",
        )
        values = rows.flatten().fill_null(-1).to_numpy(zero_copy_only=False)
        _put(addr[start:end], values.reshape(-1, lanes), "addr", source)
        start = end
    return warp, codes, arg, addr


def _no_nulls(column: pa.Array, name: str, start: int, source: str, hint: str = "") -> pa.Array:
    """``column`` (rows from ``start`` on), refused if a row is null."""
    if column.null_count:
        row = start + int(np.flatnonzero(column.is_null().to_numpy(zero_copy_only=False))[0])
        raise TraceError(f"{source}: row {row}: field {name!r} is null{hint}")
    return column


def _put(out: np.ndarray, values: np.ndarray, name: str, source: str) -> None:
    """``out[...] = values``, refused if a value does not fit ``out``'s dtype."""
    if values.size and values.dtype != out.dtype:
        lo, hi, fits = int(values.min()), int(values.max()), np.iinfo(out.dtype)
        if lo < fits.min or hi > fits.max:
            raise TraceError(
                f"{source}: field {name!r}: value {lo if lo < fits.min else hi} does not fit "
                f"{out.dtype.name} (valid: {fits.min}..{fits.max})"
            )
    out[...] = values


def _op_codes(op: pa.Array, start: int, source: str) -> np.ndarray:
    """Op names (strings, or a dictionary of strings) of rows ``start``... -> op codes."""
    import pyarrow as pa

    if not pa.types.is_dictionary(op.type):
        op = op.dictionary_encode()
    _no_nulls(op, "op", start, source, f" (valid: {', '.join(OPS)})")
    names = op.dictionary.to_pylist()
    indices = _view(op.indices)
    if names == list(OPS[: len(names)]) and indices.dtype == np.int16:
        return indices  # the writer's dictionary, OPS in order: the indices are the op codes
    known = np.array([name in OPS for name in names] or [True])
    if not known[indices].all():  # a dictionary may hold names that no row of this batch uses
        row = int(np.flatnonzero(~known[indices])[0])
        raise TraceError(
            f"{source}: row {start + row}: field 'op': unknown op {names[indices[row]]!r} "
            f"(valid: {', '.join(OPS)})"
        )
    remap = np.array([op_code(n) if n in OPS else 0 for n in names] or [0], dtype=np.int16)
    return remap[indices]


def _metadata(schema: pa.Schema, warp: np.ndarray, source: str) -> tuple[int, tuple[str, ...]]:
    """``wgpsim.num_warps`` and ``wgpsim.labels`` of the schema (defaults when absent)."""
    meta = {
        k.decode(errors="replace"): v.decode(errors="replace")
        for k, v in (schema.metadata or {}).items()
    }
    beyond = np.flatnonzero(warp >= MAX_WARPS)  # as JSON Lines: before any per-warp array
    if len(beyond):
        field_int(int(warp[beyond[0]]), f"{source}: row {int(beyond[0])}", "warp", 0, MAX_WARPS - 1)
    num_warps = max(int(warp.max(initial=-1)) + 1, 1)
    if "wgpsim.num_warps" in meta:
        text = meta["wgpsim.num_warps"]
        try:
            num_warps = int(text)
        except ValueError:
            num_warps = 0
        if not 1 <= num_warps <= MAX_WARPS:
            raise TraceError(
                f"{source}: metadata 'wgpsim.num_warps': {text!r}, expected an integer "
                f"in 1..{MAX_WARPS}"
            )
    labels: object = []
    if "wgpsim.labels" in meta:
        try:
            labels = json_value(meta["wgpsim.labels"], source, TraceError)
        except TraceError:
            labels = None
        if not isinstance(labels, list) or not all(isinstance(s, str) for s in labels):
            raise TraceError(
                f"{source}: metadata 'wgpsim.labels': {meta['wgpsim.labels'][:40]!r}, expected "
                "a JSON list of clock label strings"
            )
    return num_warps, tuple(labels)
