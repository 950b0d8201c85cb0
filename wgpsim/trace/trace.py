"""``Trace``: what every warp asks of the LDS, one op per row, stored as numpy columns.

Rows of one warp are in program order; rows of different warps may interleave. An LDS row holds
one byte address per lane (-1 for an inactive lane); a 2addr form (``ds_load_2addr_b64`` ...)
holds each lane's first address and, in ``arg``, the byte distance to its second. A control row
(``wait_ds``, ``barrier``, ``clock``, ``delay``) has all addresses -1 and its operand in ``arg``.

The seed's microbenchmark, one warp reading 512 contiguous bytes with one ``ds_load_b128``:

>>> b = TraceBuilder(num_warps=1)
>>> b.barrier()
>>> b.clock(0, "start")
>>> b.load(0, "ds_load_b128", np.arange(32) * 16)
>>> b.wait_ds(0, 0)
>>> b.clock(0, "end")
>>> t = b.build()
>>> t
Trace(1 warp, 5 ops: ds_load_b128 1, wait_ds 1, barrier 1, clock 2; 512 LDS bytes)
>>> t.lds_bytes(), t.labels, t.arg.tolist()
(512, ('start', 'end'), [0, 0, 0, 0, 1])
>>> print(t.to_frame())
   warp            op  arg  label  active         addr
0     0       barrier    0              0
1     0         clock    0  start       0
2     0  ds_load_b128    0             32  0 + 16*lane
3     0       wait_ds    0              0
4     0         clock    1    end       0
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from wgpsim.errors import TraceError
from wgpsim.trace.instructions import (
    BARRIER,
    CLOCK,
    DELAY,
    LANES,
    OP_BYTES_PER_LANE,
    OPS,
    TDM,
    WAIT_DS,
    WAIT_TENSOR,
    WAVE_SIZES,
    instruction,
    is_lds,
    op_code,
)
from wgpsim.trace.validate import DEFAULT_LDS_BYTES, validate

if TYPE_CHECKING:  # imported by to_frame(), so `import wgpsim.trace` stays light
    import pandas as pd

_INT32_MAX = np.iinfo(np.int32).max


def _frozen(values, dtype, name: str, shape_tail: tuple[int, ...] = ()) -> np.ndarray:
    arr = np.asarray(values)
    if arr.size and arr.dtype.kind not in "iu":
        raise TraceError(f"field {name!r}: expected integers, got dtype {arr.dtype}")
    if arr.size and arr.dtype != dtype:
        info = np.iinfo(dtype)
        lo, hi = int(arr.min()), int(arr.max())
        if lo < info.min or hi > info.max:
            bad = lo if lo < info.min else hi
            raise TraceError(
                f"field {name!r}: value {bad} does not fit {np.dtype(dtype).name} "
                f"(valid: {info.min}..{info.max})"
            )
    arr = arr.astype(dtype, copy=False).view()
    if arr.shape[1:] != shape_tail:
        want = ", ".join(["n", *map(str, shape_tail)])
        raise TraceError(f"field {name!r}: expected shape [{want}], got {list(arr.shape)}")
    arr.flags.writeable = False
    return arr


def affine_rows(addr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows whose lanes are all active and read ``base + lane * stride``: (mask, base, stride).

    >>> affine_rows(np.array([np.arange(32) * 4 + 8, np.full(32, -1)]))[0].tolist()
    [True, False]
    """
    addr = np.asarray(addr, dtype=np.int64)
    base = addr[:, 0]
    stride = addr[:, 1] - base if addr.shape[1] > 1 else np.zeros_like(base)
    expect = base[:, None] + np.arange(addr.shape[1]) * stride[:, None]
    mask = (addr >= 0).all(axis=1) & (addr == expect).all(axis=1)
    return mask, base, stride


def _lanes_of(addr) -> int:
    """The lanes of an ``addr`` column: its second dimension when it is one of
    :data:`WAVE_SIZES` (else wave32's, which the shape check then names)."""
    shape = np.shape(addr)
    return shape[1] if len(shape) == 2 and shape[1] in WAVE_SIZES else LANES


