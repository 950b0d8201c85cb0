"""The static rules of the LDS datapath, as plain functions (no simpy; every engine calls them).

An address lies in a partition and a bank:

>>> hw = load_hardware()
>>> partition_of(np.array([0, 65535, 65536, 4 * 65536]), hw)
array([0, 0, 1, 4])
>>> bank_of(np.array([0, 4, 252, 256]), hw)
array([ 0,  1, 63,  0])

An instruction becomes passes (one pass = what one port serves per bank cycle). The seed's
microbenchmark load, lane l reading 16 B at 16*l, is two conflict-free passes of 16 lanes:

>>> [(len(p.lanes), p.bytes, p.partitions, p.bank_cycles)
...  for p in split_passes("ds_load_b128", 16 * np.arange(32), hw)]
[(16, 256, 1, 1), (16, 256, 1, 1)]

Two distinct dwords in one bank (lanes reading 0 and 512) cost two cycles, a 2-way bank
conflict; the same dword read by every lane is a broadcast and costs one:

>>> split_passes("ds_load_b32", 512 * (np.arange(32) % 2), hw)[0].bank_cycles
2
>>> split_passes("ds_load_b32", np.zeros(32, dtype=int), hw)[0].bank_cycles
1

The arbiter grants heads whose partitions are disjoint on separate ports; a shared partition
serializes them, oldest first:

>>> grant((Head(0, issued=5, partitions=0b01), Head(1, issued=5, partitions=0b10)), ArbiterState.idle(hw), hw)
Decision(granted=((0, 0), (1, 1)), stalled=(), favor=1)
>>> grant((Head(0, issued=6, partitions=0b01), Head(1, issued=5, partitions=0b01)), ArbiterState.idle(hw), hw)
Decision(granted=((1, 0),), stalled=(0,), favor=0)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from wgpsim.hw.config import HardwareConfig, load_hardware  # noqa: F401 (doctests)
from wgpsim.trace.instructions import INSTRUCTIONS, OPS, instruction, op_code

__all__ = [
    "ArbiterState",
    "Decision",
    "Head",
    "Pass",
    "PassTable",
    "bank_cycles",
    "bank_of",
    "grant",
    "lane_groups",
    "partition_of",
    "pass_table",
    "split_passes",
]

_CHUNK_ROWS = 8192


def partition_of(addr: np.ndarray | int, hw: HardwareConfig) -> np.ndarray | int:
    """Physical partition of LDS byte address ``addr``: a // partition size (seed: 64 KiB)."""
    return np.floor_divide(addr, hw.partitions.size)


def bank_of(addr: np.ndarray | int, hw: HardwareConfig) -> np.ndarray | int:
    """Bank of byte address ``addr``: (a // bank width) mod number of banks."""
    return np.floor_divide(addr, hw.banks.width_bytes) % hw.banks.count


@lru_cache(maxsize=256)
def lane_groups(op: str, hw: HardwareConfig) -> np.ndarray:
    """Lanes of each pass of ``op``: int array [passes, lanes per pass].

    Pass k holds the lanes whose pass-selecting lane bits (config ``passes``) read k.

    >>> lane_groups("ds_load_b128", load_hardware())[:, :4]
    array([[ 0,  1,  2,  3],
           [16, 17, 18, 19]])
    >>> lane_groups("ds_load_b128", load_hardware().with_overrides(
    ...     **{"passes.lane_grouping": "triton"}))[0]
    array([ 0,  1,  2,  3,  8,  9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27])
    """
    bits = hw.lane_bits(op)
    lanes = np.arange(hw.wgp.warp_size)
    selector = sum(((lanes >> b) & 1) << i for i, b in enumerate(bits)) if bits else 0 * lanes
    groups = np.stack([lanes[selector == k] for k in range(1 << len(bits))])
    groups.setflags(write=False)
    return groups


@dataclass(frozen=True)
class Pass:
    """One pass: its active lanes, bytes moved, partitions touched (bitmask) and bank cycles."""

    lanes: tuple[int, ...]
    bytes: int
    partitions: int
    bank_cycles: int


@dataclass(frozen=True)
class PassTable:
    """Every non-empty pass of a sequence of LDS instructions, in order (columnar).

    ``row`` indexes the instruction it belongs to, ``index`` is its pass number within it
    (counting skipped empty passes), ``lane_mask`` has bit l set for each active lane l.
    """

    row: np.ndarray
    index: np.ndarray
    lane_mask: np.ndarray
    bytes: np.ndarray
    partitions: np.ndarray
    bank_cycles: np.ndarray

    def __len__(self) -> int:
        return len(self.row)


def _bank_cycles(addr: np.ndarray, bytes_per_lane: int, hw: HardwareConfig) -> np.ndarray:
    """Bank cycles of lane groups ``addr[..., lanes]`` (-1 inactive): the largest number of
    distinct dwords in one bank (at least 1)."""
    width, nbanks = hw.banks.width_bytes, hw.banks.count
    shape = addr.shape[:-1]
    active = addr >= 0
    first = addr // width
    last = (addr + bytes_per_lane - 1) // width
    span = int((last - first)[active].max(initial=0)) + 1
    dwords = first[..., None] + np.arange(span)
    valid = active[..., None] & (dwords <= last[..., None])
    dwords = np.where(valid, dwords, -1).reshape(*shape, -1)
    dwords.sort(axis=-1)
    distinct = dwords >= 0
    distinct[..., 1:] &= dwords[..., 1:] != dwords[..., :-1]
    groups = np.arange(int(np.prod(shape, dtype=np.int64))).reshape(*shape, 1)
    keys = (groups * nbanks + dwords % nbanks)[distinct]
    counts = np.bincount(keys, minlength=groups.size * nbanks).reshape(*shape, nbanks)
    return np.maximum(counts.max(axis=-1), 1)


