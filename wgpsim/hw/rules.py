"""The rules of the LDS datapath as plain Python and numpy: the reference (no numba, no simpy).

``des`` uses only these functions. The fast engine states the same rules again, compiled and
written independently (``wgpsim.engine._fast_passes``, ``wgpsim.engine._fast_grant``), and the
tests compare the two: a bug in one statement shows up as a disagreement (docs/DESIGN.md,
"Engines").

An address lies in a partition and a bank:

>>> hw = load_hardware()
>>> partition_of(np.array([0, 65535, 65536, 4 * 65536]), hw)
array([0, 0, 1, 4])
>>> bank_of(np.array([0, 4, 252, 256]), hw)
array([ 0,  1, 63,  0])

An instruction becomes passes (one pass = what one port serves per bank cycle). The AMD blog's
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
from wgpsim.trace.instructions import INSTRUCTIONS, NUM_LDS_OPS, OPS, instruction, op_code

__all__ = [
    "ArbiterState",
    "Decision",
    "Head",
    "Pass",
    "POLICIES",
    "PassTable",
    "Policy",
    "bank_cycles",
    "bank_of",
    "grant",
    "lane_groups",
    "partition_of",
    "pass_table",
    "split_passes",
]

ROWS_AT_ONCE = 4096
"""Instructions whose passes ``pass_table`` computes in one numpy step (bounds its memory)."""


def partition_of(addr: np.ndarray | int, hw: HardwareConfig) -> np.ndarray | int:
    """Physical partition of LDS byte address ``addr``: a // partition size (64 KiB)."""
    return np.floor_divide(addr, hw.partitions.size)


def bank_of(addr: np.ndarray | int, hw: HardwareConfig) -> np.ndarray | int:
    """Bank of byte address ``addr``: (a // bank width) mod number of banks."""
    return np.floor_divide(addr, hw.banks.width_bytes) % hw.banks.count


# -- an instruction's passes ----------------------------------------------------------------------


@lru_cache(maxsize=256)
def lane_groups(op: str, hw: HardwareConfig) -> np.ndarray:
    """Lanes of each pass of ``op``: int array [passes, lanes per pass].

    Pass k holds the lanes whose pass bits read k: pass bit i of lane l is the XOR of the lane
    bits that mask i of the config's ``passes`` entry lists (a linear map over GF(2); a plain
    entry ``[4]`` is the one mask ``[4]``: lane bit 4 selects the pass).

    >>> lane_groups("ds_load_b128", load_hardware())[:, :4]
    array([[ 0,  1,  2,  3],
           [16, 17, 18, 19]])
    >>> lane_groups("ds_load_b128", load_hardware().with_overrides(
    ...     **{"passes.lane_grouping": "triton"}))[0]
    array([ 0,  1,  2,  3,  8,  9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27])
    >>> lane_groups("ds_load_b128", load_hardware().with_overrides(
    ...     **{"passes.groupings.blog.ds_load_b128": [[2, 3, 4]]}))[0]
    array([ 0,  1,  2,  3, 12, 13, 14, 15, 20, 21, 22, 23, 24, 25, 26, 27])
    """
    masks = hw.lane_masks(op)
    lanes = np.arange(hw.wgp.warp_size)
    selector = np.zeros_like(lanes)
    for i, mask in enumerate(masks):
        parity = np.zeros_like(lanes)
        for bit in mask:
            parity ^= (lanes >> bit) & 1
        selector |= parity << i
    groups = np.stack([lanes[selector == k] for k in range(1 << len(masks))])
    groups.setflags(write=False)
    return groups


def lane_dwords(addr: np.ndarray, width: int, hw: HardwareConfig) -> np.ndarray:
    """The dwords (bank-wide words) each lane touches: lane l reading ``width`` bytes at
    ``addr[..., l]`` touches dwords a // 4 .. (a + width - 1) // 4. Shape [..., lanes x span],
    ``span`` the most dwords an active lane touches (an unaligned lane touches one more than an
    aligned one), -1 where a lane is inactive (address -1) or touches fewer than ``span``.

    >>> lane_dwords(np.array([0, 6, -1]), 4, load_hardware()).tolist()  # 6: unaligned, 2 dwords
    [0, -1, 1, 2, -1, -1]
    >>> lane_dwords(np.array([0, 4, -1]), 4, load_hardware()).tolist()  # aligned: 1 dword each
    [0, 1, -1]
    """
    addr = np.asarray(addr, dtype=np.int64)
    word = hw.banks.width_bytes
    first, last = addr // word, (addr + width - 1) // word
    span = int(np.max(last - first, where=addr >= 0, initial=0)) + 1
    dwords = first[..., None] + np.arange(span)
    touched = (addr[..., None] >= 0) & (dwords <= last[..., None])
    return np.where(touched, dwords, -1).reshape(*addr.shape[:-1], addr.shape[-1] * span)


