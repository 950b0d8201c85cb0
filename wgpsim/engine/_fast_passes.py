"""The fast engine's statement of the pass rules: compiled kernels, written apart from the
reference (``wgpsim.hw.rules``) so that the tests comparing the two can see a bug in either.

``loop_passes`` splits every row of a trace into passes in one compiled sweep
(``fill_passes``, into columns sized for every lane group of every row, then cut to the passes
found) and keeps the columns the fast engine's loop needs, in
the smallest integer types. The rules, as docs/DESIGN.md "Engine timing rules" states them: a
pass is the active lanes (address >= 0) of one lane group of an instruction; a lane reading w
bytes at a touches dwords a//4 .. (a+w-1)//4 and the partitions of its first and last byte; a
pass moves w bytes per active lane, touches the OR of its lanes' partitions and needs the most
distinct dwords falling in one bank (at least 1) cycles. Passes with no active lane are dropped.

Here bank cycles are counted with bit masks: dword d lies in bank d mod 64 of bank row d // 64,
so a pass is a set of bank rows, each with a 64-bit mask of the banks it touches, and its bank
cycles are the most rows sharing a bit (beyond 64 banks the dwords are counted one by one).

A 2-way bank conflict (lanes reading 0 and 512) and a broadcast:

>>> from wgpsim.trace.instructions import op_code
>>> addr = np.stack([512 * (np.arange(32) % 2), np.zeros(32, dtype=int)])
>>> t = loop_passes(np.full(2, op_code("ds_load_b32")), addr, load_hardware(), index=False)
>>> t.start.tolist(), t.bank_cycles.tolist(), t.partitions.tolist(), t.bytes
([0, 1, 2], [2, 1], [1, 1], 256)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from wgpsim.engine._fast_backend import kernels
from wgpsim.hw.config import HardwareConfig, load_hardware  # noqa: F401 (doctest)
from wgpsim.trace.instructions import (
    INSTRUCTIONS,
    NUM_LDS_OPS,
    OP_ACCESS_BYTES,
    OP_ADDRESSES,
    OP_BYTES_PER_LANE,
    OPS,
)

__all__ = ["LaneTable", "LoopPasses", "lane_table", "loop_passes"]


@dataclass(frozen=True)
class LoopPasses:
    """The passes of every trace row, as the fast engine's loop takes them: the passes of row
    r are ``start[r]:start[r + 1]``; per pass its ``partitions`` mask, ``bank_cycles`` and
    (only if asked, for the event log) its ``index`` in its instruction; ``bytes`` of all."""

    start: np.ndarray
    partitions: np.ndarray
    bank_cycles: np.ndarray
    index: np.ndarray
    bytes: int

    def __len__(self) -> int:
        return len(self.partitions)


def loop_passes(
    ops: np.ndarray,
    addr: np.ndarray,
    hw: HardwareConfig,
    *,
    index: bool,
    distance: np.ndarray | None = None,
) -> LoopPasses:
    """The passes of every row in the columns the loop needs, in the smallest dtypes (control
    rows have no pass). ``distance``: each row's byte distance to a 2addr form's second
    address (a trace's ``arg``; default 0)."""
    table = lane_table(hw)
    args, n = table.kernel_args(ops, addr, distance)
    out = pass_columns(
        n, table, row=0, index=n if index else 0, lane_mask=0, bytes=0, start=len(ops) + 1
    )
    total = table.fill(args, out)
    k = int(out[6][-1])
    return LoopPasses(out[6], out[4][:k], out[5][:k], out[1][:k], int(total))


def pass_list(
    ops: np.ndarray, addr: np.ndarray, hw: HardwareConfig, distance: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Every column of the passes of LDS rows ``ops``/``addr`` (row, index, lane_mask, bytes,
    partitions, bank_cycles) as int64, in row then pass order: what tests compare with
    ``wgpsim.hw.rules.pass_table``."""
    table = lane_table(hw)
    args, n = table.kernel_args(ops, addr, distance)
    out = pass_columns(n, table, start=len(ops) + 1)
    table.fill(args, out)
    k = int(out[6][-1])
    names = ("row", "index", "lane_mask", "bytes", "partitions", "bank_cycles")
    return {name: np.asarray(c[:k], dtype=np.int64) for name, c in zip(names, out, strict=False)}


class LaneTable:
    """The lane groups of every LDS op as the kernels take them: ``lanes[op, pass, j]`` is lane
    j of pass ``pass`` (``count[op]`` passes of ``width[op]`` lanes), ``bytes_per_lane[op]``,
    and the sizes the rules divide by as (size, log2 size or -1).

    Lanes are ordered by their pass number (config ``passes``: bit i is the parity of the lane
    bits of mask i):

    >>> lane_table(load_hardware()).lanes[OPS.index("ds_load_b128"), :, :3].tolist()
    [[0, 1, 2], [16, 17, 18]]
    """

    def __init__(self, hw: HardwareConfig) -> None:
        groups = [
            _groups(hw.lane_masks_or_one_pass(OPS[code]), hw.wgp.warp_size)
            for code in range(NUM_LDS_OPS)
        ]
        self.count = np.array([g.shape[0] for g in groups], dtype=np.int64)
        self.width = np.array([g.shape[1] for g in groups], dtype=np.int64)
        self.lanes = np.zeros((NUM_LDS_OPS, self.count.max(), self.width.max()), dtype=np.int64)
        for code, g in enumerate(groups):
            self.lanes[code, : g.shape[0], : g.shape[1]] = g
        self.groups = np.zeros(len(OPS), dtype=np.int64)  # lane groups per op code (control: 0)
        self.groups[:NUM_LDS_OPS] = self.count
        self.bytes_per_lane = OP_BYTES_PER_LANE[:NUM_LDS_OPS].copy()
        self.access_bytes = OP_ACCESS_BYTES[:NUM_LDS_OPS].copy()
        self.accesses = OP_ADDRESSES[:NUM_LDS_OPS].copy()
        self.sizes = (
            _divisor(hw.partitions.size),
            _divisor(hw.banks.width_bytes),
            _bank_table(hw),
        )
        self.mask_dtype = _mask_dtype(hw.partitions.count)

    def kernel_args(
        self, ops: np.ndarray, addr: np.ndarray, distance: np.ndarray | None = None
    ) -> tuple[tuple, int]:
        """The kernels' arguments for rows ``ops``/``addr``/``distance`` (converted as
        ``kernel_rows``) and the most passes they can have: every lane group of every LDS row
        (``fill_passes`` drops the empty ones)."""
        ops, addr = kernel_rows(ops, addr)
        dist = np.zeros(len(ops), np.int64) if distance is None else distance
        dist = _read_only(np.ascontiguousarray(dist, dtype=np.int64))
        args = (ops, addr, _NO_ROWS, self.lanes, self.count, self.width)
        return (*args, dist), int(self.groups[ops].sum(dtype=np.int64))

    def fill(self, args: tuple, out: tuple) -> int:
        """``fill_passes`` of ``args`` into ``out``; returns the bytes of all passes."""
        *rows, dist = args
        per_op = (self.bytes_per_lane, self.access_bytes, self.accesses, dist)
        return kernels().fill_passes(*rows, *per_op, *self.sizes, out)


def _groups(masks: tuple[tuple[int, ...], ...], warp_size: int) -> np.ndarray:
    """[passes, lanes]: the lanes sorted (stably) by their pass number, whose bit i is the
    parity of the lane's bits under mask i (a linear map over GF(2))."""
    weights = [sum(1 << b for b in mask) for mask in masks]
    pass_of = [
        sum((bin(lane & m).count("1") & 1) << i for i, m in enumerate(weights))
        for lane in range(warp_size)
    ]
    return np.argsort(np.array(pass_of), kind="stable").reshape(1 << len(masks), -1)


_NO_ROWS = np.zeros(0, dtype=np.int64)


def _bank_table(hw: HardwareConfig) -> np.ndarray:
    """[op, 2]: the banks each LDS op goes through as (count, log2 count or -1): a write (an op
    that loads nothing: stores, the TDM's rows) through ``banks.store_count`` when the config
    gives one, everything else through ``banks.count``; an op ``banks.by_instruction`` names
    through its own count."""
    store, own = hw.banks.store_count, dict(hw.banks.by_instruction)
    counts = [
        own.get(
            OPS[code],
            store if store is not None and not INSTRUCTIONS[OPS[code]].is_load else hw.banks.count,
        )
        for code in range(NUM_LDS_OPS)
    ]
    return np.array([_divisor(c) for c in counts], dtype=np.int64).reshape(-1, 2)


def _divisor(d: int) -> tuple[int, int]:
    """(d, log2 d) for a power of two, else (d, -1): what the kernels divide by."""
    return d, (d.bit_length() - 1 if d & (d - 1) == 0 else -1)


def _mask_dtype(bits: int) -> type:
    """The smallest of uint16 and uint32 with ``bits`` bits (int64 beyond 32). Not uint8: with
    16 bits the shipped configs (1 or 6 partitions) and the loop what-if ``separate_partitions``
    (11) share one compiled variant of each kernel, half the first compile (2026-12-04, built ahead of
    time: 32.4 CPU-s for two variants, 18.0 for one), for one byte more per pass."""
    return next((d for d in (np.uint16, np.uint32) if bits <= 8 * np.dtype(d).itemsize), np.int64)


@lru_cache(maxsize=16)
def lane_table(hw: HardwareConfig) -> LaneTable:
    """The (cached) ``LaneTable`` of ``hw``."""
    return LaneTable(hw)


def kernel_rows(ops: np.ndarray, addr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``ops`` as int16 and ``addr`` as int32 (int64 if it does not fit), read-only and
    contiguous like a ``Trace``'s columns: one compiled version of each kernel serves all."""
    ops = np.ascontiguousarray(ops, dtype=np.int16)
    addr = np.asarray(addr)
    if addr.dtype != np.int32:
        wide = addr.astype(np.int64, copy=False)
        fits = not wide.size or np.iinfo(np.int32).min <= wide.min() <= wide.max() <= 2**31 - 1
        addr = wide.astype(np.int32) if fits else wide
    addr = np.ascontiguousarray(addr)
    return _read_only(ops), _read_only(addr)


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.setflags(write=False)
    return view


def pass_columns(n: int, table: LaneTable, **sizes: int) -> tuple[np.ndarray, ...]:
    """The ``out`` columns of ``fill_passes`` (row, index, lane_mask, bytes, partitions,
    bank_cycles, start) in the dtypes every caller uses: ``n`` rows each, but the columns
    named in ``sizes`` (e.g. ``row=0`` to skip it, ``start=rows + 1``)."""
    dtypes = (np.int64, np.int8, np.int64, np.int16, table.mask_dtype, np.int16, np.int32)
    names = ("row", "index", "lane_mask", "bytes", "partitions", "bank_cycles", "start")
    lengths = [sizes.get(name, 0 if name == "start" else n) for name in names]
    start_dtype = np.int32 if n < 2**31 else np.int64
    return tuple(
        np.empty(k, start_dtype if name == "start" else d)
        for name, d, k in zip(names, dtypes, lengths, strict=True)
    )
