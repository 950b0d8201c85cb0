"""The LDS rules as compiled kernels: the one statement of each rule, called by every engine.

Numba functions (``cache=True``) over plain arrays and ints, callable from Python and from
other compiled code; ``wgpsim.hw.rules`` wraps them in its public API (``pass_table``,
``bank_cycles``, ``split_passes``, ``grant``) and the fast engine calls them directly from its
compiled loop. The rules, as docs/DESIGN.md "Engine timing rules" states them:

- A pass (``count_passes``, ``fill_passes``): the active lanes (address >= 0) of one lane group
  of an instruction; a lane reading w bytes at a touches dwords a//4 .. (a+w-1)//4 and the
  partitions of its first and last byte. Its bytes are w per active lane, its partitions the
  OR of its lanes' partitions, its bank cycles the most distinct dwords falling in one bank
  (at least 1). Passes with no active lane are dropped.
- The grant (``grant``): heads oldest first, equal issue cycles from pair ``favor`` on; each
  gets the lowest free port unless it shares a partition with a pass in service or a head
  granted before it this cycle (then it stalls); ``favor`` moves on when two heads tie.

Passes and bank cycles are shown through their adapters in ``wgpsim.hw.rules``: dwords 0 and
64 lie in bank 0 (two cycles), a broadcast takes one:

>>> import numpy as np
>>> from wgpsim.hw.config import load_hardware
>>> from wgpsim.hw.rules import bank_cycles
>>> hw = load_hardware()
>>> bank_cycles(np.array([0, 256]), 4, hw), bank_cycles(np.array([8, 8]), 4, hw)
(2, 1)

Two heads in one partition: the older (pair 1) gets port 0, pair 0 stalls, no tie:

>>> heads = np.array([[0, 1], [6, 5], [0b01, 0b01]])
>>> out = np.zeros((2, 4), np.int64)
>>> grant(heads, 2, np.zeros(2, np.int64), np.ones(2, np.bool_), 0, np.zeros(2, np.int64), out)
(1, 1, 0)
>>> out[0, :2].tolist(), out[1, :1].tolist()
([1, 0], [0])
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["ISSUED", "MAX_BANKS", "NEVER", "PAIR", "PARTS", "count_passes", "fill_passes", "grant"]

PAIR, ISSUED, PARTS = range(3)
"""Rows of the ``heads`` argument of ``grant``."""
MAX_BANKS = 64
"""Banks of one bank row fit one int64 mask up to this many banks (beyond: a plain count)."""
NEVER = np.iinfo(np.int64).max


# -- passes ----------------------------------------------------------------------------------


@njit(cache=True)
def count_passes(ops, addr, rows, lanes, count, width):
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
def fill_passes(ops, addr, rows, lanes, count, width, bpl, part_size, bank_width, nbanks, out):
    """Write each non-empty pass of ``rows`` (as in ``count_passes``; in row, then pass
    order) into the ``out`` columns (row, index, lane_mask, bytes, partitions, bank_cycles,
    start); an empty column is skipped. ``start[i]`` is the first pass of row i, ``start[-1]``
    the number of passes. Returns the bytes of all passes.

    A lane reading w bytes at a touches dwords a//4 .. (a+w-1)//4 and the partitions of its
    first and last byte; bank cycles = the most distinct dwords in one bank (at least 1).
    Dword d lies in bank d mod 64 of bank row d // 64, so a pass is a set of bank rows, each
    with a 64-bit mask of the banks it touches: the bank cycles are the most rows sharing a bit.
    With more than ``MAX_BANKS`` banks a row no longer fits one mask: the dwords are counted
    one by one (``_most_dwords_per_bank``).
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
            if high - low >= nbanks[0] and nbanks[0] > MAX_BANKS:
                cycles_out[k] = _most_dwords_per_bank(
                    addr, r, lanes, op, g, width[op], w, bank_width, nbanks, bank_rows
                )
            elif high - low >= nbanks[0]:
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
def _most_dwords_per_bank(addr, r, lanes, op, g, nlanes, w, bank_width, nbanks, dwords):
    """The most distinct dwords in one bank (at least 1) of pass g of row r (``nlanes`` lanes
    ``lanes[op, g]`` of w bytes), counted plainly; ``dwords`` is scratch."""
    n = 0
    for j in range(nlanes):
        a = np.int64(addr[r, lanes[op, g, j]])
        if a < 0:
            continue
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
