"""Trace files: JSON Lines written by hand, Parquet for large traces. Both round-trip exactly.

JSON Lines, one op a line (``#`` comments and blank lines are skipped)::

    {"num_warps": 2, "labels": ["start", "end"]}        optional header, first record only
                                                        (a wave64 trace adds "lanes": 64)
    {"op": "barrier"}                                   every warp (or give "warp")
    {"warp": 0, "op": "clock", "label": "start"}
    {"warp": 0, "op": "ds_load_b128", "addr": {"base": 0, "stride": 16}}
    {"warp": 1, "op": "ds_load_b64", "addr": [0, 8, null, ...32 entries...]}
    {"warp": 0, "op": "wait_ds", "n": 0}
    {"warp": 1, "op": "delay", "cycles": 10}

``addr`` is a byte address per lane (32, or the header's ``lanes``: 32 or 64; ``null`` =
inactive lane) or ``{"base": B, "stride": S}`` (lane l
reads B + l*S). A 2addr form also gives ``"distance": D``: each lane's second access is at its
address + D bytes (``{"warp": 0, "op": "ds_load_2addr_b64", "distance": 512, "addr": ...}``).
A TDM write row (``tensor_load_to_lds``: 32 granules of 8 bytes) gives ``"last": true`` on its
instruction's last row (absent: false); ``{"warp": 0, "op": "wait_tensor", "n": 0}`` waits for
the warp's TDM instructions. Without a header, ``num_warps`` is the largest warp + 1. The writer uses the
base/stride form whenever all lanes are active and equally spaced, and ``{"op": "barrier"}``
for a barrier of every warp in warp order.

Parquet (large traces): ``wgpsim.trace.parquet``.

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

import numpy as np

from wgpsim.errors import TraceError, shown
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
    WAVE_SIZES,
    op_code,
)
from wgpsim.trace.parquet import MAX_WARPS, field_int, read_parquet, write_parquet
from wgpsim.trace.trace import Trace, affine_rows
from wgpsim.trace.validate import DEFAULT_LDS_BYTES, validate

_INT32_MAX = int(np.iinfo(np.int32).max)
_INT64_MAX = int(np.iinfo(np.int64).max)
_ARG_FIELD = {WAIT_DS: "n", DELAY: "cycles", CLOCK: "label", WAIT_TENSOR: "n"}
_ALL_WARPS = -1  # marker for a barrier line without "warp"


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


def _lane_row(addr, where: str, lanes: int) -> list[int]:
    """The ``lanes`` lane addresses of an ``addr`` field (-1 = inactive)."""
    if isinstance(addr, dict):
        if sorted(addr) != ["base", "stride"]:
            raise TraceError(
                f'{where}: field \'addr\': expected {{"base": B, "stride": S}}, got keys {sorted(addr)}'
            )
        base = field_int(addr["base"], where, "addr.base", 0)
        stride = field_int(addr["stride"], where, "addr.stride")
        addr = [base + lane * stride for lane in range(lanes)]
    elif not isinstance(addr, list):
        raise TraceError(
            f"{where}: field 'addr': expected a list of {lanes} addresses or "
            f'{{"base": B, "stride": S}}, got {addr!r}'
        )
    if len(addr) != lanes:
        hint = ' (a wave64 trace says "lanes": 64 in its header)' if len(addr) == 64 else ""
        raise TraceError(
            f"{where}: field 'addr': expected {lanes} lane addresses, got {len(addr)}{hint}"
        )
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


HEADER_FIELDS = frozenset({"num_warps", "labels", "lanes"})
"""The fields of a trace's optional header record (each optional)."""


