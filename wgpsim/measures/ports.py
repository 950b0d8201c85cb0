"""Port ceilings: the most B/cycle a trace's passes could get from the arbiter's ports.

A pair presents one pass a cycle and two pairs are served in the same cycle only if their passes
touch disjoint partitions (the AMD blog, Part II), so a trace's ceiling is the bytes one of its
passes moves times the number of ports its pairs could use at once: the largest number of SIMD
pairs that each have some pass whose partitions are disjoint from the passes chosen for the
others, at most the number of ports (one pair alone never gets more than one port). It holds
whatever the timing; the engine then tells whether lock-step warps reach it.

The blog's plain layout puts all four rows in partition 0, so any two pairs' passes conflict:
one port, 256 B/cycle; the partitioned layout gives pair A one partition and pair B another:

>>> from wgpsim.hw import load_hardware
>>> from wgpsim.trace.generate import streaming_trace
>>> hw = load_hardware()
>>> plain = streaming_trace(4, 8, "ds_load_b128", lambda w: w * 4096)
>>> split = streaming_trace(4, 8, "ds_load_b128", lambda w: (w % 2) * 65536 + (w // 2) * 4096)
>>> peak_bytes_per_cycle(plain, hw), peak_bytes_per_cycle(split, hw)
(256, 512)
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from wgpsim.hw import HardwareConfig
from wgpsim.hw.rules import pass_table
from wgpsim.trace.instructions import is_lds
from wgpsim.trace.trace import Trace

__all__ = ["peak_bytes_per_cycle", "usable_ports"]


def usable_ports(trace: Trace, hw: HardwareConfig) -> int:
    """Ports the trace's passes could be granted on in the same cycle, at best.

    The largest number of SIMD pairs that each have some pass whose partitions are disjoint from
    the others' chosen passes, at most the number of ports (see the module docstring).
    """
    rows = np.flatnonzero(is_lds(trace.op))
    passes = pass_table(trace.op[rows], trace.addr[rows], hw, trace.arg[rows])
    pair_of_warp = np.array([hw.pair_of_warp(w) for w in range(trace.num_warps)])
    pair = pair_of_warp[trace.warp[rows[passes.row]]]
    masks = [np.unique(passes.partitions[pair == p]).tolist() for p in range(hw.num_pairs)]
    masks = [m for m in masks if m]
    best = 1
    for k in range(2, min(len(masks), hw.num_ports) + 1):
        if any(_disjoint_choice(group) for group in combinations(masks, k)):
            best = k
    return best


def peak_bytes_per_cycle(trace: Trace, hw: HardwareConfig) -> int:
    """The candidate's ceiling: ``usable_ports`` x the most bytes one of its passes moves.

    A ``ds_load_b128`` pass fills a 256 B port-cycle; a ``ds_load_b32`` pass moves 128 B, so its
    ceiling is half the ports' width.
    """
    rows = np.flatnonzero(is_lds(trace.op))
    passes = pass_table(trace.op[rows], trace.addr[rows], hw, trace.arg[rows])
    per_pass = min(int(passes.bytes.max()), hw.ports.bytes_per_cycle) if len(passes) else 0
    return usable_ports(trace, hw) * per_pass


def _disjoint_choice(groups: tuple[list[int], ...], taken: int = 0) -> bool:
    """Whether one mask can be picked from each group with no partition picked twice."""
    if not groups:
        return True
    return any(m & taken == 0 and _disjoint_choice(groups[1:], taken | m) for m in groups[0])