def pass_bank_cycles(
    addr: np.ndarray, width: int, hw: HardwareConfig, nbanks: int | None = None
) -> np.ndarray:
    """Bank cycles of each pass ``addr[i]`` (lane addresses, -1 inactive, ``width`` bytes per
    lane) through ``nbanks`` banks (default ``banks.count``): the most distinct dwords falling
    in one bank, at least 1. Lanes reading the same dword share it (a broadcast)."""
    addr = np.asarray(addr, dtype=np.int64)
    dwords = np.sort(lane_dwords(addr, width, hw), axis=-1)  # per pass; untouched (-1) first
    distinct = dwords >= 0
    distinct[:, 1:] &= dwords[:, 1:] != dwords[:, :-1]  # each dword once per pass
    nbanks = hw.banks.count if nbanks is None else nbanks
    if len(addr) * nbanks > 8 * dwords.size:  # many banks (ideal_banks' 4,096): count the runs
        which = np.broadcast_to(np.arange(len(addr))[:, None], dwords.shape)[distinct]
        key = which * nbanks + dwords[distinct] % nbanks  # (pass, bank) of each distinct dword
        return np.maximum(_most_per_key(np.sort(key), nbanks, len(addr)), 1)
    # (pass, bank) of each distinct dword; a repeat or an untouched slot counts in a spare bank
    bank = np.where(distinct, dwords % nbanks, nbanks)
    key = np.arange(len(addr))[:, None] * (nbanks + 1) + bank
    per_bank = np.bincount(key.ravel(), minlength=len(addr) * (nbanks + 1))
    return np.maximum(per_bank.reshape(len(addr), nbanks + 1)[:, :nbanks].max(axis=1, initial=0), 1)


