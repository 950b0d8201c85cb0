"""Trace files: JSON Lines written by hand, Parquet for large traces. Both round-trip exactly.

JSON Lines, one op a line (``#`` comments and blank lines are skipped)::

    {"num_warps": 2, "labels": ["start", "end"]}        optional header, first record only
    {"op": "barrier"}                                   every warp (or give "warp")
    {"warp": 0, "op": "clock", "label": "start"}
    {"warp": 0, "op": "ds_load_b128", "addr": {"base": 0, "stride": 16}}
    {"warp": 1, "op": "ds_load_b64", "addr": [0, 8, null, ...32 entries...]}
    {"warp": 0, "op": "wait_ds", "n": 0}
    {"warp": 1, "op": "delay", "cycles": 10}

``addr`` is 32 byte addresses (``null`` = inactive lane) or ``{"base": B, "stride": S}`` (lane l
reads B + l*S). A 2addr form also gives ``"distance": D``: each lane's second access is at its
address + D bytes (``{"warp": 0, "op": "ds_load_2addr_b64", "distance": 512, "addr": ...}``).
A TDM write row (``tensor_load_to_lds``: 32 granules of 8 bytes) gives ``"last": true`` on its
instruction's last row (absent: false); ``{"warp": 0, "op": "wait_tensor", "n": 0}`` waits for
the warp's TDM instructions. Without a header, ``num_warps`` is the largest warp + 1. The writer uses the
base/stride form whenever all lanes are active and equally spaced, and ``{"op": "barrier"}``
for a barrier of every warp in warp order.

Parquet: one row per op, columns ``warp`` int32, ``op`` dictionary<string> (the op name),
``arg`` int64, ``addr`` fixed_size_binary[128] (the 32 lane addresses as little-endian int32,
-1 = inactive lane), all non-null; the schema metadata holds ``wgpsim.num_warps`` and
``wgpsim.labels`` (JSON). The writer puts the trace in one row group, LZ4-compressed, plain
encoded but for ``op``'s dictionary: reading it is decompressing pages into Arrow buffers that
become the trace's arrays, no copy (``addr`` viewed as int32[rows, 32]). A nested ``addr``
(``fixed_size_list<int32>[32]``, null lanes inactive: the format before) is still read, ten
times slower (Parquet's repetition levels, one per lane, dominate its decoding).

>>> import tempfile, pathlib
>>> from wgpsim.trace.generate import streaming_trace
>>> t = streaming_trace(2, 3, "ds_load_b128", [0, 1536], 16)
>>> with tempfile.TemporaryDirectory() as d:
...     path = pathlib.Path(d) / "t.jsonl"
...     _ = write_trace(t, path)
...     print(path.read_text().splitlines()[2])
...     read_trace(path) == t
{"warp": 0, "op": "ds_load_b128", "addr": {"base": 0, "stride": 16}}
True
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from wgpsim.errors import TraceError, shown
from wgpsim.extras import require
from wgpsim.files import atomic_write
from wgpsim.inputs import check_affordable, json_value
from wgpsim.trace.instructions import (
    BARRIER,
    CLOCK,
    DELAY,
    INSTRUCTIONS,
    LANES,
    OPS,
    TDM,
    WAIT_DS,
    WAIT_TENSOR,
    op_code,
)
from wgpsim.trace.trace import Trace, affine_rows
from wgpsim.trace.validate import DEFAULT_LDS_BYTES, validate

if TYPE_CHECKING:  # imported by the Parquet functions, so JSON Lines and `--help` stay light
    import pyarrow as pa
    import pyarrow.parquet as pq

_INT32_MAX = int(np.iinfo(np.int32).max)
_INT64_MAX = int(np.iinfo(np.int64).max)
_ARG_FIELD = {WAIT_DS: "n", DELAY: "cycles", CLOCK: "label", WAIT_TENSOR: "n"}
_ALL_WARPS = -1  # marker for a barrier line without "warp"
MAX_WARPS = 1 << 16
"""Sanity bound on warp ids in a file (a format limit, far above any workgroup)."""


def _fields(code: int) -> tuple[str, ...]:
    if code == TDM:
        return ("warp", "op", "addr", "last")
    if code < len(INSTRUCTIONS):
        two = INSTRUCTIONS[OPS[code]].addresses == 2
        return ("warp", "op", "addr", "distance") if two else ("warp", "op", "addr")
    return ("warp", "op", _ARG_FIELD[code]) if code in _ARG_FIELD else ("warp", "op")


def _last(value, where: str) -> bool:
    """A TDM row's ``last`` field: true on the last row of its instruction."""
    if type(value) is not bool:
        raise TraceError(f"{where}: field 'last': expected true or false, got {value!r}")
    return value


