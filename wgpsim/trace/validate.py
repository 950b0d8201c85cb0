"""Checks that a trace can be replayed, with errors that name the line (or row) and field.

Rules: every op is known; warps are in ``0..num_warps-1``; LDS rows have one address per lane,
each -1 (inactive) or aligned for the instruction (``Instruction.alignment``) and inside the LDS
(a 2addr form's second address, first + ``arg``, too; ``arg`` is 1..255 offset units); control
rows carry no addresses; ``wait_ds`` counts and ``delay`` cycles are not negative, and a warp
delays at most :data:`MAX_DELAY_CYCLES` in all (so no cycle count overflows); a ``clock``
names a known label; and every warp executes the same number of barriers (otherwise a barrier
would wait forever for the warp that never reaches it).

>>> import numpy as np
>>> from wgpsim.trace.instructions import op_code
>>> addr = np.arange(32, dtype=np.int32)[None] * 16 + 2
>>> validate_columns = dict(warp=[0], op=[op_code("ds_load_b128")], arg=[0], addr=addr)
>>> from wgpsim.trace.trace import Trace
>>> validate(Trace(**validate_columns), source="t.jsonl", lines=np.array([3]))
Traceback (most recent call last):
...
wgpsim.errors.TraceError: t.jsonl:3 (warp 0, ds_load_b128): field 'addr': lane 0 address 2 is not 4-byte aligned (ds_load_b128 needs multiples of 4)
"""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

import numpy as np

from wgpsim.errors import TraceError
from wgpsim.packaged import hardware_fact
from wgpsim.trace.instructions import (
    BARRIER,
    CLOCK,
    DELAY,
    NUM_LDS_OPS,
    OP_ACCESS_BYTES,
    OP_ADDRESSES,
    OP_ALIGNMENT,
    OP_OFFSET_UNIT,
    OPS,
    TDM,
    WAIT_DS,
    WAIT_TENSOR,
)


@runtime_checkable
class TraceColumns(Protocol):
    """A trace as these checks read it: its columns and what they refer to.
    `wgpsim.trace.trace.Trace` is one; this module does not import it, because ``trace``
    imports these checks (``TraceBuilder.build`` validates what it built).

    >>> from wgpsim.trace.trace import TraceBuilder
    >>> isinstance(TraceBuilder(1).build(), TraceColumns)
    True
    """

    warp: np.ndarray
    op: np.ndarray
    arg: np.ndarray
    addr: np.ndarray
    labels: tuple[str, ...]
    num_warps: int


T = TypeVar("T", bound=TraceColumns)
"""The trace a check is given and returns, of the caller's own class."""

DEFAULT_LDS_BYTES: int = hardware_fact("partitions", "lds_bytes")
"""LDS capacity used when none is given: the packaged hardware file's ``partitions.lds_bytes``
(five 64 KiB partitions). The hardware layer passes its loaded config's value instead."""

_CHUNK = 1 << 16  # rows per block of the per-lane checks (bounds the temporaries' memory)

MAX_DELAY_CYCLES = 1 << 48
"""Most ``delay`` cycles of one warp in all (about 1.4e14, a day at 2 GHz): every cycle count
of a replay then stays far inside int64 (the engines' counters), whatever the trace."""


def _where(trace: TraceColumns, row: int, source: str | None, lines: np.ndarray | None) -> str:
    if lines is not None:
        place = f"{source or '<trace>'}:{int(lines[row])}"
    else:
        place = f"{source}: row {row}" if source else f"row {row}"
    code = int(trace.op[row])
    name = OPS[code] if 0 <= code < len(OPS) else f"op {code}"
    return f"{place} (warp {int(trace.warp[row])}, {name})"


def _first(mask: np.ndarray) -> int | None:
    hits = np.flatnonzero(mask)
    return int(hits[0]) if hits.size else None