def _most_per_key(key: np.ndarray, nbanks: int, n: int) -> np.ndarray:
    """Per pass (``key // nbanks``, of ``n``), the longest run of one key in the sorted
    ``key``: its most dwords in one bank (0 for a pass without any), without a table of every
    bank of every pass.

    >>> _most_per_key(np.array([0, 0, 1, 9, 9, 9]), 4, 3).tolist()  # pass 1 has none
    [2, 0, 3]
    """
    start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else key
    count = np.diff(np.r_[start, len(key)])
    out = np.zeros(n, np.int64)
    np.maximum.at(out, key[start] // nbanks, count)
    return out


def bank_cycles(addr: np.ndarray, bytes_per_lane: int, hw: HardwareConfig) -> int:
    """Port cycles one pass of a load needs: the most distinct dwords falling in one bank, at
    least 1.

    >>> bank_cycles(np.array([0, 256, 256, 4]), 4, load_hardware())  # bank 0 twice, 256 shared
    2
    """
    return int(pass_bank_cycles(np.asarray(addr)[None, :], bytes_per_lane, hw)[0])


def pass_partitions(addr: np.ndarray, width: int, hw: HardwareConfig) -> np.ndarray:
    """Partitions each pass ``addr[i]`` touches, as a bitmask: the partitions of every active
    lane's first and last byte."""
    addr = np.asarray(addr, dtype=np.int64)
    active = addr >= 0
    first = np.left_shift(1, partition_of(np.where(active, addr, 0), hw))
    last = np.left_shift(1, partition_of(np.where(active, addr + width - 1, 0), hw))
    return np.bitwise_or.reduce(np.where(active, first | last, 0), axis=-1)


@dataclass(frozen=True)
class Pass:
    """One pass: its active lanes, bytes moved, partitions touched (bitmask) and bank cycles."""

    lanes: tuple[int, ...]
    bytes: int
    partitions: int
    bank_cycles: int


@dataclass(frozen=True)
class PassTable:
    """Every non-empty pass of a sequence of LDS instructions, in order (columnar, int64).

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


def _passes_of(
    code: int, rows: np.ndarray, addr: np.ndarray, distance: np.ndarray, hw: HardwareConfig
) -> PassTable:
    """The passes of instructions ``rows`` (indices into ``addr``), all of op ``code``.

    A 2addr form's lane makes two accesses, at its address and ``distance`` bytes on; its pass
    is banked by, and touches the partitions of, both (docs/DESIGN.md, "Instructions become
    passes")."""
    ins = INSTRUCTIONS[OPS[code]]
    groups = lane_groups(ins.name, hw)  # [passes, lanes per pass]
    lane_addr = addr[rows][:, groups]  # [instructions, passes, lanes per pass]
    row, index = np.nonzero((lane_addr >= 0).any(axis=-1))  # passes with an active lane
    served = lane_addr[row, index]  # [passes, lanes per pass]
    active = served >= 0
    accesses = served
    if ins.addresses == 2:  # the second access of every active lane, beside the first
        second = np.where(active, served + distance[rows][row][:, None], -1)
        accesses = np.concatenate([served, second], axis=-1)
    return PassTable(
        row=rows[row],
        index=index,
        lane_mask=np.where(active, np.left_shift(1, groups[index]), 0).sum(axis=-1),
        bytes=active.sum(axis=-1) * ins.bytes_per_lane,
        partitions=pass_partitions(accesses, ins.access_bytes, hw),
        bank_cycles=pass_bank_cycles(accesses, ins.access_bytes, hw, hw.bank_count(ins.name)),
    )


def pass_table(
    ops: np.ndarray, addr: np.ndarray, hw: HardwareConfig, distance: np.ndarray | None = None
) -> PassTable:
    """All passes of LDS instructions ``ops`` (op codes) with lane addresses ``addr`` [n, 32],
    in row then pass order; passes with no active lane are skipped. ``distance`` is each row's
    byte distance to a 2addr form's second address (a trace's ``arg``; default 0).

    >>> t = pass_table(np.array([op_code("ds_load_b128")]), 16 * np.arange(32)[None], load_hardware())
    >>> t.index.tolist(), t.bytes.tolist(), t.bank_cycles.tolist()
    ([0, 1], [256, 256], [1, 1])

    ``ds_load_2addr_b64`` reading 8 B at 8*l and 8*l + 512: each 16-lane pass touches dwords
    0-31 and 128-159, banks 0-31 twice, so 2 bank cycles a pass:

    >>> t = pass_table(np.array([op_code("ds_load_2addr_b64")]), 8 * np.arange(32)[None],
    ...                load_hardware(), distance=np.array([512]))
    >>> t.bytes.tolist(), t.bank_cycles.tolist()
    ([256, 256], [2, 2])
    """
    codes = np.asarray(ops, dtype=np.int64)
    addr = np.asarray(addr, dtype=np.int64)
    distance = np.zeros(len(codes), np.int64) if distance is None else np.asarray(distance)
    if codes.size and codes.max() >= NUM_LDS_OPS:  # raises the TraceError naming valid ones
        instruction(OPS[int(codes[codes >= NUM_LDS_OPS].min())])
    pieces = [
        _passes_of(int(code), rows[start : start + ROWS_AT_ONCE], addr, distance, hw)
        for code in np.unique(codes)
        for rows in [np.flatnonzero(codes == code)]
        for start in range(0, len(rows), ROWS_AT_ONCE)
    ]
    columns = [
        np.concatenate([getattr(p, name) for p in pieces]).astype(np.int64)
        if pieces
        else np.zeros(0, dtype=np.int64)
        for name in ("row", "index", "lane_mask", "bytes", "partitions", "bank_cycles")
    ]
    order = np.lexsort((columns[1], columns[0]))  # row, then pass
    return PassTable(*(c[order] for c in columns))


def split_passes(
    op: str | int, addr: np.ndarray, hw: HardwareConfig, distance: int = 0
) -> list[Pass]:
    """The passes of one instruction ``op`` whose lane l reads at ``addr[l]`` (-1 inactive)
    and, for a 2addr form, also ``distance`` bytes on."""
    code = op_code(op) if isinstance(op, str) else int(op)
    if OPS[code] not in INSTRUCTIONS:
        instruction(OPS[code])  # raises the TraceError naming the valid instructions
    row = np.asarray(addr, dtype=np.int64)[None, :]
    table = pass_table(np.array([code]), row, hw, np.array([distance]))
    return [
        Pass(
            lanes=tuple(lane for lane in range(hw.wgp.warp_size) if (int(mask) >> lane) & 1),
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


@dataclass(frozen=True)
class Policy:
    """A grant policy: ``rank`` orders the heads (smallest first), ``next_favor`` is the
    ``favor`` the arbiter remembers for the next cycle. ``tie_break`` is the config's."""

    tie_break: str = "alternate"


class OldestFirst(Policy):
    """``oldest_first``: the earliest issue cycle first. Heads issued in the same cycle go by
    ``tie_break``: ``alternate`` starts from pair ``favor``, which then moves to the next pair
    (whenever two heads tie); ``lowest_pair`` takes the lower pair index first."""

    def rank(self, head: Head, favor: int, npairs: int) -> tuple[int, int]:
        alternate = self.tie_break == "alternate"
        return head.issued, (head.pair - favor) % npairs if alternate else head.pair

    def next_favor(self, heads, granted, favor: int, npairs: int) -> int:
        issued = [h.issued for h in heads]
        tie = len(set(issued)) < len(issued)
        return (favor + 1) % npairs if tie and self.tie_break == "alternate" else favor


class RoundRobin(Policy):
    """``round_robin``: pair ``favor`` first, then the pairs after it, whatever their heads'
    age; ``favor`` moves to the pair after the first one granted."""

    def rank(self, head: Head, favor: int, npairs: int) -> tuple[int, int]:
        return (head.pair - favor) % npairs, 0

    def next_favor(self, heads, granted, favor: int, npairs: int) -> int:
        return (granted[0][0] + 1) % npairs if granted else favor


class FixedPriority(Policy):
    """``fixed_priority``: the lower pair index first, always (pair A before B)."""

    def rank(self, head: Head, favor: int, npairs: int) -> tuple[int, int]:
        return head.pair, 0

    def next_favor(self, heads, granted, favor: int, npairs: int) -> int:
        return favor


POLICIES = {"oldest_first": OldestFirst, "round_robin": RoundRobin, "fixed_priority": FixedPriority}
"""The arbiter's grant policies by the name ``arbiter.grant_policy`` gives in the config."""


@lru_cache(maxsize=16)
def _policy(name: str, tie_break: str) -> Policy:
    """The grant policy ``name`` (``POLICIES``) with ``tie_break`` (made once: ``grant`` asks
    every cycle)."""
    return POLICIES[name](tie_break)


def grant(heads: tuple[Head, ...], state: ArbiterState, hw: HardwareConfig) -> Decision:
    """The arbiter's decision for one cycle (docs/DESIGN.md, "Engine timing rules").

    The policy (``arbiter.grant_policy``, ``POLICIES``) orders the heads; in that order a head
    is granted the lowest free port unless it shares a partition with a pass in service or a
    head granted before it this cycle (a partition conflict: it stalls). An LDS of one
    partition (``partitions.count: 1``, a chip without partitions) has no partition conflict:
    heads wait only for a free port.

    >>> rr = load_hardware().with_overrides(**{"arbiter.grant_policy": "round_robin"})
    >>> grant((Head(0, 6, 0b1), Head(1, 5, 0b1)), ArbiterState((0, 0), (True, True), 0), rr)
    Decision(granted=((0, 0),), stalled=(1,), favor=1)
    """
    npairs = hw.num_pairs
    policy = _policy(hw.arbiter.grant_policy, hw.arbiter.tie_break)
    order = sorted(heads, key=lambda h: policy.rank(h, state.favor, npairs))
    taken = 0
    for partitions in state.held:
        taken |= partitions
    free = [port for port, ok in enumerate(state.ports_free) if ok]
    granted, stalled = [], []
    partitioned = hw.partitions.count > 1
    for head in order:
        if partitioned and head.partitions & taken:
            stalled.append(head.pair)
        elif free:
            granted.append((head.pair, free.pop(0)))
            taken |= head.partitions
    favor = policy.next_favor(heads, granted, state.favor, npairs)
    return Decision(tuple(granted), tuple(stalled), favor)
