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
from numba import njit

from wgpsim.hw.config import HardwareConfig, load_hardware  # noqa: F401 (doctest)
from wgpsim.trace.instructions import (
    INSTRUCTIONS,
    NUM_LDS_OPS,
    OP_ACCESS_BYTES,
    OP_ADDRESSES,
    OP_BYTES_PER_LANE,
    OPS,
)

__all__ = ["LaneTable", "LoopPasses", "fill_passes", "lane_table", "loop_passes"]

MAX_BANKS = 64
"""Banks of one bank row fit one int64 mask up to this many banks (beyond: a plain count)."""
NEVER = np.iinfo(np.int64).max


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
        return fill_passes(*rows, *per_op, *self.sizes, out)


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
    """The smallest unsigned dtype with ``bits`` bits (int64 beyond 32)."""
    return next(
        (d for d in (np.uint8, np.uint16, np.uint32) if bits <= 8 * np.dtype(d).itemsize), np.int64
    )


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


@njit(cache=True)
def fill_passes(
    ops, addr, rows, lanes, count, width, bpl, acc, nacc, dist, part_size, bank_width, banks, out
):
    """Write each pass with at least one active lane of ``rows`` (every row when empty; rows
    of control ops have none; in row, then pass order) into the ``out`` columns (row, index,
    lane_mask, bytes, partitions, bank_cycles, start), each long enough for every lane group;
    an empty column is skipped. ``start[i]`` is the first pass of row i, ``start[-1]``
    the number of passes. Returns the bytes of all passes.

    An active lane moves ``bpl[op]`` bytes in ``nacc[op]`` accesses of ``acc[op]`` bytes, the
    s-th at its address + s * ``dist[r]`` (a 2addr form's second access).
    An access of w bytes at a touches dwords a//4 .. (a+w-1)//4 and the partitions of its
    first and last byte; bank cycles = the most distinct dwords in one bank (at least 1), of
    the ``banks[op]`` = (count, log2 count or -1) banks op goes through.
    Dword d lies in bank d mod 64 of bank row d // 64, so a pass is a set of bank rows, each
    with a 64-bit mask of the banks it touches: the bank cycles are the most rows sharing a bit.
    With more than ``MAX_BANKS`` banks a row no longer fits one mask: the dwords are counted
    one by one (``_most_dwords_per_bank``).
    """
    row_out, index_out, mask_out, bytes_out, parts_out, cycles_out, start = out
    span = 2  # bank rows (dwords) one access can touch
    for w in acc:
        span = max(span, w // bank_width[0] + 2)
    most = 1  # accesses per lane
    for n in nacc:
        most = max(most, n)
    bank_rows = np.empty(lanes.shape[2] * span * most, dtype=np.int64)
    bank_masks = np.empty(lanes.shape[2] * span * most, dtype=np.int64)
    k, total = 0, 0
    for i in range(len(rows) if len(rows) else len(ops)):
        r = rows[i] if len(rows) else i
        if len(start):
            start[i] = k
        op = ops[r]
        if op >= len(count):
            continue
        w, na, d = acc[op], nacc[op], np.int64(dist[r])
        nbanks = (banks[op, 0], banks[op, 1])
        reach = (na - 1) * d  # from a lane's first access to its last
        for g in range(count[op]):
            active, mask, lo, hi = 0, np.int64(0), NEVER, np.int64(-1)
            for j in range(width[op]):  # no branch: the lanes' lowest and highest address
                lane = lanes[op, g, j]
                a0 = np.int64(addr[r, lane])
                on = a0 >= 0
                active += on
                mask |= np.int64(on) << lane
                lo = min(lo, a0 if on else NEVER)
                hi = max(hi, a0)
            if active == 0:
                continue
            first, last = lo + min(reach, 0), hi + max(reach, 0) + w - 1
            low, high = _div(first, bank_width), _div(last, bank_width)
            parts = np.int64(1) << _div(first, part_size)
            if _div(last, part_size) != _div(first, part_size):  # the lanes' partitions, one by one
                parts = _partitions(addr, r, lanes, op, g, width[op], w, na, d, part_size)
            if len(row_out):
                row_out[k], mask_out[k], bytes_out[k] = r, mask, active * bpl[op]
            if len(index_out):
                index_out[k] = g
            parts_out[k] = parts
            # dwords closer than one bank row apart cannot share a bank: one cycle
            cycles_out[k] = 1
            if high - low >= nbanks[0] and nbanks[0] > MAX_BANKS:
                cycles_out[k] = _most_dwords_per_bank(
                    addr, r, lanes, op, g, width[op], w, na, d, bank_width, nbanks, bank_rows
                )
            elif high - low >= nbanks[0]:
                nrows = _bank_rows(
                    addr, r, lanes, op, g, width[op], w, na, d, bank_width, nbanks, bank_rows,
                    bank_masks,
                )  # fmt: skip
                cycles_out[k] = _most_rows_per_bank(bank_masks, nrows)
            total += active * bpl[op]
            k += 1
    if len(start):
        start[-1] = k
    return total


@njit(cache=True)
def _partitions(addr, r, lanes, op, g, nlanes, w, na, dist, part_size):
    """The mask of the partitions that pass g of row r touches: of the first and the last
    byte of each access (``nlanes`` lanes ``lanes[op, g]``, ``na`` accesses of w bytes
    ``dist`` apart each)."""
    parts = np.int64(0)
    for j in range(nlanes):
        a0 = np.int64(addr[r, lanes[op, g, j]])
        if a0 < 0:
            continue
        for s in range(na):
            a = a0 + s * dist
            parts |= (np.int64(1) << _div(a, part_size)) | (
                np.int64(1) << _div(a + w - 1, part_size)
            )
    return parts


@njit(cache=True)
def _bank_rows(addr, r, lanes, op, g, nlanes, w, na, dist, bank_width, nbanks, rows, masks):
    """The bank rows that pass g of row r touches (its ``nlanes`` lanes ``lanes[op, g]``, each
    ``na`` accesses of w bytes ``dist`` apart), in ``rows``, with a mask of the banks touched
    in each in ``masks``; returns their number."""
    nrows, b = 0, 0
    for i in range(nlanes * na):
        a = np.int64(addr[r, lanes[op, g, i % nlanes]])
        if a < 0:
            continue
        a += (i // nlanes) * dist
        d, last = _div(a, bank_width), _div(a + w - 1, bank_width)
        while d <= last:  # the lane's dwords, one bank row at a time
            bank_row = _div(d, nbanks)
            bank = d - (bank_row << nbanks[1] if nbanks[1] >= 0 else bank_row * nbanks[0])
            n = min(last - d + 1, nbanks[0] - bank)
            if b >= nrows or rows[b] != bank_row:  # not the last lane's bank row
                b = 0
                while b < nrows and rows[b] != bank_row:
                    b += 1
                if b == nrows:
                    rows[b], masks[b] = bank_row, 0
                    nrows += 1
            masks[b] |= _bits(n) << bank
            d += n
    return nrows


@njit(cache=True)
def _most_dwords_per_bank(addr, r, lanes, op, g, nlanes, w, na, dist, bank_width, nbanks, dwords):
    """The most distinct dwords in one bank (at least 1) of pass g of row r (``nlanes`` lanes
    ``lanes[op, g]``, each ``na`` accesses of w bytes ``dist`` apart), counted plainly;
    ``dwords`` is scratch."""
    n = 0
    for i in range(nlanes * na):
        a = np.int64(addr[r, lanes[op, g, i % nlanes]])
        if a < 0:
            continue
        a += (i // nlanes) * dist
        for d in range(_div(a, bank_width), _div(a + w - 1, bank_width) + 1):
            dwords[n] = d
            n += 1
    per_bank = np.zeros(nbanks[0], dtype=np.int64)
    most = 1
    for i in range(n):
        first = True  # dword i not seen before (a plain search: no sort to compile)
        for j in range(i):
            first = first and dwords[j] != dwords[i]
        if first:
            bank = dwords[i] % nbanks[0]
            per_bank[bank] += 1
            most = max(most, per_bank[bank])
    return most


@njit(cache=True, inline="always")
def _bits(n):
    """The mask of the n low bits (n <= 64)."""
    return np.int64(-1) if n >= 64 else (np.int64(1) << n) - 1


@njit(cache=True)
def _most_rows_per_bank(masks, n):
    """The largest number of ``masks[:n]`` sharing one bit (at least 1)."""
    union, shared = np.int64(0), np.int64(0)
    for i in range(n):
        shared |= union & masks[i]
        union |= masks[i]
    most = 1
    while shared:  # only banks read from two rows or more can set the maximum
        bit = shared & -shared
        shared ^= bit
        rows = 0
        for i in range(n):
            rows += (masks[i] & bit) != 0
        most = max(most, rows)
    return most


@njit(cache=True, inline="always")
def _div(a, d):
    """``a // d`` for ``a >= 0`` and ``d`` given as (d, log2 d or -1): a shift for the usual
    power-of-two sizes."""
    return a >> d[1] if d[1] >= 0 else a // d[0]
