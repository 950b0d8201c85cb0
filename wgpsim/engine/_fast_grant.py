"""The fast engine's statement of the arbiter's grant: a compiled kernel its loop inlines,
written apart from the reference ``wgpsim.hw.rules.grant`` (the tests compare the two).

The rule (docs/DESIGN.md, "Engine timing rules"): heads oldest first, equal issue cycles from
pair ``favor`` on; each gets the lowest free port unless it shares a partition with a pass in
service or a head granted before it this cycle (then it stalls); ``favor`` moves on when two
heads tie. Two heads in one partition: the older (pair 1) gets port 0, pair 0 stalls, no tie:

>>> import numpy as np
>>> heads = np.array([[0, 1], [6, 5], [0b01, 0b01]])
>>> out = np.zeros((2, 4), np.int64)
>>> grant(heads, 2, np.zeros(2, np.int64), np.ones(2, np.bool_), 0, np.zeros(2, np.int64), out)
(1, 1, 0)
>>> out[0, :2].tolist(), out[1, :1].tolist()
([1, 0], [0])
"""

from __future__ import annotations

from numba import njit

__all__ = ["ISSUED", "PAIR", "PARTS", "grant"]

PAIR, ISSUED, PARTS = range(3)
"""Rows of the ``heads`` argument of ``grant``."""


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
