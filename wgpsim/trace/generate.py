"""Trace generators for experiments and tests, from plain numpy address arrays.

The seed's microbenchmark (Part II): four warps, each owning one 512-byte row of a [4, 256] fp16
tensor; the blocked layout gives lane l of warp w the 8 contiguous elements at w*256 + 8*l.

>>> w, lane, reg = np.meshgrid(np.arange(4), np.arange(32), np.arange(8), indexing="ij")
>>> elem_addr = 2 * (w * 256 + 8 * lane + reg)       # [warp, lane, register] byte addresses
>>> blocks = vector_loads(elem_addr, elem_bytes=2, vec=8, op="ds_load_b128")
>>> blocks.shape                                     # [warp, instruction, lane]
(4, 1, 32)
>>> t = microbenchmark_trace(blocks, "ds_load_b128")
>>> [t.to_frame().op[r] for r in t.ops_of(1)]
['barrier', 'clock', 'ds_load_b128', 'wait_ds', 'barrier', 'clock']
>>> t.lds_bytes()                                    # the tensor, read exactly once
2048
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from wgpsim.errors import TraceError
from wgpsim.trace.instructions import (
    BARRIER,
    CLOCK,
    DELAY,
    INSTRUCTIONS,
    LANES,
    WAIT_DS,
    WAIT_TENSOR,
    WAVE_SIZES,
    instruction,
    op_code,
)
from wgpsim.trace.trace import Trace, TraceBuilder
from wgpsim.trace.validate import DEFAULT_LDS_BYTES, validate


def vector_loads(addresses: np.ndarray, elem_bytes: int, vec: int, op: str) -> np.ndarray:
    """``[warp, lane, register]`` element byte addresses -> ``[warp, n_instr, lanes]`` blocks.

    Instruction i of a warp covers registers ``i*vec .. i*vec+vec-1``; each lane's address is
    that of its first register. The registers of one instruction must be contiguous in memory
    (register k at first + k*elem_bytes). For transposed loads pass the source-side addresses.
    """
    addresses = np.asarray(addresses)
    ins = instruction(op)
    if addresses.ndim != 3 or addresses.shape[1] not in WAVE_SIZES:
        raise TraceError(
            f"vector_loads: addresses must be [warp, 32 or 64 lanes, register], got {list(addresses.shape)}"
        )
    if ins.bytes_per_lane != vec * elem_bytes:
        raise TraceError(
            f"vector_loads: {op} moves {ins.bytes_per_lane} bytes per lane but vec * elem_bytes "
            f"= {vec} * {elem_bytes} = {vec * elem_bytes}"
        )
    warps, lanes, regs = addresses.shape
    if regs % vec:
        raise TraceError(f"vector_loads: {regs} registers per lane is not a multiple of vec={vec}")
    chunks = addresses.reshape(warps, lanes, regs // vec, vec)
    expected = chunks[..., :1] + np.arange(vec) * elem_bytes
    bad = np.argwhere(chunks != expected)
    if bad.size:
        w, lane, i, k = (int(x) for x in bad[0])
        raise TraceError(
            f"vector_loads: warp {w} lane {lane} register {i * vec + k}: address "
            f"{chunks[w, lane, i, k]} is not {chunks[w, lane, i, 0]} + {k}*{elem_bytes} "
            f"(registers {i * vec}..{i * vec + vec - 1} must be contiguous for one {op})"
        )
    return np.ascontiguousarray(chunks[..., 0].transpose(0, 2, 1))


def microbenchmark_trace(
    addr_blocks: np.ndarray, op: str, wait: bool = True, *, lds_bytes: int = DEFAULT_LDS_BYTES
) -> Trace:
    """The seed's timed kernel: per warp, barrier, clock "start", the loads back to back,
    ``wait_ds 0`` (if ``wait``), barrier, clock "end".

    The first barrier lines the warps up so their runs overlap; the second makes sure every load
    has retired before the closing clock read (seed, "How bandwidth is computed").
    """
    addr_blocks = np.asarray(addr_blocks)
    if addr_blocks.ndim != 3:
        raise TraceError(
            f"microbenchmark_trace: addr_blocks must be [warp, n_instr, 32 or 64], "
            f"got {list(addr_blocks.shape)}"
        )
    b = TraceBuilder(len(addr_blocks), addr_blocks.shape[2])
    b.barrier()
    for w, block in enumerate(addr_blocks):
        b.clock(w, "start")
        b.lds_many(w, op, block)
        if wait:
            b.wait_ds(w, 0)
    b.barrier()
    for w in range(len(addr_blocks)):
        b.clock(w, "end")
    return b.build(lds_bytes=lds_bytes)


def streaming_trace(
    num_warps: int,
    loads_per_warp: int,
    op: str,
    base_of_warp: Sequence[int] | Callable[[int], int],
    stride: int | None = None,
    *,
    step: int | None = None,
    timed: bool = False,
    lds_bytes: int = DEFAULT_LDS_BYTES,
    lanes: int = LANES,
) -> Trace:
    """Each warp of ``lanes`` lanes streams: lane l of load i of warp w reads ``base[w] + i*step
    + l*stride``.

    ``stride`` defaults to the instruction's bytes per lane (contiguous lanes) and ``step`` to
    lanes * stride (each load follows the previous). The loads end with ``wait_ds 0``; with
    ``timed`` they are wrapped in the microbenchmark's barriers and clocks instead.

    >>> streaming_trace(2, 4, "ds_load_b64", [0, 4096]).addr[5, :3].tolist()
    [4096, 4104, 4112]
    """
    width = instruction(op).bytes_per_lane
    stride = width if stride is None else stride
    step = lanes * stride if step is None else step
    bases = np.array(
        [base_of_warp(w) for w in range(num_warps)] if callable(base_of_warp) else base_of_warp
    )
    if bases.shape != (num_warps,):
        raise TraceError(
            f"streaming_trace: base_of_warp gives {bases.size} bases for {num_warps} warps"
        )
    blocks = (
        bases[:, None, None]
        + np.arange(loads_per_warp)[None, :, None] * step
        + np.arange(lanes)[None, None, :] * stride
    )
    if timed:
        return microbenchmark_trace(blocks, op, lds_bytes=lds_bytes)
    b = TraceBuilder(num_warps, lanes)
    for w in range(num_warps):
        b.lds_many(w, op, blocks[w])
        b.wait_ds(w, 0)
    return b.build(lds_bytes=lds_bytes)


def _random_addresses(
    rng: np.random.Generator,
    width: int,
    align: int,
    lds_bytes: int,
    distance: int = 0,
    lanes: int = LANES,
) -> np.ndarray:
    """``lanes`` lane addresses: contiguous, strided (bank-conflicting for large strides), broadcast or
    scattered, with some lanes inactive now and then; each lane reaches ``distance`` bytes
    further (a 2addr form's second access)."""
    pattern = rng.integers(4)
    reach = width + distance
    if pattern == 3:  # scattered
        addr = rng.integers(0, (lds_bytes - reach) // align + 1, size=lanes) * align
    else:
        stride = (0, width, width << int(rng.integers(1, 7)))[pattern]
        span = (lanes - 1) * stride + reach
        if span > lds_bytes:
            stride, span = width, (lanes - 1) * width + reach
        addr = rng.integers(0, (lds_bytes - span) // align + 1) * align + np.arange(lanes) * stride
    if rng.random() < 0.25:
        addr = np.where(rng.random(lanes) < 0.3, -1, addr)
    return addr


def random_trace(
    rng: np.random.Generator,
    num_warps: int | None = None,
    max_ops: int = 24,
    *,
    ops: Sequence[str] | None = None,
    p_control: float = 0.3,
    max_barriers: int = 2,
    labels: Sequence[str] = ("start", "mid", "end"),
    lds_bytes: int = DEFAULT_LDS_BYTES,
    lanes: int = LANES,
) -> Trace:
    """A random valid trace for property tests (warps of ``lanes`` lanes): random warps, LDS
    instructions (from ``ops``, default the gfx1250 ones, MI450's), addresses with and without
    bank conflicts, ``wait_ds``, ``delay``, ``clock``,
    and the same number of barriers in every warp. Warps' rows interleave randomly.

    >>> t = random_trace(np.random.default_rng(0), num_warps=4)
    >>> len(set(t.warp.tolist())) <= 4 and t == random_trace(np.random.default_rng(0), num_warps=4)
    True
    """
    num_warps = int(rng.integers(1, 9)) if num_warps is None else num_warps
    names = (
        [n for n, ins in INSTRUCTIONS.items() if ins.family == "gfx12"]  # MI450's, the default
        if ops is None
        else [instruction(o).name for o in ops]
    )
    barriers = int(rng.integers(0, max_barriers + 1))
    rows: list[tuple[int, int, int, np.ndarray | None]] = []
    keys: list[np.ndarray] = []
    for w in range(num_warps):
        stream = []
        for segment in range(barriers + 1):
            for _ in range(int(rng.integers(0, max_ops // (barriers + 1) + 1))):
                if rng.random() < p_control:
                    code = (WAIT_DS, CLOCK, DELAY, WAIT_TENSOR)[rng.integers(4)]
                    arg = (
                        int(rng.integers(len(labels))) if code == CLOCK else int(rng.integers(0, 9))
                    )
                    stream.append((w, code, arg, None))
                else:
                    ins = INSTRUCTIONS[names[rng.integers(len(names))]]
                    # a 2addr form: a distance of 1..255 offset units (small ones conflict)
                    units = min(255, lds_bytes // 2 // max(ins.offset_unit_bytes, 1))
                    dist = ins.offset_unit_bytes * int(
                        rng.choice([1, 2, 16, 64, 255]).clip(1, units)
                    )
                    addr = _random_addresses(
                        rng, ins.access_bytes, ins.alignment, lds_bytes, dist, lanes
                    )
                    if ins.kind == "tdm":  # a TDM row: the last of its instruction or not
                        dist = int(rng.integers(2))
                    stream.append((w, op_code(ins.name), dist, addr))
            if segment < barriers:
                stream.append((w, BARRIER, 0, None))
        rows += stream
        keys.append(np.sort(rng.random(len(stream))))
    order = np.argsort(np.concatenate(keys + [np.zeros(0)]), kind="stable")
    rows = [rows[i] for i in order]
    addr = np.full((len(rows), lanes), -1, dtype=np.int32)
    for i, row in enumerate(rows):
        if row[3] is not None:
            addr[i] = row[3]
    trace = Trace(
        np.array([r[0] for r in rows], dtype=np.int32),
        np.array([r[1] for r in rows], dtype=np.int16),
        np.array([r[2] for r in rows], dtype=np.int64),
        addr,
        tuple(labels),
        num_warps,
    )
    return validate(trace, lds_bytes)