def _row_problems(trace: TraceColumns) -> list[tuple[int, str]]:
    """(row, message) of the first row breaking each per-row rule."""
    op, arg, warp = trace.op, trace.arg, trace.warp
    found: list[tuple[int, str]] = []

    def check(mask: np.ndarray, message) -> None:
        row = _first(mask)
        if row is not None:
            found.append((row, message(row)))

    check(
        (op < 0) | (op >= len(OPS)),
        lambda r: (
            f"field 'op': unknown op code {op[r]} (valid: 0..{len(OPS) - 1}: {', '.join(OPS)})"
        ),
    )
    check(
        (warp < 0) | (warp >= trace.num_warps),
        lambda r: f"field 'warp': {warp[r]} is not a warp (valid: 0..{trace.num_warps - 1})",
    )
    check(
        ((op == WAIT_DS) | (op == WAIT_TENSOR)) & (arg < 0),
        lambda r: f"field 'n': {OPS[op[r]]} count {arg[r]} is negative (expected >= 0)",
    )
    check(
        (op == TDM) & (arg != 0) & (arg != 1),
        lambda r: f"field 'last': {arg[r]} for tensor_load_to_lds (valid: 0 or 1)",
    )
    check(
        (op == DELAY) & (arg < 0),
        lambda r: f"field 'cycles': delay {arg[r]} is negative (expected >= 0)",
    )
    delays = (op == DELAY) & (arg > 0)
    per_warp = np.bincount(
        warp[delays].clip(0), weights=arg[delays].astype(np.float64), minlength=1
    )
    check(
        delays & (per_warp[warp.clip(0, len(per_warp) - 1)] > MAX_DELAY_CYCLES),
        lambda r: (
            f"field 'cycles': warp {warp[r]} delays {sum(map(int, arg[delays & (warp == warp[r])])):,}"
            " cycles in all "
            f"(valid: at most {MAX_DELAY_CYCLES:,} per warp)"
        ),
    )
    check(
        (op == CLOCK) & ((arg < 0) | (arg >= len(trace.labels))),
        lambda r: f"field 'label': label index {arg[r]} is not in labels {list(trace.labels)}",
    )
    code = np.where((op >= 0) & (op < len(OPS)), op, len(OPS) - 1)  # int16: 2 bytes a row
    unit = OP_OFFSET_UNIT[code]
    check(
        (((op < NUM_LDS_OPS) & (unit == 0) & (op != TDM)) | (op == BARRIER)) & (arg != 0),
        lambda r: f"field 'arg': expected 0 for {OPS[op[r]]}, got {arg[r]}",
    )
    check(
        (unit > 0) & ((arg <= 0) | (arg % np.maximum(unit, 1) != 0) | (arg > 255 * unit)),
        lambda r: (
            f"field 'distance': {arg[r]} bytes from the first address to the second; "
            f"{OPS[op[r]]} takes 1..255 x {unit[r]} bytes (two 8-bit offsets)"
        ),
    )
    return found


def _lane_problem(trace: TraceColumns, lds_bytes: int) -> tuple[int, str] | None:
    """(row, message) of the first row with a bad lane address, scanning in blocks."""
    for start in range(0, len(trace), _CHUNK):
        op = trace.op[start : start + _CHUNK].astype(np.int64)
        addr = trace.addr[start : start + _CHUNK]
        valid_op = (op >= 0) & (op < len(OPS))
        code = np.where(valid_op, op, 0)
        lds = valid_op & (op < NUM_LDS_OPS)
        width = OP_ACCESS_BYTES[code] + trace.arg[start : start + _CHUNK] * (
            OP_ADDRESSES[code] == 2
        )
        align = OP_ALIGNMENT[code]
        if _clean(addr, lds, width, align, lds_bytes):
            continue
        active, width, align = addr >= 0, width[:, None], align[:, None]
        masks = [
            ((addr < -1) & lds[:, None], "negative"),
            (active & ~lds[:, None], "control"),
            (active & lds[:, None] & ((addr & (align - 1).astype(np.int32)) != 0), "align"),
            (active & lds[:, None] & (addr > lds_bytes - width), "outside"),
        ]
        hits = [(np.argwhere(m)[0], kind) for m, kind in masks if m.any()]
        if not hits:
            continue
        (r, lane), kind = min(hits, key=lambda h: tuple(h[0]))
        row, a, name = start + int(r), int(addr[r, lane]), OPS[int(code[r])]
        if kind == "negative":
            return (
                row,
                f"field 'addr': lane {lane} address {a} is negative (-1 marks an inactive lane)",
            )
        if kind == "control":
            return row, f"field 'addr': {name} takes no lane addresses (lane {lane} has {a})"
        if kind == "align":
            n = int(align[r, 0])
            return row, (
                f"field 'addr': lane {lane} address {a} is not {n}-byte aligned "
                f"({name} needs multiples of {n})"
            )
        w = int(width[r, 0])
        return row, (
            f"field 'addr': lane {lane} address {a} (+{w} bytes) lies outside the LDS "
            f"(valid: 0..{lds_bytes - w} for a {lds_bytes}-byte LDS)"
        )
    return None