def _int(
    value, where: str, field: str, minimum: int | None = None, limit: int | None = None
) -> int:
    if type(value) is not int:
        raise TraceError(f"{where}: field {field!r}: expected an integer, got {shown(value)}")
    if minimum is not None and value < minimum:
        what = "negative" if value < 0 else "too small"
        raise TraceError(f"{where}: field {field!r}: {value} is {what} (expected >= {minimum})")
    if limit is not None and value > limit:
        raise TraceError(f"{where}: field {field!r}: {value} is too large (at most {limit})")
    return value


def _lane_row(addr, where: str) -> list[int]:
    """The 32 lane addresses of an ``addr`` field (-1 = inactive)."""
    if isinstance(addr, dict):
        if sorted(addr) != ["base", "stride"]:
            raise TraceError(
                f'{where}: field \'addr\': expected {{"base": B, "stride": S}}, got keys {sorted(addr)}'
            )
        base = _int(addr["base"], where, "addr.base", 0)
        stride = _int(addr["stride"], where, "addr.stride")
        addr = [base + lane * stride for lane in range(LANES)]
    elif not isinstance(addr, list):
        raise TraceError(
            f"{where}: field 'addr': expected a list of {LANES} addresses or "
            f'{{"base": B, "stride": S}}, got {addr!r}'
        )
    if len(addr) != LANES:
        raise TraceError(f"{where}: field 'addr': expected {LANES} lane addresses, got {len(addr)}")
    row = []
    for lane, a in enumerate(addr):
        if a is None:
            row.append(-1)
        elif type(a) is not int:
            raise TraceError(
                f"{where}: field 'addr': lane {lane} is {a!r}, expected an integer or null"
            )
        elif not 0 <= a <= _INT32_MAX:
            raise TraceError(
                f"{where}: field 'addr': lane {lane} address {a} is not a byte address in the LDS "
                f"(use null for an inactive lane)"
            )
        else:
            row.append(a)
    return row


def _open_text(path: Path):
    """``path`` opened for reading text; a directory or unreadable file is a TraceError."""
    if path.is_dir():
        raise TraceError(f"{path}: is a directory, expected a trace file")
    try:
        return path.open(encoding="utf-8")
    except FileNotFoundError:
        raise
    except OSError as err:
        raise TraceError(f"{path}: cannot read the trace ({err.strerror})") from None


def _numbered_lines(f, path: Path):
    """``(line number, text)`` of a text file; bytes that are not UTF-8 are a TraceError."""
    try:
        yield from enumerate(f, start=1)
    except UnicodeDecodeError:
        raise TraceError(
            f"{path.name}: not UTF-8 text (a JSON Lines trace is text; binary traces are .parquet)"
        ) from None


_JSONL_COST = 8
"""Bytes of memory one byte of a JSON Lines trace may take while it is read (its records as
Python values, then the columns): the estimate checked before reading."""