def bank_cycles(addr: np.ndarray, bytes_per_lane: int, hw: HardwareConfig) -> int:
    """Port cycles one pass needs: the most distinct dwords falling in one bank, at least 1.

    >>> bank_cycles(np.array([0, 256, 256, 4]), 4, load_hardware())  # bank 0 twice, 256 shared
    2
    """
    return int(_bank_cycles(np.asarray(addr, dtype=np.int64)[None, :], bytes_per_lane, hw)[0])


def pass_table(ops: np.ndarray, addr: np.ndarray, hw: HardwareConfig) -> PassTable:
    """All passes of LDS instructions ``ops`` (op codes) with lane addresses ``addr`` [n, 32].

    Vectorised per op code; passes with no active lane are skipped.
    """
    ops = np.asarray(ops)
    addr = np.asarray(addr, dtype=np.int64)
    size = hw.partitions.size
    parts: list[tuple[np.ndarray, ...]] = []
    for code in np.unique(ops):
        name = OPS[int(code)]
        bpl = instruction(name).bytes_per_lane
        groups = lane_groups(name, hw)
        lane_bit = np.int64(1) << groups.astype(np.int64)
        rows_all = np.flatnonzero(ops == code)
        for start in range(0, len(rows_all), _CHUNK_ROWS):
            rows = rows_all[start : start + _CHUNK_ROWS]
            a = addr[rows][:, groups]  # [rows, passes, lanes]
            active = a >= 0
            nbytes = active.sum(axis=-1) * bpl
            touched = (np.int64(1) << (a // size)) | (np.int64(1) << ((a + bpl - 1) // size))
            masks = np.bitwise_or.reduce(np.where(active, touched, 0), axis=-1)
            lanes = np.bitwise_or.reduce(np.where(active, lane_bit, 0), axis=-1)
            cycles = _bank_cycles(a, bpl, hw)
            index = np.broadcast_to(np.arange(groups.shape[0]), nbytes.shape)
            row = np.broadcast_to(rows[:, None], nbytes.shape)
            keep = nbytes > 0
            parts.append(tuple(x[keep] for x in (row, index, lanes, nbytes, masks, cycles)))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return PassTable(*(empty,) * 6)
    columns = [np.concatenate(c).astype(np.int64) for c in zip(*parts, strict=True)]
    order = np.lexsort((columns[1], columns[0]))
    return PassTable(*(c[order] for c in columns))


def split_passes(op: str | int, addr: np.ndarray, hw: HardwareConfig) -> list[Pass]:
    """The passes of one instruction ``op`` whose lane l reads at ``addr[l]`` (-1 inactive)."""
    code = op_code(op) if isinstance(op, str) else int(op)
    if OPS[code] not in INSTRUCTIONS:
        instruction(OPS[code])  # raises the TraceError naming the valid instructions
    table = pass_table(np.array([code]), np.asarray(addr, dtype=np.int64)[None, :], hw)
    return [
        Pass(
            lanes=tuple(lane for lane in range(hw.wgp.warp_size) if (mask >> lane) & 1),
            bytes=int(nbytes),
            partitions=int(parts),
            bank_cycles=int(cycles),
        )
        for mask, nbytes, parts, cycles in zip(
            table.lane_mask, table.bytes, table.partitions, table.bank_cycles, strict=True
        )
    ]


# -- the arbiter ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Head:
    """The head pass a pair presents this cycle: its pair index, the cycle its instruction was
    issued, and the partitions it touches (bitmask)."""

    pair: int
    issued: int
    partitions: int


@dataclass(frozen=True)
class ArbiterState:
    """What the arbiter remembers between cycles: partitions held by each pair's pass in service
    (0 = none), which ports are free, and the pair that wins the next tie."""

    held: tuple[int, ...]
    ports_free: tuple[bool, ...]
    favor: int = 0

    @classmethod
    def idle(cls, hw: HardwareConfig) -> ArbiterState:
        return cls((0,) * hw.num_pairs, (True,) * hw.num_ports, 0)


@dataclass(frozen=True)
class Decision:
    """One cycle's grants as (pair, port) in grant order, the pairs stalled by a partition
    conflict, and the tie-break pair for the next cycle."""

    granted: tuple[tuple[int, int], ...]
    stalled: tuple[int, ...]
    favor: int


def grant(heads: tuple[Head, ...], state: ArbiterState, hw: HardwareConfig) -> Decision:
    """The arbiter's decision for one cycle (docs/DESIGN.md, "Engine timing rules").

    Heads are considered oldest first (earliest issue cycle); on equal issue cycles the pair
    ``state.favor`` goes first and ``favor`` then moves to the next pair. A head is granted the
    lowest free port unless it shares a partition with a pass in service or a head granted
    before it this cycle (a partition conflict: it stalls).
    """
    npairs = hw.num_pairs
    order = sorted(heads, key=lambda h: (h.issued, (h.pair - state.favor) % npairs))
    issued = [h.issued for h in heads]
    favor = (state.favor + 1) % npairs if len(set(issued)) < len(issued) else state.favor
    held = 0
    for mask in state.held:
        held |= mask
    free = [port for port, ok in enumerate(state.ports_free) if ok]
    granted: list[tuple[int, int]] = []
    stalled: list[int] = []
    for head in order:
        if head.partitions & held:
            stalled.append(head.pair)
        elif free:
            granted.append((head.pair, free.pop(0)))
            held |= head.partitions
    return Decision(tuple(granted), tuple(stalled), favor)