@dataclass(frozen=True, eq=False)
class Trace:
    """One op stream per warp, as columns (see the module docstring). Arrays are read-only.

    ``addr`` holds one address per lane of a warp: 32 (wave32, gfx1250) or 64 (wave64) columns,
    ``lanes``; the hardware file's ``wgp.warp_size`` must agree (``check_lanes``).

    >>> Trace([0], [op_code("ds_load_b32")], [0], 4 * np.arange(64)[None]).lanes
    64
    """

    warp: np.ndarray
    op: np.ndarray
    arg: np.ndarray
    addr: np.ndarray
    labels: tuple[str, ...] = ()
    num_warps: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "warp", _frozen(self.warp, np.int32, "warp"))
        object.__setattr__(self, "op", _frozen(self.op, np.int16, "op"))
        object.__setattr__(self, "arg", _frozen(self.arg, np.int64, "arg"))
        addr = self.addr
        if np.size(addr) == 0 and np.ndim(addr) != 2:
            addr = np.asarray(addr).reshape(-1, LANES)
        object.__setattr__(self, "addr", _frozen(addr, np.int32, "addr", (_lanes_of(addr),)))
        object.__setattr__(self, "labels", tuple(str(s) for s in self.labels))
        object.__setattr__(self, "num_warps", int(self.num_warps))
        n = len(self.warp)
        if not len(self.op) == len(self.arg) == len(self.addr) == n:
            raise TraceError(
                f"columns differ in length: warp {n}, op {len(self.op)}, "
                f"arg {len(self.arg)}, addr {len(self.addr)}"
            )
        if self.num_warps < 1:
            raise TraceError(f"field 'num_warps': {self.num_warps}, expected at least 1")

    def __len__(self) -> int:
        return len(self.warp)

    @property
    def lanes(self) -> int:
        """Lanes of a warp: the addresses of one row (32 or 64)."""
        return self.addr.shape[1]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trace):
            return NotImplemented
        return (
            self.num_warps == other.num_warps
            and self.labels == other.labels
            and all(
                np.array_equal(getattr(self, c), getattr(other, c))
                for c in ("warp", "op", "arg", "addr")
            )
        )

    __hash__ = None  # type: ignore[assignment]

    # ---- queries ---------------------------------------------------------------------------

    def ops_of(self, warp: int) -> np.ndarray:
        """Row indices of ``warp``'s ops, in program order."""
        return np.flatnonzero(self.warp == warp)

    def take(self, rows: np.ndarray | Sequence[int]) -> Trace:
        """The trace made of ``rows`` (indices or a boolean mask), same labels and num_warps."""
        rows = np.asarray(rows)
        return Trace(
            self.warp[rows],
            self.op[rows],
            self.arg[rows],
            self.addr[rows],
            self.labels,
            self.num_warps,
        )

    def for_warp(self, w: int) -> Trace:
        """Only warp ``w``'s ops (warp ids and ``num_warps`` kept: for inspection)."""
        return self.take(self.ops_of(w))

    def lds_mask(self) -> np.ndarray:
        """Boolean per row: True for LDS instructions."""
        return is_lds(self.op)

    def active_lanes(self) -> np.ndarray:
        """Active lanes per row (0 for control ops)."""
        return (self.addr >= 0).sum(axis=1)

    def bytes_per_row(self) -> np.ndarray:
        """Bytes each row moves: active lanes x bytes per lane (0 for control ops)."""
        return self.active_lanes() * OP_BYTES_PER_LANE[self.op]

    def lds_bytes(self) -> int:
        """Total bytes the trace moves through the LDS."""
        return int(self.bytes_per_row().sum())

    def count_by_op(self) -> dict[str, int]:
        """How many rows each op has, in ``OPS`` order, ops that occur only."""
        counts = np.bincount(self.op, minlength=len(OPS))
        return {name: int(c) for name, c in zip(OPS, counts, strict=True) if c}

    def clock_label(self, row: int) -> str:
        """Label of the ``clock`` at ``row``."""
        return self.labels[int(self.arg[row])]

    def to_frame(self, lanes: bool = False) -> pd.DataFrame:
        """One readable row per op: warp, op, arg, label, active lanes, addr (compact text).

        With ``lanes=True`` the lane addresses (32 or 64) are added as integer columns ``lane0``...
        """
        import pandas as pd

        mask, base, stride = affine_rows(self.addr)
        lds = self.lds_mask()
        text = np.full(len(self), "", dtype=object)
        text[lds & mask] = [
            f"{b} + {s}*lane" for b, s in zip(base[lds & mask], stride[lds & mask], strict=True)
        ]
        other = np.flatnonzero(lds & ~mask)
        text[other] = [
            str([a if a >= 0 else None for a in row]) for row in self.addr[other].tolist()
        ]
        labels = np.array(self.labels + ("",), dtype=object)
        is_clock = self.op == CLOCK
        frame = pd.DataFrame(
            {
                "warp": self.warp,
                "op": pd.Categorical.from_codes(self.op, categories=list(OPS)),
                "arg": self.arg,
                "label": labels[np.where(is_clock, self.arg, len(self.labels))],
                "active": self.active_lanes(),
                "addr": text,
            }
        )
        if lanes:
            frame = frame.join(
                pd.DataFrame(self.addr, columns=[f"lane{i}" for i in range(self.lanes)])
            )
        return frame

    def __repr__(self) -> str:
        counts = ", ".join(f"{k} {v}" for k, v in self.count_by_op().items())
        warps = f"{self.num_warps} warp{'s' if self.num_warps != 1 else ''}"
        return f"Trace({warps}, {len(self)} ops: {counts or 'none'}; {self.lds_bytes()} LDS bytes)"

    def describe(self) -> str:
        """A short multi-line summary: per-op totals and the per-warp range."""
        lines = [repr(self), f"labels: {', '.join(self.labels) or '-'}"]
        lines.append(f"{'op':<20}{'total':>8}  per warp (min..max)")
        per_warp = np.zeros((len(OPS), self.num_warps), dtype=np.int64)
        np.add.at(per_warp, (self.op.astype(np.int64), self.warp.astype(np.int64)), 1)
        for code, name in enumerate(OPS):
            if per_warp[code].any():
                row = per_warp[code]
                lines.append(f"{name:<20}{row.sum():>8}  {row.min()}..{row.max()}")
        return "\n".join(lines)

    # ---- combining -------------------------------------------------------------------------

    def concat(self, *others: Trace) -> Trace:
        """This trace followed by ``others`` (each warp's ops appended in program order).

        Labels are merged by name; ``num_warps`` is the largest of all.
        """
        traces = (self, *others)
        for t in others:
            if t.lanes != self.lanes:
                raise TraceError(f"concat: a {t.lanes}-lane trace after a {self.lanes}-lane one")
        labels: dict[str, int] = {}
        args = []
        for t in traces:
            remap = np.array([labels.setdefault(s, len(labels)) for s in t.labels] or [0])
            args.append(np.where(t.op == CLOCK, remap[np.where(t.op == CLOCK, t.arg, 0)], t.arg))
        return Trace(
            np.concatenate([t.warp for t in traces]),
            np.concatenate([t.op for t in traces]),
            np.concatenate(args),
            np.concatenate([t.addr for t in traces]),
            tuple(labels),
            max(t.num_warps for t in traces),
        )


