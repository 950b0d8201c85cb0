"""The fast engine's pass rules as compiled kernels (``_fast_passes`` prepares their arguments and
columns): ``fill_passes`` splits rows into passes; a pass's partitions and bank cycles.

Bank cycles are counted with bit masks: dword d lies in bank d mod 64 of bank row d // 64, so a
pass is a set of bank rows, each with a 64-bit mask of the banks it touches, and its bank cycles
are the most rows sharing a bit (beyond ``MAX_BANKS`` banks the dwords are counted one by one).
The most rows sharing a bank, of masks 0b011, 0b110 and 0b010:

>>> _most_rows_per_bank(np.array([0b011, 0b110, 0b010]), 3)
3
"""

from __future__ import annotations

import numpy as np
from numba import njit

MAX_BANKS = 64
"""Banks of one bank row fit one int64 mask up to this many banks (beyond: a plain count)."""
NEVER = np.iinfo(np.int64).max


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
