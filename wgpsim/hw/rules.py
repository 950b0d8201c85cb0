"""The static rules of the LDS datapath, as plain functions (no simpy; every engine calls them).

Each rule is stated once, as a compiled kernel in ``wgpsim.hw._kernels``; the functions here
convert their arguments and call it (the fast engine calls the kernels from its compiled loop).

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

from wgpsim.hw import _kernels
from wgpsim.hw.config import HardwareConfig, load_hardware  # noqa: F401 (doctests)
from wgpsim.trace.instructions import (
    INSTRUCTIONS,
    NUM_LDS_OPS,
    OP_BYTES_PER_LANE,
    OPS,
    instruction,
    op_code,
)

__all__ = [
    "ArbiterState",
    "Decision",
    "Head",
    "Pass",
    "PassTable",
    "bank_cycles",
    "bank_of",
    "grant",
    "LaneTable",
    "lane_groups",
    "lane_table",
    "partition_of",
    "pass_table",
    "split_passes",
]


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


class LaneTable:
    """``lane_groups`` of every LDS op as the kernels take them: ``lanes[op, pass, j]`` is lane j
    of pass ``pass`` (``count[op]`` passes of ``width[op]`` lanes), ``bytes_per_lane[op]``, and
    the sizes the rules divide by as (size, log2 size or -1)."""

    def __init__(self, hw: HardwareConfig) -> None:
        groups = [lane_groups(OPS[code], hw) for code in range(NUM_LDS_OPS)]
        self.count = np.array([g.shape[0] for g in groups], dtype=np.int64)
        self.width = np.array([g.shape[1] for g in groups], dtype=np.int64)
        self.lanes = np.zeros((NUM_LDS_OPS, self.count.max(), self.width.max()), dtype=np.int64)
        for code, g in enumerate(groups):
            self.lanes[code, : g.shape[0], : g.shape[1]] = g
        self.bytes_per_lane = OP_BYTES_PER_LANE[:NUM_LDS_OPS].copy()
        self.sizes = (
            _divisor(hw.partitions.size),
            _divisor(hw.banks.width_bytes),
            _divisor(hw.banks.count),
        )
        self.mask_dtype = _mask_dtype(hw.partitions.count)

    def kernel_args(self, ops: np.ndarray, addr: np.ndarray) -> tuple[tuple, int]:
        """The kernels' arguments for LDS rows ``ops``/``addr`` (converted as ``kernel_rows``)
        and the number of their passes (``_kernels.count_passes``)."""
        ops, addr = kernel_rows(ops, addr)
        args = (ops, addr, _NO_ROWS, self.lanes, self.count, self.width)
        return args, _kernels.count_passes(*args)

    def fill(self, args: tuple, out: tuple) -> int:
        """``_kernels.fill_passes`` of ``args`` into ``out``; returns the bytes of all passes."""
        return _kernels.fill_passes(*args, self.bytes_per_lane, *self.sizes, out)


_NO_ROWS = np.zeros(0, dtype=np.int64)


def _divisor(d: int) -> tuple[int, int]:
    """(d, log2 d) for a power of two, else (d, -1): what the kernels divide by."""
    return d, (d.bit_length() - 1 if d & (d - 1) == 0 else -1)


def _mask_dtype(bits: int) -> type:
    """The smallest unsigned dtype with ``bits`` bits (int64 beyond 32)."""
    return next(
        (d for d in (np.uint8, np.uint16, np.uint32) if bits <= 8 * np.dtype(d).itemsize), np.int64
    )


@lru_cache(maxsize=16)
def lane_table(hw: HardwareConfig) -> LaneTable:
    """The (cached) ``LaneTable`` of ``hw``."""
    return LaneTable(hw)


def kernel_rows(ops: np.ndarray, addr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``ops`` as int16 and ``addr`` as int32 (int64 if it does not fit), read-only and
    contiguous like a ``Trace``'s columns: one compiled version of each kernel serves all."""
    ops = np.ascontiguousarray(ops, dtype=np.int16)
    addr = np.asarray(addr)
    if addr.dtype != np.int32:
        wide = addr.astype(np.int64, copy=False)
        fits = not wide.size or np.iinfo(np.int32).min <= wide.min() <= wide.max() <= 2**31 - 1
        addr = wide.astype(np.int32) if fits else wide
    addr = np.ascontiguousarray(addr)
    return _read_only(ops), _read_only(addr)


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.setflags(write=False)
    return view


def pass_columns(n: int, table: LaneTable, **sizes: int) -> tuple[np.ndarray, ...]:
    """The ``out`` columns of ``_kernels.fill_passes`` (row, index, lane_mask, bytes,
    partitions, bank_cycles, start) in the dtypes every caller uses: ``n`` rows each, but the
    columns named in ``sizes`` (e.g. ``row=0`` to skip it, ``start=rows + 1``)."""
    dtypes = (np.int64, np.int8, np.int64, np.int16, table.mask_dtype, np.int16, np.int32)
    names = ("row", "index", "lane_mask", "bytes", "partitions", "bank_cycles", "start")
    lengths = [sizes.get(name, 0 if name == "start" else n) for name in names]
    start_dtype = np.int32 if n < 2**31 else np.int64
    return tuple(
        np.empty(k, start_dtype if name == "start" else d)
        for name, d, k in zip(names, dtypes, lengths, strict=True)
    )


def bank_cycles(addr: np.ndarray, bytes_per_lane: int, hw: HardwareConfig) -> int:
    """Port cycles one pass needs: the most distinct dwords falling in one bank, at least 1.

    >>> bank_cycles(np.array([0, 256, 256, 4]), 4, load_hardware())  # bank 0 twice, 256 shared
    2
    """
    table = lane_table(hw)
    ops, addr = kernel_rows(np.zeros(1), np.asarray(addr).reshape(1, -1))
    n = addr.shape[1]
    out = pass_columns(1, table)
    args = (
        ops,
        addr,
        _NO_ROWS,
        np.arange(n, dtype=np.int64).reshape(1, 1, n),
        np.ones(1, dtype=np.int64),
        np.array([n], dtype=np.int64),
    )
    bpl = np.array([bytes_per_lane], dtype=table.bytes_per_lane.dtype)
    passes = _kernels.count_passes(*args)
    _kernels.fill_passes(*args, bpl, *table.sizes, out)
    return int(out[5][0]) if passes else 1


def pass_table(ops: np.ndarray, addr: np.ndarray, hw: HardwareConfig) -> PassTable:
    """All passes of LDS instructions ``ops`` (op codes) with lane addresses ``addr`` [n, 32],
    in row then pass order; passes with no active lane are skipped."""
    codes = np.asarray(ops)
    if codes.size and codes.max() >= NUM_LDS_OPS:  # raises the TraceError naming valid ones
        instruction(OPS[int(codes[codes >= NUM_LDS_OPS].min())])
    table = lane_table(hw)
    args, n = table.kernel_args(codes, addr)
    out = pass_columns(n, table)
    table.fill(args, out)
    return PassTable(*(np.asarray(c, dtype=np.int64) for c in out[:6]))


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
    n = max(len(heads), 1)
    columns = np.zeros((3, n), dtype=np.int64)
    for i, h in enumerate(heads):
        columns[:, i] = (h.pair, h.issued, h.partitions)
    out = np.zeros((2, 2 * n), dtype=np.int64)
    granted, stalled, favor = _kernels.grant(
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