def _header(rec: dict, where: str, labels: dict[str, int]) -> tuple[int | None, int]:
    """A header record's ``num_warps`` (None if absent: the largest warp + 1) and ``lanes`` (32
    if absent); its clock labels are numbered into ``labels``. Each field is optional: a
    wave64 trace may begin with ``{"lanes": 64}`` alone.

    >>> labels = {}
    >>> _header({"num_warps": 2, "labels": ["start"], "lanes": 64}, "t.jsonl:1", labels), labels
    ((2, 64), {'start': 0})
    >>> _header({"lanes": 64}, "t.jsonl:1", {})
    (None, 64)
    """
    unknown = sorted(set(rec) - HEADER_FIELDS)
    if unknown:
        raise TraceError(
            f"{where}: field {unknown[0]!r}: not a header field (valid: num_warps, labels, lanes)"
        )
    num_warps = rec.get("num_warps")
    if num_warps is not None:
        num_warps = field_int(num_warps, where, "num_warps", 1, MAX_WARPS)
    lanes = _wave_size(rec.get("lanes", LANES), where)
    if not isinstance(rec.get("labels", []), list):
        raise TraceError(f"{where}: field 'labels': expected a list of clock labels")
    for label in rec.get("labels", []):
        labels.setdefault(str(label), len(labels))
    return num_warps, lanes


def _wave_size(value, where: str) -> int:
    """A header's ``lanes``: one of :data:`WAVE_SIZES`."""
    if type(value) is not int or value not in WAVE_SIZES:
        valid = " or ".join(map(str, WAVE_SIZES))
        raise TraceError(f"{where}: field 'lanes': expected {valid}, got {shown(value)}")
    return value


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
    lanes, header_seen = LANES, False
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
                if not HEADER_FIELDS & rec.keys() or lines or header_seen:
                    raise TraceError(
                        f"{where}: field 'op' missing (valid: {', '.join(OPS)}; a header "
                        f'{{"num_warps": N, "labels": [...], "lanes": 32|64}} may only be the '
                        "first record)"
                    )
                num_warps, lanes = _header(rec, where, labels)
                header_seen = True
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
                field_int(rec["warp"], where, "warp", 0, MAX_WARPS - 1)
                if "warp" in rec
                else _ALL_WARPS
            )
            arg = 0
            if code == CLOCK:
                if not isinstance(rec["label"], str):
                    raise TraceError(
                        f"{where}: field 'label': expected a string, got {rec['label']!r}"
                    )
                arg = labels.setdefault(rec["label"], len(labels))
            elif code in _ARG_FIELD:
                arg = field_int(rec[_ARG_FIELD[code]], where, _ARG_FIELD[code], 0, _INT64_MAX)
            elif "distance" in allowed:
                arg = field_int(rec["distance"], where, "distance", 0, _INT32_MAX)
            elif "last" in allowed:
                arg = int(_last(rec.get("last", False), where))
            if code < len(INSTRUCTIONS):
                addr_rows.append((len(lines), _lane_row(rec["addr"], where, lanes)))
            lines.append(number)
            warps.append(warp)
            codes.append(code)
            args.append(arg)
    trace, line_of_row = _expand(lines, warps, codes, args, (addr_rows, lanes), num_warps, labels)
    if check:
        validate(trace, lds_bytes, source=path.name, lines=line_of_row)
    return trace


def _expand(lines, warps, codes, args, addresses, num_warps, labels) -> tuple[Trace, np.ndarray]:
    """Records -> Trace rows, a warp-less barrier becoming one row per warp; ``addresses`` is
    (the LDS rows' (index, lane addresses), lanes)."""
    addr_rows, lanes = addresses
    warps = np.array(warps, dtype=np.int64)
    if num_warps is None:
        num_warps = max(int(warps.max(initial=-1)) + 1, 1)
    every = warps == _ALL_WARPS
    reps = np.where(every, num_warps, 1)
    idx = np.repeat(np.arange(len(warps)), reps)
    starts = np.cumsum(reps) - reps
    row_warp = np.where(every[idx], np.arange(len(idx)) - starts[idx], warps[idx])
    addr = np.full((len(warps), lanes), -1, dtype=np.int32)
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
    header = {"num_warps": num_warps, "labels": list(trace.labels)}
    yield json.dumps(header if trace.lanes == LANES else {**header, "lanes": trace.lanes})
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
