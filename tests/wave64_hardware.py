"""A small wave64 hardware file for the tests: MI450's with 64 lanes per warp.

Every instruction gets the fewest passes that keep one pass within a 256 B port cycle, its
pass bits taken from the top lane bits (5, then 4, ...), but ``ds_load_b128`` (and its 2addr
twin) which gets the phase measured on a 64-bank wave64 part (issue 27): pass bit 0 = lane2 ^
lane3 ^ lane4, pass bit 1 = lane5 (lanes 0-3, 12-15, 20-27 in the first pass).

>>> hw = wave64()
>>> hw.wgp.warp_size, hw.lane_masks("ds_load_b128"), hw.lane_masks("ds_load_b64")
(64, ((2, 3, 4), (5,)), ((5,),))
"""

from __future__ import annotations

from wgpsim.hw import load_hardware
from wgpsim.trace.instructions import INSTRUCTIONS

MEASURED_B128 = [[2, 3, 4], [5]]


def wave64(**changes):
    """MI450's hardware file at wave64 (``changes``: more overrides, dotted paths)."""
    hw = load_hardware()
    port = hw.ports.bytes_per_cycle
    groupings = {}
    for op in hw.instructions:  # MI450's instructions (the gfx9 ones are other targets')
        ins = INSTRUCTIONS[op]
        bits = 0
        while (64 >> bits) * ins.bytes_per_lane > port:
            bits += 1
        groupings[op] = list(range(5, 5 - bits, -1))
    groupings["ds_load_b128"] = groupings["ds_load_2addr_b64"] = MEASURED_B128
    tables = {"blog": groupings, "triton": {"ds_load_b128": [[2], [5]]}}
    return hw.with_overrides(**{"wgp.warp_size": 64, "passes.groupings": tables}, **changes)