def _clean(
    addr: np.ndarray, lds: np.ndarray, width: np.ndarray, align: np.ndarray, lds_bytes: int
) -> bool:
    """Whether every lane of a block passes, from reductions of the whole block (a tenth of the
    lane-by-lane masks' time): no lane below -1, LDS rows' lanes within the LDS for the widest
    access and aligned for the strictest op of the block, control rows' lanes all -1. True only
    if the lane-by-lane check would find nothing; False sends the block to it (a block mixing
    alignments whose lanes are aligned only for their own op goes there too)."""
    if addr.size == 0:
        return True
    if int(addr.min()) < -1:
        return False
    if lds.any():
        if int(addr.max()) > lds_bytes - int(width[lds].max()):
            return False
        if int(np.bitwise_or.reduce(np.maximum(addr, 0), axis=None)) & (int(align[lds].max()) - 1):
            return False
    return lds.all() or bool((addr[~lds] == -1).all())


def _barrier_problem(trace: TraceColumns) -> tuple[int, str] | None:
    is_barrier = trace.op == BARRIER
    counts = np.bincount(trace.warp[is_barrier], minlength=trace.num_warps)
    if counts.size == 0 or counts.min() == counts.max():
        return None
    lo, hi = int(counts.argmin()), int(counts.argmax())
    row = int(np.flatnonzero(is_barrier & (trace.warp == hi))[counts[lo]])
    return row, (
        f"field 'op': warp {lo} reaches only {counts[lo]} barrier(s) but warp {hi} reaches "
        f"{counts[hi]}: this barrier would wait forever for warp {lo} "
        f"(every warp must execute the same number of barriers)"
    )


def validate(
    trace: T,
    lds_bytes: int = DEFAULT_LDS_BYTES,
    *,
    source: str | None = None,
    lines: np.ndarray | None = None,
) -> T:
    """Raise ``TraceError`` at the first row that breaks a rule; return ``trace`` if none does.

    ``source`` (a file name) and ``lines`` (the file line of each row) make the message point
    into the file; without them it names the row index.

    A trace's columns are read-only, so a trace found valid stays valid: it remembers the LDS
    size it was checked against, and a second check against that size or a larger one (a trace
    read from a file and then simulated) costs nothing.
    """
    if is_validated(trace, lds_bytes):
        return trace
    found = _row_problems(trace)
    lane = _lane_problem(trace, int(lds_bytes))
    if lane is not None:
        found.append(lane)
    if not found:
        barrier = _barrier_problem(trace)
        found = [barrier] if barrier is not None else []
    if found:
        row, message = min(found, key=lambda f: f[0])
        raise TraceError(f"{_where(trace, row, source, lines)}: {message}")
    return remember_valid(trace, lds_bytes)


def check_lanes(trace: TraceColumns, warp_size: int, hardware: str) -> None:
    """Refuse a trace whose lanes per warp are not the hardware's ``wgp.warp_size``, in one
    line naming both (a wave64 trace replayed on a wave32 file is no question the model
    answers).

    >>> from wgpsim.trace.trace import TraceBuilder
    >>> check_lanes(TraceBuilder(1, lanes=64).build(), 32, "mi450.yaml")
    Traceback (most recent call last):
    ...
    wgpsim.errors.TraceError: the trace has 64 lanes per warp, but mi450.yaml has wgp.warp_size 32 (a wave32 target: use a wave64 hardware file, --hw FILE or --target NAME)
    """
    lanes = trace.addr.shape[1]
    if lanes != warp_size:
        raise TraceError(
            f"the trace has {lanes} lanes per warp, but {hardware} has wgp.warp_size "
            f"{warp_size} (a wave{warp_size} target: use a wave{lanes} hardware file, --hw FILE or "
            "--target NAME)"
        )


def is_validated(trace: TraceColumns, lds_bytes: int) -> bool:
    """True if ``trace`` was found valid against an LDS of ``lds_bytes`` or fewer bytes (it
    then is valid for ``lds_bytes``: its columns are read-only)."""
    checked = trace.__dict__.get("_valid_within_lds_bytes")
    return checked is not None and int(lds_bytes) >= checked


def remember_valid(trace: T, lds_bytes: int) -> T:
    """Record that ``trace`` is valid for an LDS of ``lds_bytes`` bytes (for a checker that
    states these rules otherwise: the fast engine's compiled sweep); returns ``trace``."""
    object.__setattr__(trace, "_valid_within_lds_bytes", int(lds_bytes))  # frozen: see validate
    return trace