def read_jsonl(
    path: str | Path, lds_bytes: int = DEFAULT_LDS_BYTES, *, check: bool = True
) -> Trace:
    """Read a JSON Lines trace; errors name ``file:line``, the field and what is valid."""
    path = Path(path)
    num_warps: int | None = None
    labels: dict[str, int] = {}
    lines, warps, codes, args, addr_rows = [], [], [], [], []
    with _open_text(path) as f:
        size = os.fstat(f.fileno()).st_size
        check_affordable(
            size * _JSONL_COST, f"{path.name}: {size:,} bytes of JSON Lines", TraceError
        )
        for number, text in _numbered_lines(f, path):
            text = text.strip()
            if not text or text.startswith("#"):
                continue
            where = f"{path.name}:{number}"
            rec = json_value(text, where, TraceError)
            if not isinstance(rec, dict):
                raise TraceError(f"{where}: expected a JSON object, got {text[:40]!r}")
            if "op" not in rec:
                if "num_warps" not in rec or lines or num_warps is not None:
                    raise TraceError(
                        f"{where}: field 'op' missing (valid: {', '.join(OPS)}; a header "
                        f'{{"num_warps": N, "labels": [...]}} may only be the first record)'
                    )
                unknown = sorted(set(rec) - {"num_warps", "labels"})
                if unknown:
                    raise TraceError(
                        f"{where}: field {unknown[0]!r}: not a header field (valid: num_warps, labels)"
                    )
                num_warps = _int(rec["num_warps"], where, "num_warps", 1, MAX_WARPS)
                if not isinstance(rec.get("labels", []), list):
                    raise TraceError(f"{where}: field 'labels': expected a list of clock labels")
                for label in rec.get("labels", []):
                    labels.setdefault(str(label), len(labels))
                continue
            code = op_code(rec["op"]) if rec["op"] in OPS else None
            if code is None:
                raise TraceError(
                    f"{where}: field 'op': unknown op {rec['op']!r} (valid: {', '.join(OPS)})"
                )
            allowed = _fields(code)
            for key in rec:
                if key not in allowed:
                    raise TraceError(
                        f"{where}: field {key!r}: not used by {rec['op']} (valid: {', '.join(allowed)})"
                    )
            for key in allowed:
                if key not in rec and not (key == "warp" and code == BARRIER) and key != "last":
                    raise TraceError(
                        f"{where}: field {key!r} missing (required for {rec['op']}: {', '.join(allowed)})"
                    )
            warp = (
                _int(rec["warp"], where, "warp", 0, MAX_WARPS - 1) if "warp" in rec else _ALL_WARPS
            )
            arg = 0
            if code == CLOCK:
                if not isinstance(rec["label"], str):
                    raise TraceError(
                        f"{where}: field 'label': expected a string, got {rec['label']!r}"
                    )
                arg = labels.setdefault(rec["label"], len(labels))
            elif code in _ARG_FIELD:
                arg = _int(rec[_ARG_FIELD[code]], where, _ARG_FIELD[code], 0, _INT64_MAX)
            elif "distance" in allowed:
                arg = _int(rec["distance"], where, "distance", 0, _INT32_MAX)
            elif "last" in allowed:
                arg = int(_last(rec.get("last", False), where))
            if code < len(INSTRUCTIONS):
                addr_rows.append((len(lines), _lane_row(rec["addr"], where)))
            lines.append(number)
            warps.append(warp)
            codes.append(code)
            args.append(arg)
    trace, line_of_row = _expand(lines, warps, codes, args, addr_rows, num_warps, labels)
    if check:
        validate(trace, lds_bytes, source=path.name, lines=line_of_row)
    return trace


def _expand(lines, warps, codes, args, addr_rows, num_warps, labels) -> tuple[Trace, np.ndarray]:
    """Records -> Trace rows, a warp-less barrier becoming one row per warp."""
    warps = np.array(warps, dtype=np.int64)
    if num_warps is None:
        num_warps = max(int(warps.max(initial=-1)) + 1, 1)
    every = warps == _ALL_WARPS
    reps = np.where(every, num_warps, 1)
    idx = np.repeat(np.arange(len(warps)), reps)
    starts = np.cumsum(reps) - reps
    row_warp = np.where(every[idx], np.arange(len(idx)) - starts[idx], warps[idx])
    addr = np.full((len(warps), LANES), -1, dtype=np.int32)
    if addr_rows:
        addr[[i for i, _ in addr_rows]] = [row for _, row in addr_rows]
    trace = Trace(
        row_warp.clip(max=_INT32_MAX),
        np.array(codes, dtype=np.int16)[idx],
        np.array(args, dtype=np.int64)[idx],
        addr[idx],
        tuple(labels),
        num_warps,
    )
    return trace, np.array(lines, dtype=np.int64)[idx]


