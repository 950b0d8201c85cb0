"""An op's passes as a picture needs them: which lane hits which bank, and the conflicts.

`op_passes` takes an op's lowering (`wgpsim.kernel.lowering.OpLowering`), builds the
lock-step trace the report times (`op_trace`), and splits one warp's instructions into their
passes (`wgpsim.hw.rules.lane_groups`): for each pass, the active lanes, the banks each lane's
bytes fall in, the distinct dwords per bank (more than one is a bank conflict: the pass takes
that many bank cycles) and the partitions it touches. `distinct_patterns` groups passes with
the same lanes-to-banks pattern, so a page shows each pattern once.

The seed's ``ds_load_b128`` at 16 B a lane: two passes of 16 lanes, each lane on 4 banks of its
own (lane 1 and lane 17 on banks 4-7: 64 banks of 4 B), one bank cycle each. A
``ds_load_2addr_b64`` reading 8 B at 8*l and 8*l + 512: pass 0 touches banks 0-31 twice,
pass 1 banks 32-63 twice (both accesses count, as in `wgpsim.hw.rules.pass_table`): 2 bank
cycles each:

>>> import numpy as np
>>> from wgpsim.hw.config import load_hardware
>>> from wgpsim.trace.trace import TraceBuilder
>>> b = TraceBuilder(1); b.load(0, "ds_load_b128", 16 * np.arange(32))
>>> ps = trace_passes(b.build(), 0, load_hardware())
>>> [(p.pass_index, len(p.lanes), p.banks[1], p.bank_cycles) for p in ps]
[(0, 16, (4, 5, 6, 7), 1), (1, 16, (4, 5, 6, 7), 1)]
>>> b = TraceBuilder(1); b.load(0, "ds_load_2addr_b64", 8 * np.arange(32), distance=512)
>>> [(p.bank_cycles, p.conflicted_banks[:3], p.load[0]) for p in trace_passes(b.build(), 0, load_hardware())]
[(2, (0, 1, 2), 2), (2, (32, 33, 34), 0)]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wgpsim.hw.config import HardwareConfig
from wgpsim.hw.rules import lane_dwords, lane_groups, partition_of
from wgpsim.trace.instructions import INSTRUCTIONS, NUM_LDS_OPS, OPS

__all__ = ["PassView", "distinct_patterns", "op_passes", "trace_passes"]


@dataclass(frozen=True)
class PassView:
    """One pass of one instruction of one warp: ``banks[i]`` are the banks lane ``lanes[i]``
    touches; ``load[b]`` the distinct dwords bank ``b`` serves (``bank_cycles``: the most)."""

    instruction_index: int
    pass_index: int
    instruction: str
    lanes: tuple[int, ...]
    banks: tuple[tuple[int, ...], ...]
    load: tuple[int, ...]
    bank_cycles: int
    partitions: tuple[int, ...]

    @property
    def conflicted_banks(self) -> tuple[int, ...]:
        return tuple(b for b, n in enumerate(self.load) if n > 1)

    def pattern(self) -> tuple:
        """What the picture shows (lanes, their banks); equal patterns draw the same."""
        return (self.instruction, self.lanes, self.banks)


def _pass(k: int, p: int, name: str, lanes, addr, distance: int, hw: HardwareConfig) -> PassView:
    """Pass ``p`` of instruction ``k``: lanes ``lanes`` at ``addr``; a 2addr form's lane also
    reads ``distance`` bytes on, and both accesses count (as `wgpsim.hw.rules.pass_table`)."""
    ins = INSTRUCTIONS[name]
    access = addr[:, None] if ins.addresses == 1 else np.stack([addr, addr + distance], axis=1)
    dwords = lane_dwords(access.reshape(-1), ins.access_bytes, hw).reshape(len(lanes), -1)
    nbanks = hw.bank_count(name)
    banks = tuple(tuple(sorted({int(d) % nbanks for d in row if d >= 0})) for row in dwords)
    touched = np.unique(dwords[dwords >= 0])
    load = np.bincount(touched % nbanks, minlength=nbanks)
    first = partition_of(access, hw).ravel()
    last = partition_of(access + ins.access_bytes - 1, hw).ravel()
    parts = tuple(sorted({int(x) for x in np.concatenate([first, last])}))
    cycles = int(max(load.max(initial=0), 1))
    lanes = tuple(int(x) for x in lanes)
    return PassView(k, p, name, lanes, banks, tuple(load.tolist()), cycles, parts)


def trace_passes(trace, warp: int, hw: HardwareConfig) -> list[PassView]:
    """The passes of warp ``warp``'s LDS instructions in ``trace``, in order."""
    out = []
    rows = np.flatnonzero((trace.warp == warp) & (trace.op < NUM_LDS_OPS))
    for k, row in enumerate(rows):
        name = OPS[int(trace.op[row])]
        if name not in INSTRUCTIONS:  # TDM rows: the copy engine's, not lanes
            continue
        addr = np.asarray(trace.addr[row], dtype=np.int64)
        for p, group in enumerate(lane_groups(name, hw)):
            lanes = group[addr[group] >= 0]
            if len(lanes):
                out.append(_pass(k, p, name, lanes, addr[lanes], int(trace.arg[row]), hw))
    return out


def op_passes(low, hw: HardwareConfig, warp: int = 0) -> list[PassView]:
    """The passes of warp ``warp`` of a modelled op (`OpLowering`); none when not modelled."""
    from wgpsim.kernel.lowering import op_trace

    if low.lowering is None or not low.modelled:
        return []
    return trace_passes(op_trace(low.lowering), warp, hw)


def distinct_patterns(passes: list[PassView]) -> list[tuple[PassView, list[tuple[int, int]]]]:
    """Each distinct lanes-to-banks pattern once, with the (instruction, pass) it stands for."""
    groups: dict[tuple, tuple[PassView, list[tuple[int, int]]]] = {}
    for p in passes:
        groups.setdefault(p.pattern(), (p, []))[1].append((p.instruction_index, p.pass_index))
    return list(groups.values())
