"""The fast engine's statement of the arbiter's grant: a compiled kernel its loop inlines,
written apart from the reference ``wgpsim.hw.rules.grant`` (the tests compare the two).

The rule (docs/DESIGN.md, "Engine timing rules"): the config's policy orders the heads
(``oldest_first``: by issue cycle, equal ones from pair ``favor`` on, ``favor`` moving on
when two tie; ``round_robin``: from pair ``favor`` on, ``favor`` moving past the first pair
granted; ``fixed_priority``: by pair); each gets the lowest free port unless it shares a
partition with a pass in service or a head granted before it this cycle (then it stalls).
Two heads in one partition: the older (pair 1) gets port 0, pair 0 stalls, no tie:

>>> from wgpsim.hw.config import load_hardware
>>> heads = np.array([[0, 1], [6, 5], [0b01, 0b01]])
>>> out = np.zeros((2, 4), np.int64)
>>> policy = policy_of(load_hardware())  # oldest_first, ties alternate
>>> grant(heads, 2, np.zeros(2, np.int64), np.ones(2, np.bool_), 0, policy, np.zeros(2, np.int64), out)
(1, 1, 0)
>>> out[0, :2].tolist(), out[1, :1].tolist()
([1, 0], [0])
"""

from __future__ import annotations

import numpy as np  # noqa: F401  (the doctest)
from numba import njit

from wgpsim.engine._fast_state import (
    FIXED_PRIORITY,
    ISSUED,
    OLDEST_FIRST,
    PAIR,
    PARTS,
    POLICY_CODES,
    ROUND_ROBIN,
    policy_of,
)

__all__ = ["ISSUED", "PAIR", "PARTS", "POLICY_CODES", "grant", "policy_of"]


@njit(cache=True, inline="always")
def grant(heads, nheads, held, ports_free, favor, policy, order, out):
    """The arbiter's decision for one cycle, as ``rules.grant``: the heads (columns of
    ``heads[:, :nheads]``: pair, issue cycle, partitions) are ordered by ``policy`` = (code
    in ``POLICY_CODES``, 1 if ``tie_break`` is ``alternate``, 1 if partitions can conflict);
    each is granted the lowest free port unless it shares a partition with a pass in service
    (``held``, per pair) or a head granted before it this cycle, then it stalls (never with
    one partition).

    Writes grants (pair, port, pair, port, ...) to ``out[0]`` and stalled pairs to ``out[1]``,
    marks granted ports taken in ``ports_free``; ``order`` is scratch.
    Returns (number granted, number stalled, next favor).
    """
    npairs = len(held)
    for i in range(nheads):
        order[i] = i
    for i in range(1, nheads):  # insertion sort by the policy's key
        x = order[i]
        key = _key(heads, x, policy, favor, npairs)
        j = i - 1
        while j >= 0 and _key(heads, order[j], policy, favor, npairs) > key:
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = x
    taken = 0
    for p in range(npairs):
        taken |= held[p]
    granted, stalled = 0, 0
    for i in range(nheads):
        h = order[i]
        if policy[2] and heads[PARTS, h] & taken:
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
    if policy[0] == ROUND_ROBIN:
        return granted, stalled, _after(out[0, 0] + 1, 0, npairs) if granted else favor
    if policy[0] == OLDEST_FIRST and policy[1]:
        tie = False
        for i in range(nheads):
            for j in range(i + 1, nheads):
                tie = tie or heads[ISSUED, i] == heads[ISSUED, j]
        return granted, stalled, _after(favor + 1, 0, npairs) if tie else favor
    return granted, stalled, favor


@njit(cache=True, inline="always")
def _key(heads, h, policy, favor, npairs):
    """Head h's place in the grant order (smallest first) under ``policy``."""
    pair = heads[PAIR, h]
    if policy[0] == ROUND_ROBIN:
        return _after(pair, favor, npairs), pair
    if policy[0] == FIXED_PRIORITY:
        return pair, pair
    return heads[ISSUED, h], _after(pair, favor, npairs) if policy[1] else pair


@njit(cache=True, inline="always")
def _after(pair, favor, npairs):
    """How many pairs after ``favor`` ``pair`` comes, (pair - favor) mod npairs, for pairs in
    0..npairs (no division: this runs every cycle)."""
    d = pair - favor
    return d + npairs if d < 0 else (d - npairs if d >= npairs else d)