def _addr_text(row: list[int]) -> str:
    return "[" + ", ".join("null" if a < 0 else str(a) for a in row) + "]"


def _jsonl_lines(trace: Trace):
    """The file's lines; barrier rows of warps 0..n-1 in a row become one warp-less barrier."""
    n, num_warps = len(trace), trace.num_warps
    affine, base, stride = affine_rows(trace.addr)
    warp, op, arg = trace.warp.tolist(), trace.op.tolist(), trace.arg.tolist()
    yield f"# wgpsim trace: {num_warps} warps, {n} ops"
    yield json.dumps({"num_warps": num_warps, "labels": list(trace.labels)})
    every = list(range(num_warps))
    i = 0
    while i < n:
        code, w = op[i], warp[i]
        window = slice(i, i + num_warps)
        if code == BARRIER and warp[window] == every and set(op[window]) == {BARRIER}:
            yield '{"op": "barrier"}'
            i += num_warps
            continue
        head = f'{{"warp": {w}, "op": "{OPS[code]}"'
        if code < len(INSTRUCTIONS):
            if INSTRUCTIONS[OPS[code]].addresses == 2:
                head += f', "distance": {arg[i]}'
            elif code == TDM and arg[i]:
                head += ', "last": true'
            if affine[i]:
                yield f'{head}, "addr": {{"base": {base[i]}, "stride": {stride[i]}}}}}'
            else:
                yield f'{head}, "addr": {_addr_text(trace.addr[i].tolist())}}}'
        elif code == CLOCK:
            yield f'{head}, "label": {json.dumps(trace.labels[arg[i]])}}}'
        elif code in _ARG_FIELD:
            yield f'{head}, "{_ARG_FIELD[code]}": {arg[i]}}}'
        else:
            yield head + "}"
        i += 1


def write_jsonl(trace: Trace, path: str | Path) -> Path:
    """Write ``trace`` as JSON Lines (header, then one op a line), atomically."""

    def write(tmp: Path) -> None:
        with tmp.open("w") as f:
            for line in _jsonl_lines(trace):
                f.write(line + "\n")

    return atomic_write(path, write)


def write_parquet(trace: Trace, path: str | Path) -> Path:
    """Write ``trace`` as Parquet (schema in the module docstring), atomically: one row group,
    LZ4, plain encoding but for ``op``'s dictionary, so that reading it is a copy of the pages."""
    pa = require("pyarrow", "parquet", "writing Parquet")
    pq = require("pyarrow.parquet", "parquet", "writing Parquet")

    lanes = np.ascontiguousarray(trace.addr, dtype="<i4")
    addr = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(_ADDR_BYTES), len(trace), [None, pa.py_buffer(lanes)]
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

    A file in the current format (``addr`` as 128-byte values) is read a whole row group at a
    time and its columns become the trace's arrays without a copy (with one row group, the
    writer's choice) or with one copy into the trace (several). A file from before 0.x with
    ``addr`` as ``fixed_size_list<int32>[32]`` is read ``_BATCH_ROWS`` rows at a time into
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
        lists = _check_types(schema, path.name)
        read = _read_batches if lists else _read_row_groups
        warp, codes, arg, addr = read(file, path.name)
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
_ADDR_BYTES = 4 * LANES
"""Bytes of one row's ``addr`` value in a Parquet file: 32 little-endian int32."""
_ROW_BYTES = 4 + 2 + 8 + _ADDR_BYTES
"""Bytes one trace row takes in memory (warp, op, arg, 32 lane addresses)."""
_READ_BUFFER = 1 << 20
"""Bytes of a column chunk read from the file at a time (pyarrow's default reads a whole
chunk first: a second copy of the trace when it does not compress)."""
_BATCH_ROWS = 8192
"""Rows decoded at a time from a file whose ``addr`` is a list column (1 MiB of addresses)."""