class TraceBuilder:
    """Builds a ``Trace`` op by op, many LDS instructions at once with ``loads``/``stores``, or
    many rows of any ops at once with ``rows``.

    >>> b = TraceBuilder(2)
    >>> b.loads(1, "ds_load_b64", np.arange(4 * 32).reshape(4, 32) * 8)
    >>> b.store(0, "ds_store_b32", [0] * 16 + [None] * 16)
    >>> b.barrier()
    >>> b.build().count_by_op()
    {'ds_load_b64': 4, 'ds_store_b32': 1, 'barrier': 2}
    """

    def __init__(self, num_warps: int, lanes: int = LANES):
        if int(num_warps) < 1:
            raise TraceError(f"num_warps {num_warps}: expected at least 1")
        if lanes not in WAVE_SIZES:
            raise TraceError(f"lanes {lanes!r}: expected one of {', '.join(map(str, WAVE_SIZES))}")
        self.num_warps = int(num_warps)
        self.lanes = lanes
        self._chunks: list[tuple[np.ndarray, ...]] = []
        self._rows: list[tuple[int, int, int]] = []
        self._addr_rows: dict[int, np.ndarray] = {}
        self._labels: dict[str, int] = {}

    def _warp(self, warp: int) -> int:
        if isinstance(warp, bool) or not 0 <= int(warp) < self.num_warps:
            raise TraceError(f"warp {warp!r}: expected 0..{self.num_warps - 1}")
        return int(warp)

    def _flush(self) -> None:
        if not self._rows:
            return
        w, o, a = (np.array(c, dtype=np.int64) for c in zip(*self._rows, strict=True))
        addr = np.full((len(w), self.lanes), -1, dtype=np.int32)
        if self._addr_rows:
            idx = np.fromiter(self._addr_rows, dtype=np.int64)
            addr[idx] = np.stack(list(self._addr_rows.values()))
        self._chunks.append((w, o, a, addr))
        self._rows, self._addr_rows = [], {}

    def _control(self, warp: int, code: int, arg: int) -> None:
        self._rows.append((self._warp(warp), code, int(arg)))

    def lds(self, warp: int, op: str, addr, distance: int = 0) -> None:
        """One LDS instruction: ``addr`` holds a byte address per lane (None or -1 = inactive lane);
        a 2addr form's second address is ``addr + distance`` bytes (``distance`` goes in
        ``arg``)."""
        code = op_code(instruction(op).name)
        self._addr_rows[len(self._rows)] = _lane_addresses(addr, op, self.lanes)[0]
        self._rows.append((self._warp(warp), code, int(distance)))

    def load(self, warp: int, op: str, addr, distance: int = 0) -> None:
        """One load (plain, transposed or 2addr)."""
        self.lds(warp, _checked_kind(op, load=True), addr, distance)

    def store(self, warp: int, op: str, addr, distance: int = 0) -> None:
        """One store."""
        self.lds(warp, _checked_kind(op, load=False), addr, distance)

    def lds_many(self, warp: int, op: str, addr_2d, distance=0) -> None:
        """Many instructions of one warp at once: ``addr_2d`` is ``[n_instr, lanes]``;
        ``distance`` (one int or one per instruction) as in ``lds``."""
        code = op_code(instruction(op).name)
        addr = _lane_addresses(addr_2d, op, self.lanes, batch=True)
        n = len(addr)
        self._flush()
        arg = np.broadcast_to(np.asarray(distance, dtype=np.int64), (n,)).copy()
        self._chunks.append((np.full(n, self._warp(warp)), np.full(n, code), arg, addr))

    def loads(self, warp: int, op: str, addr_2d, distance=0) -> None:
        """Many loads of one warp, back to back (``addr_2d`` is ``[n_instr, 32]``)."""
        self.lds_many(warp, _checked_kind(op, load=True), addr_2d, distance)

    def stores(self, warp: int, op: str, addr_2d, distance=0) -> None:
        """Many stores of one warp, back to back (``addr_2d`` is ``[n_instr, 32]``)."""
        self.lds_many(warp, _checked_kind(op, load=False), addr_2d, distance)

    def rows(self, warp: int, ops, args, addr) -> None:
        """Many rows of one warp at once, in program order, as numpy columns: ``ops`` their op
        codes (`op_code`), ``args`` their operands (a clock's: `label_index` of its label),
        ``addr`` ``[n, lanes]`` byte addresses (-1 = inactive lane; all -1 for a control row).
        The same rows as one call per row (``lds``, ``tdm``, ``wait_ds``, ``clock`` ...).

        >>> b = TraceBuilder(1)
        >>> b.rows(0, [op_code("ds_load_b32"), WAIT_DS], [0, 0], [4 * np.arange(32), [-1] * 32])
        >>> b.build().count_by_op()
        {'ds_load_b32': 1, 'wait_ds': 1}
        """
        ops, args = np.asarray(ops, np.int64), np.asarray(args, np.int64)
        addr = np.asarray(addr)
        if ops.size and not 0 <= ops.min() <= ops.max() < len(OPS):
            raise TraceError(f"rows: op code {int(ops.max())}: expected 0..{len(OPS) - 1}")
        bad = np.flatnonzero(((addr < -1) | (addr > _INT32_MAX)).any(axis=-1)) if addr.ndim else ()
        if len(bad):  # the message names the row's op, as one call per row does
            _lane_addresses(addr[bad[0]], OPS[ops[bad[0]]], self.lanes)
        addr = _lane_addresses(addr, "rows", self.lanes, batch=True)
        if not len(ops) == len(args) == len(addr):
            raise TraceError(f"rows: {len(ops)} ops, {len(args)} args, {len(addr)} addresses")
        self._flush()
        self._chunks.append((np.full(len(ops), self._warp(warp)), ops, args, addr))

    def label_index(self, label: str) -> int:
        """The ``arg`` of a clock row recording under ``label`` (a new label's: the next)."""
        return self._labels.setdefault(str(label), len(self._labels))

    def wait_ds(self, warp: int, n: int = 0) -> None:
        """Block ``warp`` until at most ``n`` of its LDS ops are outstanding."""
        self._control(warp, WAIT_DS, n)

    def tdm(self, warp: int, addr) -> None:
        """One ``tensor_load_to_lds``: the copy engine writes ``addr`` ([rows, 32] byte
        addresses of 8-byte granules, 256 B a row) for ``warp``; the last row carries
        ``arg`` 1 (the instruction ends there; ``wait_tensor`` counts instructions)."""
        rows = _lane_addresses(np.asarray(addr), "tensor_load_to_lds", self.lanes, batch=True)
        for k, row in enumerate(rows):
            self._addr_rows[len(self._rows)] = row
            self._rows.append((self._warp(warp), TDM, int(k == len(rows) - 1)))

    def wait_tensor(self, warp: int, n: int = 0) -> None:
        """Block ``warp`` until at most ``n`` of its TDM instructions are outstanding."""
        self._control(warp, WAIT_TENSOR, n)

    def barrier(self, warps: Iterable[int] | None = None) -> None:
        """A workgroup barrier in each of ``warps`` (default: every warp)."""
        for w in range(self.num_warps) if warps is None else warps:
            self._control(w, BARRIER, 0)

    def clock(self, warp: int, label: str) -> None:
        """Read the shader clock, recording the cycle under ``label``."""
        self._control(warp, CLOCK, self.label_index(label))

    def delay(self, warp: int, cycles: int) -> None:
        """``cycles`` of other work (WMMA, address math) in ``warp``."""
        self._control(warp, DELAY, cycles)

    def build(self, *, check: bool = True, lds_bytes: int = DEFAULT_LDS_BYTES) -> Trace:
        """The ``Trace``; with ``check`` it is validated against an LDS of ``lds_bytes``."""
        self._flush()
        cols = list(zip(*self._chunks, strict=True)) or [[np.zeros(0, np.int64)]] * 3 + [
            [np.zeros((0, self.lanes), np.int32)]
        ]
        trace = Trace(*(np.concatenate(c) for c in cols), tuple(self._labels), self.num_warps)
        if check:
            validate(trace, lds_bytes)
        return trace


