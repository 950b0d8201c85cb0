"""The two LDS rules of ``wgpsim.hw.rules``, compiled with numba for the fast engine.

``pass_table`` and ``grant`` state exactly the rules of ``wgpsim.hw.rules.pass_table`` and
``wgpsim.hw.rules.grant`` (docs/DESIGN.md, "Engine timing rules"), written as loops over lanes
and heads so that numba can compile them; ``tests/test_engine_differential.py`` checks both
against ``rules`` on random inputs. The numpy pass table of ``rules`` costs about 2 us per pass,
more than the whole fast engine, hence this version.

A 2-way bank conflict (lanes reading 0 and 512) and a broadcast, as in ``rules``:

>>> from wgpsim.trace.instructions import op_code
>>> hw = load_hardware()
>>> addr = np.stack([512 * (np.arange(32) % 2), np.zeros(32, dtype=int)]).astype(np.int32)
>>> t = pass_table(np.full(2, op_code("ds_load_b32")), addr, hw)
>>> t.bank_cycles.tolist(), t.bytes.tolist(), t.partitions.tolist()
([2, 1], [128, 128], [1, 1])

Two heads in one partition: the older is granted port L, the other stalls:

>>> from wgpsim.hw.rules import ArbiterState, Head
>>> heads = (Head(0, issued=6, partitions=0b01), Head(1, issued=5, partitions=0b01))
>>> grant_heads(heads, ArbiterState.idle(hw), hw)
Decision(granted=((1, 0),), stalled=(0,), favor=0)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba import njit

from wgpsim.errors import ConfigError
from wgpsim.hw.config import HardwareConfig, load_hardware  # noqa: F401 (doctest)
from wgpsim.hw.rules import ArbiterState, Decision, Head, PassTable, lane_groups
from wgpsim.trace.instructions import NUM_LDS_OPS, OP_BYTES_PER_LANE, OPS

PAIR, ISSUED, PARTS = range(3)
"""Rows of the ``heads`` argument of ``grant``."""
_MAX_BANKS = 64
NEVER = np.iinfo(np.int64).max
"""Banks of one bank row fit one int64 mask."""

__all__ = [
    "LaneTable",
    "LoopPasses",
    "grant",
    "grant_heads",
    "lane_table",
    "loop_passes",
    "pass_table",
]


# -- passes ----------------------------------------------------------------------------------


class LaneTable:
    """``rules.lane_groups`` of every LDS op as arrays: ``lanes[op, pass, j]`` is lane j of pass
    ``pass`` (``count[op]`` passes of ``width[op]`` lanes), ``bytes_per_lane[op]``."""

    def __init__(self, hw: HardwareConfig) -> None:
        groups = [lane_groups(OPS[code], hw) for code in range(NUM_LDS_OPS)]
        self.count = np.array([g.shape[0] for g in groups], dtype=np.int64)
        self.width = np.array([g.shape[1] for g in groups], dtype=np.int64)
        self.lanes = np.zeros((NUM_LDS_OPS, self.count.max(), self.width.max()), dtype=np.int64)
        for code, g in enumerate(groups):
            self.lanes[code, : g.shape[0], : g.shape[1]] = g
        self.bytes_per_lane = OP_BYTES_PER_LANE[:NUM_LDS_OPS].copy()
        self.part_size, self.bank_width, self.banks = (
            _divisor(hw.partitions.size),
            _divisor(hw.banks.width_bytes),
            _divisor(hw.banks.count),
        )


def _divisor(d: int) -> tuple[int, int]:
    """(d, log2 d) for a power of two, else (d, -1): what the kernels divide by."""
    return d, (d.bit_length() - 1 if d & (d - 1) == 0 else -1)


@lru_cache(maxsize=16)
def lane_table(hw: HardwareConfig) -> LaneTable:
    """The (cached) ``LaneTable`` of ``hw``."""
    return LaneTable(hw)


@njit(cache=True)
def _count_passes(ops, addr, rows, lanes, count, width):
    """Number of passes with at least one active lane of ``rows`` (every row when empty;
    rows of control ops have none)."""
    n = 0
    for i in range(len(rows) if len(rows) else len(ops)):
        r = rows[i] if len(rows) else i
        op = ops[r]
        if op >= len(count):
            continue
        for g in range(count[op]):
            for j in range(width[op]):
                if addr[r, lanes[op, g, j]] >= 0:
                    n += 1
                    break
    return n


@njit(cache=True)
def _fill_passes(ops, addr, rows, lanes, count, width, bpl, part_size, bank_width, nbanks, out):
    """Write each non-empty pass of ``rows`` (as in ``_count_passes``; in row, then pass
    order) into the ``out`` columns (row, index, lane_mask, bytes, partitions, bank_cycles,
    start); an empty column is skipped. ``start[i]`` is the first pass of row i, ``start[-1]``
    the number of passes. Returns the bytes of all passes.

    A lane reading w bytes at a touches dwords a//4 .. (a+w-1)//4 and the partitions of its
    first and last byte; bank cycles = the most distinct dwords in one bank (at least 1).
    Dword d lies in bank d mod 64 of bank row d // 64, so a pass is a set of bank rows, each
    with a 64-bit mask of the banks it touches: the bank cycles are the most rows sharing a bit.
    """
    row_out, index_out, mask_out, bytes_out, parts_out, cycles_out, start = out
    span = 2  # bank rows one lane can touch
    for w in bpl:
        span = max(span, w // bank_width[0] + 2)
    bank_rows = np.empty(lanes.shape[2] * span, dtype=np.int64)
    bank_masks = np.empty(lanes.shape[2] * span, dtype=np.int64)
    k, total = 0, 0
    for i in range(len(rows) if len(rows) else len(ops)):
        r = rows[i] if len(rows) else i
        if len(start):
            start[i] = k
        op = ops[r]
        if op >= len(count):
            continue
        w = bpl[op]
        for g in range(count[op]):
            active, mask, parts, low, high = 0, 0, 0, NEVER, -1
            for j in range(width[op]):
                lane = lanes[op, g, j]
                a = np.int64(addr[r, lane])
                if a < 0:
                    continue
                active += 1
                mask |= np.int64(1) << lane
                parts |= (np.int64(1) << _div(a, part_size)) | (
                    np.int64(1) << _div(a + w - 1, part_size)
                )
                low = min(low, _div(a, bank_width))
                high = max(high, _div(a + w - 1, bank_width))
            if active == 0:
                continue
            if len(row_out):
                row_out[k], mask_out[k], bytes_out[k] = r, mask, active * w
            if len(index_out):
                index_out[k] = g
            parts_out[k] = parts
            # dwords closer than one bank row apart cannot share a bank: one cycle
            cycles_out[k] = 1
            if high - low >= nbanks[0]:
                nrows = _bank_rows(
                    addr, r, lanes, op, g, width[op], w, bank_width, nbanks, bank_rows, bank_masks
                )
                cycles_out[k] = _most_rows_per_bank(bank_masks, nrows)
            total += active * w
            k += 1
    if len(start):
        start[-1] = k
    return total


@njit(cache=True, inline="always")
def _bank_rows(addr, r, lanes, op, g, nlanes, w, bank_width, nbanks, rows, masks):
    """The bank rows that pass g of row r touches (its ``nlanes`` lanes ``lanes[op, g]`` of
    w bytes), in ``rows``, with a mask of the banks touched in each in ``masks``; returns
    their number."""
    nrows, b = 0, 0
    for j in range(nlanes):
        a = np.int64(addr[r, lanes[op, g, j]])
        if a < 0:
            continue
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


@njit(cache=True, inline="always")
def _bits(n):
    """The mask of the n low bits (n <= 64)."""
    return np.int64(-1) if n >= 64 else (np.int64(1) << n) - 1


@njit(cache=True, inline="always")
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


def pass_table(
    ops: np.ndarray, addr: np.ndarray, hw: HardwareConfig, rows: np.ndarray | None = None
) -> PassTable:
    """``rules.pass_table(ops[rows], addr[rows], hw)``, with ``row`` holding the trace rows.

    ``rows`` (default: all) picks the LDS rows of ``ops``/``addr`` (addresses stay int32,
    uncopied). Columns are compact: row int64, index int8, lane_mask int64, bytes int16,
    partitions the smallest dtype of ``partitions.count`` bits, bank_cycles int16.
    """
    selected = np.zeros(0, np.int64) if rows is None else np.asarray(rows, np.int64)
    if rows is not None and len(selected) == 0:  # the kernels read "no rows" as every row
        ops, addr = np.asarray(ops)[:0], np.asarray(addr)[:0]
    args, t = _kernel_args(ops, addr, selected, hw)
    n = _count_passes(*args)
    out = (
        np.empty(n, np.int64),
        np.empty(n, np.int8),
        np.empty(n, np.int64),
        np.empty(n, np.int16),
        np.empty(n, _mask_dtype(hw.partitions.count)),
        np.empty(n, np.int16),
        np.empty(0, np.int64),
    )
    _fill_passes(*args, t.bytes_per_lane, t.part_size, t.bank_width, t.banks, out)
    return PassTable(*out[:6])


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
    ops: np.ndarray, addr: np.ndarray, hw: HardwareConfig, *, index: bool
) -> LoopPasses:
    """``pass_table`` of every row, in the columns the loop needs, in the smallest dtypes."""
    args, t = _kernel_args(ops, addr, np.zeros(0, np.int64), hw)
    n = _count_passes(*args)
    none = np.empty(0, np.int8)
    start = np.empty(len(ops) + 1, np.int32 if n < 2**31 else np.int64)
    out = (
        none,
        np.empty(n if index else 0, np.int8),
        none,
        none,
        np.empty(n, _mask_dtype(hw.partitions.count)),
        np.empty(n, np.int16),
        start,
    )
    total = _fill_passes(*args, t.bytes_per_lane, t.part_size, t.bank_width, t.banks, out)
    return LoopPasses(start, out[4], out[5], out[1], int(total))


def _kernel_args(ops, addr, rows, hw: HardwareConfig) -> tuple[tuple, LaneTable]:
    if hw.banks.count > _MAX_BANKS:
        raise ConfigError(
            f"banks.count {hw.banks.count}: the fast engine handles at most {_MAX_BANKS} banks "
            "(use engine='des')"
        )
    t = lane_table(hw)
    return (np.asarray(ops), np.asarray(addr), rows, t.lanes, t.count, t.width), t


def _mask_dtype(bits: int) -> type:
    """The smallest unsigned dtype with ``bits`` bits (int64 beyond 32)."""
    return next(
        (d for d in (np.uint8, np.uint16, np.uint32) if bits <= 8 * np.dtype(d).itemsize), np.int64
    )


# -- the arbiter -----------------------------------------------------------------------------


@njit(cache=True, inline="always")
def grant(heads, nheads, held, ports_free, favor, order, out):
    """The arbiter's decision for one cycle, as ``rules.grant``: the heads (columns of
    ``heads[:, :nheads]``: pair, issue cycle, partitions) are taken oldest first, equal issue
    cycles from pair ``favor`` on; each is granted the lowest free port unless it shares a
    partition with a pass in service (``held``, per pair) or a head granted before it this
    cycle, then it stalls. ``favor`` moves to the next pair when two heads tie.

    Writes grants (pair, port, pair, port, ...) to ``out[0]`` and stalled pairs to ``out[1]``,
    marks granted ports taken in ``ports_free``; ``order`` is scratch.
    Returns (number granted, number stalled, next favor).
    """
    npairs = len(held)
    for i in range(nheads):
        order[i] = i
    for i in range(1, nheads):  # insertion sort by (issued, (pair - favor) mod npairs)
        x = order[i]
        key = (heads[ISSUED, x], _after(heads[PAIR, x], favor, npairs))
        j = i - 1
        while (
            j >= 0 and (heads[ISSUED, order[j]], _after(heads[PAIR, order[j]], favor, npairs)) > key
        ):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x
    tie = False
    for i in range(nheads):
        for j in range(i + 1, nheads):
            tie = tie or heads[ISSUED, i] == heads[ISSUED, j]
    taken = 0
    for p in range(npairs):
        taken |= held[p]
    granted, stalled = 0, 0
    for i in range(nheads):
        h = order[i]
        if heads[PARTS, h] & taken:
            out[1, stalled] = heads[PAIR, h]
            stalled += 1
            continue
        for port in range(len(ports_free)):
            if ports_free[port]:
                ports_free[port] = False
                out[0, 2 * granted], out[0, 2 * granted + 1] = heads[PAIR, h], port
                granted += 1
                taken |= heads[PARTS, h]
                break
    return granted, stalled, _after(favor + 1, 0, npairs) if tie else favor


@njit(cache=True, inline="always")
def _after(pair, favor, npairs):
    """How many pairs after ``favor`` ``pair`` comes, (pair - favor) mod npairs, for pairs in
    0..npairs (no division: this runs every cycle)."""
    d = pair - favor
    return d + npairs if d < 0 else (d - npairs if d >= npairs else d)


def grant_heads(heads: tuple[Head, ...], state: ArbiterState, hw: HardwareConfig) -> Decision:
    """``grant`` with the objects of ``rules.grant`` (for tests and readers)."""
    n = max(len(heads), 1)
    columns = np.zeros((3, n), dtype=np.int64)
    for i, h in enumerate(heads):
        columns[:, i] = (h.pair, h.issued, h.partitions)
    out = np.zeros((2, 2 * n), dtype=np.int64)
    granted, stalled, favor = grant(
        columns,
        len(heads),
        np.array(state.held, dtype=np.int64),
        np.array(state.ports_free, dtype=np.bool_),
        state.favor,
        np.zeros(n, dtype=np.int64),
        out,
    )
    pairs_ports = out[0, : 2 * granted].reshape(-1, 2).tolist()
    return Decision(
        tuple((p, q) for p, q in pairs_ports), tuple(out[1, :stalled].tolist()), int(favor)
    )
