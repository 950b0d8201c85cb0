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

from functools import lru_cache

import numpy as np
from numba import njit

from wgpsim.hw.config import HardwareConfig, load_hardware  # noqa: F401 (doctest)
from wgpsim.hw.rules import ArbiterState, Decision, Head, PassTable, lane_groups
from wgpsim.trace.instructions import NUM_LDS_OPS, OP_BYTES_PER_LANE, OPS

__all__ = ["LaneTable", "grant", "grant_heads", "lane_table", "pass_table"]


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
    """Number of passes with at least one active lane."""
    n = 0
    for r in rows:
        op = ops[r]
        for g in range(count[op]):
            for j in range(width[op]):
                if addr[r, lanes[op, g, j]] >= 0:
                    n += 1
                    break
    return n


@njit(cache=True)
def _fill_passes(ops, addr, rows, lanes, count, width, bpl, part_size, bank_width, nbanks, out):
    """Write each non-empty pass of ``rows`` (in row, then pass order) into the ``out`` columns
    (row, index, lane_mask, bytes, partitions, bank_cycles).

    A lane reading w bytes at a touches dwords a//4 .. (a+w-1)//4 and the partitions of its
    first and last byte; bank cycles = the most distinct dwords in one bank (at least 1).
    Dword d lies in bank d mod 64 at bank row d // 64; ``seen[bank]`` lists the rows met so far.
    """
    row_out, index_out, mask_out, bytes_out, parts_out, cycles_out = out
    span = 2  # dwords one lane can touch: (widest lane) // bank width + 2
    for w in bpl:
        span = max(span, w // bank_width[0] + 2)
    seen = np.empty((nbanks[0], lanes.shape[2] * span), dtype=np.int64)
    distinct = np.zeros(nbanks[0], dtype=np.int64)
    k = 0
    for r in rows:
        op = ops[r]
        w = bpl[op]
        for g in range(count[op]):
            active, mask, parts, cycles = 0, 0, 0, 1
            for bank in range(nbanks[0]):
                distinct[bank] = 0
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
                first = _div(a, bank_width)
                bank_row = _div(first, nbanks)
                bank = first - bank_row * nbanks[0]
                for _ in range(_div(a + w - 1, bank_width) - first + 1):
                    if not _contains(seen, bank, distinct[bank], bank_row):
                        seen[bank, distinct[bank]] = bank_row
                        distinct[bank] += 1
                        cycles = max(cycles, distinct[bank])
                    bank += 1
                    if bank == nbanks[0]:
                        bank, bank_row = 0, bank_row + 1
            if active == 0:
                continue
            row_out[k], index_out[k], mask_out[k] = r, g, mask
            bytes_out[k], parts_out[k], cycles_out[k] = active * w, parts, cycles
            k += 1


@njit(cache=True, inline="always")
def _div(a, d):
    """``a // d`` for ``a >= 0`` and ``d`` given as (d, log2 d or -1): a shift for the usual
    power-of-two sizes."""
    return a >> d[1] if d[1] >= 0 else a // d[0]


@njit(cache=True, inline="always")
def _contains(values, row, n, x):
    """``x in values[row, :n]``."""
    for i in range(n):  # noqa: SIM110 (a loop: no temporary arrays in compiled code)
        if values[row, i] == x:
            return True
    return False


def pass_table(
    ops: np.ndarray, addr: np.ndarray, hw: HardwareConfig, rows: np.ndarray | None = None
) -> PassTable:
    """``rules.pass_table(ops[rows], addr[rows], hw)``, with ``row`` holding the trace rows.

    ``rows`` (default: all) picks the LDS rows of ``ops``/``addr`` (addresses stay int32,
    uncopied). Columns are compact: row int64, index int8, the rest int64/int32.
    """
    ops = np.asarray(ops)
    rows = np.arange(len(ops), dtype=np.int64) if rows is None else np.asarray(rows, np.int64)
    t = lane_table(hw)
    args = (ops, np.asarray(addr), rows, t.lanes, t.count, t.width)
    n = _count_passes(*args)
    out = (
        np.empty(n, np.int64),
        np.empty(n, np.int8),
        np.empty(n, np.int64),
        np.empty(n, np.int32),
        np.empty(n, np.int64),
        np.empty(n, np.int32),
    )
    _fill_passes(*args, t.bytes_per_lane, t.part_size, t.bank_width, t.banks, out)
    return PassTable(*out)


# -- the arbiter -----------------------------------------------------------------------------


@njit(cache=True)
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
    pairs, issued, parts, npairs = heads[0], heads[1], heads[2], len(held)
    for i in range(nheads):
        order[i] = i
    for i in range(1, nheads):  # insertion sort by (issued, (pair - favor) mod npairs)
        x = order[i]
        key = (issued[x], (pairs[x] - favor) % npairs)
        j = i - 1
        while j >= 0 and (issued[order[j]], (pairs[order[j]] - favor) % npairs) > key:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x
    tie = False
    for i in range(nheads):
        for j in range(i + 1, nheads):
            tie = tie or issued[i] == issued[j]
    taken = 0
    for mask in held:
        taken |= mask
    granted, stalled = 0, 0
    for i in range(nheads):
        h = order[i]
        if parts[h] & taken:
            out[1, stalled] = pairs[h]
            stalled += 1
            continue
        for port in range(len(ports_free)):
            if ports_free[port]:
                ports_free[port] = False
                out[0, 2 * granted], out[0, 2 * granted + 1] = pairs[h], port
                granted += 1
                taken |= parts[h]
                break
    return granted, stalled, (favor + 1) % npairs if tie else favor


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