def _checked_kind(op: str, *, load: bool) -> str:
    ins = instruction(op)
    if ins.is_load != load:
        verb, other = ("load", "store") if load else ("store", "load")
        raise TraceError(f"op {op!r} is a {other}, not a {verb} (use .{other}() for it)")
    return op


def _lane_addresses(addr, op: str, lanes: int, *, batch: bool = False) -> np.ndarray:
    """``addr`` as int32 ``[k, lanes]`` (-1 = inactive), with a TraceError naming what is wrong."""
    if not isinstance(addr, np.ndarray):
        rows = [addr] if not batch else list(addr)
        try:
            addr = np.array([[-1 if a is None else a for a in row] for row in rows], dtype=np.int64)
        except (TypeError, ValueError) as e:
            raise TraceError(
                f"{op}: field 'addr': expected {lanes} integers or None ({e})"
            ) from None
    elif not batch:
        addr = addr[None]
    if addr.ndim != 2 or addr.shape[1] != lanes:
        got = addr.shape[-1] if addr.ndim >= 1 else 0
        raise TraceError(f"{op}: field 'addr': expected {lanes} lane addresses, got {got}")
    if addr.size and addr.dtype.kind not in "iu":
        raise TraceError(f"{op}: field 'addr': expected integer addresses, got dtype {addr.dtype}")
    bad = np.flatnonzero(((addr < -1) | (addr > _INT32_MAX)).ravel())
    if bad.size:
        lane, value = bad[0] % lanes, addr.ravel()[bad[0]]
        raise TraceError(
            f"{op}: field 'addr': lane {lane} address {value} is out of range "
            f"(a byte address >= 0, or -1/None for an inactive lane)"
        )
    return addr.astype(np.int32, copy=False)