def _check_types(schema: pa.Schema, source: str) -> bool:
    """The column types a trace needs: integers, op names, 32 integer lane addresses (128-byte
    values, or or a list column as written before: then True)."""
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
    if kind == pa.binary(_ADDR_BYTES):
        return False
    if (
        not pa.types.is_fixed_size_list(kind)
        or kind.list_size != LANES
        or not pa.types.is_integer(kind.value_type)
    ):
        raise TraceError(
            f"{source}: field 'addr': expected {pa.binary(_ADDR_BYTES)} ({LANES} little-endian int32 "
            f"lane addresses) or fixed_size_list<int32>[{LANES}], got {kind}"
        )
    return True


def _read_row_groups(
    file: pq.ParquetFile, source: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(warp, op codes, arg, addr [rows, 32]) of a file whose ``addr`` holds 128-byte values,
    a whole row group at a time: one group's columns are returned as they were decoded (numpy
    views of Arrow's buffers), several are copied into preallocated arrays."""
    n = file.metadata.num_rows
    check_affordable(n * _ROW_BYTES, f"{source}: {n:,} rows", TraceError)
    groups = file.metadata.num_row_groups
    if groups == 1:
        return _row_group(file, 0, 0, source)
    out = (np.empty(n, np.int32), np.empty(n, np.int16), np.empty(n, np.int64))
    out += (np.empty((n, LANES), np.int32),)
    start = 0
    for g in range(groups):
        columns = _row_group(file, g, start, source)
        end = start + len(columns[0])
        for name, array, values in zip(_COLUMNS, out, columns, strict=True):
            _put(array[start:end], values, name, source)
        start = end
    return out


def _row_group(
    file: pq.ParquetFile, group: int, start: int, source: str
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
    lanes = _view(columns["addr"], np.dtype("<i4"), LANES).reshape(-1, LANES)
    return warp, _op_codes(columns["op"], start, source), arg, lanes


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
    file: pq.ParquetFile, source: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(warp int32, op codes int16, arg int64, addr int32 [rows, 32]) of a file whose ``addr``
    is a list column, batch by batch; null lanes read as -1."""
    n = file.metadata.num_rows
    check_affordable(n * _ROW_BYTES, f"{source}: {n:,} rows", TraceError)
    warp, codes, arg = np.empty(n, np.int32), np.empty(n, np.int16), np.empty(n, np.int64)
    addr = np.empty((n, LANES), dtype=np.int32)
    start = 0
    batches = file.iter_batches(batch_size=_BATCH_ROWS, columns=list(_COLUMNS), use_threads=False)
    for batch in batches:
        end = start + batch.num_rows
        for name, out in (("warp", warp), ("arg", arg)):
            column = _no_nulls(batch.column(name), name, start, source)
            _put(out[start:end], column.to_numpy(zero_copy_only=False), name, source)
        codes[start:end] = _op_codes(batch.column("op"), start, source)
        lanes = _no_nulls(
            batch.column("addr"),
            "addr",
            start,
            source,
            f" (expected {LANES} lane addresses; null or -1 for an inactive lane)",
        )
        values = lanes.flatten().fill_null(-1).to_numpy(zero_copy_only=False)
        _put(addr[start:end], values.reshape(-1, LANES), "addr", source)
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
        _int(int(warp[beyond[0]]), f"{source}: row {int(beyond[0])}", "warp", 0, MAX_WARPS - 1)
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


_READERS = {".jsonl": read_jsonl, ".parquet": read_parquet}
_WRITERS = {".jsonl": write_jsonl, ".parquet": write_parquet}


def _format(path: Path) -> str:
    if path.suffix not in _READERS:
        raise TraceError(f"{path}: unknown trace format {path.suffix!r} (valid: .jsonl, .parquet)")
    return path.suffix


def read_trace(
    path: str | Path, lds_bytes: int = DEFAULT_LDS_BYTES, *, check: bool = True
) -> Trace:
    """Read a ``.jsonl`` or ``.parquet`` trace and validate it against an LDS of ``lds_bytes``."""
    path = Path(path)
    return _READERS[_format(path)](path, lds_bytes, check=check)


def write_trace(trace: Trace, path: str | Path) -> Path:
    """Write ``trace`` as ``.jsonl`` or ``.parquet`` (by suffix), atomically."""
    path = Path(path)
    return _WRITERS[_format(path)](trace, path)
