"""A functional emulator of the LDS loads: what every lane holds after one instruction.

Give it the LDS contents (a ``uint8`` array) and one byte address per lane; it returns the
lane's registers as ``[lane, element]``. Plain loads copy each lane's own bytes. The transposed
loads read the same bytes, then apply the seed's fixed cross-lane exchange (Part I, Figures 1a
and 1b): the warp is 4 independent groups of 8 lanes, and destination lane ``D_i`` of a group
receives column ``E_i`` of the 8x8 tile its source lanes read.

The exchange here is written from the seed's prose, independently of the ``fullTile`` linear
layouts in ``wgpsim.trace.transpose``; the tests prove that the two agree.

Seed toy (one 8-lane group): lane ``s`` reads row ``s`` = ``[8s, 8s+1, ..., 8s+7]``; after
``ds_load_tr16_b128`` lane ``i`` holds column ``i`` = ``[i, 8+i, 16+i, ...]``.

>>> lds = np.arange(512, dtype=np.uint16).view(np.uint8)
>>> addr = 16 * np.arange(32)                       # lane s reads elements 8s..8s+7
>>> emulate("ds_load_b128", lds, addr, elem_bits=16)[1]
array([ 8,  9, 10, 11, 12, 13, 14, 15], dtype=uint16)
>>> emulate("ds_load_tr16_b128", lds, addr)[1]      # D1 <- E1 of S0..S7
array([ 1,  9, 17, 25, 33, 41, 49, 57], dtype=uint16)
>>> emulate("ds_load_tr16_b128", lds, addr)[8]      # D8 <- E0 of S8..S15
array([ 64,  72,  80,  88,  96, 104, 112, 120], dtype=uint16)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from wgpsim.errors import TraceError
from wgpsim.trace.instructions import LANES, WAVE_SIZES, instruction

GROUP_LANES = LANES // 4
"""Lanes of one independent exchange group (seed: "4 independent groups of 8 lanes")."""

_UINT = {bits: np.dtype(f"<u{bits // 8}") for bits in (8, 16, 32, 64)}
"""Little-endian unsigned element types: LDS bytes are little-endian."""


def tr16_source_lane(lane: ArrayLike, reg: ArrayLike) -> np.ndarray:
    """Source lane whose row feeds register ``reg`` of destination ``lane`` (ds_load_tr16_b128).

    Seed, Figure 1a: four independent 8x8 transposes; register ``r`` of lane ``8g + i`` is
    element ``i`` of the row read by lane ``8g + r``.

    >>> tr16_source_lane(9, np.arange(8))
    array([ 8,  9, 10, 11, 12, 13, 14, 15])
    """
    lane, reg = np.asarray(lane), np.asarray(reg)
    return (lane // GROUP_LANES) * GROUP_LANES + reg


def tr8_source_lane(lane: ArrayLike, reg: ArrayLike) -> np.ndarray:
    """Source lane whose row feeds register ``reg`` of destination ``lane`` (ds_load_tr8_b64).

    Seed, Figure 1b: each source group combines two runs of 4 lanes. Destination lanes D0-D7
    draw registers 0-3 from S0-S3 and registers 4-7 from S8-S11; D8-D15 from S4-S7 and
    S12-S15; the upper 16 lanes likewise.

    >>> tr8_source_lane(0, np.arange(8))
    array([ 0,  1,  2,  3,  8,  9, 10, 11])
    >>> tr8_source_lane(24, np.arange(8))
    array([20, 21, 22, 23, 28, 29, 30, 31])
    """
    lane, reg = np.asarray(lane), np.asarray(reg)
    run = GROUP_LANES // 2
    half = lane // (2 * GROUP_LANES)
    group = (lane % (2 * GROUP_LANES)) // GROUP_LANES
    return half * 2 * GROUP_LANES + (reg // run) * GROUP_LANES + group * run + reg % run


_SOURCE_LANE = {"ds_load_tr16_b128": tr16_source_lane, "ds_load_tr8_b64": tr8_source_lane}


def _read_rows(ins_name: str, lds: np.ndarray, addr: np.ndarray, distance: int) -> np.ndarray:
    """Bytes each lane reads, ``[..., lane, byte]``; inactive lanes (-1) read zeros. A 2addr
    form reads its two accesses, at the address and ``distance`` bytes on, one after the other."""
    ins = instruction(ins_name)
    if not ins.is_load:
        raise TraceError(f"emulate: {ins_name} is a store; only loads can be emulated")
    lds = np.asarray(lds)
    if lds.dtype != np.uint8 or lds.ndim != 1:
        raise TraceError(f"emulate: lds must be a 1-D uint8 array, got {lds.dtype} {lds.shape}")
    wave = LANES if ins.kind == "load_tr" else None  # gfx1250's exchanges are wave32
    if addr.shape[-1:] not in ([(wave,)] if wave else [(n,) for n in WAVE_SIZES]):
        lanes = wave or " or ".join(map(str, WAVE_SIZES))
        raise TraceError(
            f"emulate: addr must end in a dimension of {lanes} lanes, got {addr.shape}"
        )
    if (ins.addresses == 2) != (distance != 0):
        raise TraceError(
            f"emulate: {ins_name} takes {'a' if ins.addresses == 2 else 'no'} distance to a "
            f"second address, got {distance}"
        )
    active = addr >= 0
    width = ins.access_bytes
    bad = active & ((addr % ins.alignment != 0) | (addr + distance + width > lds.size))
    if bad.any():
        a = int(addr[bad][0])
        raise TraceError(
            f"emulate: {ins_name} lane address {a} is misaligned (needs a multiple of "
            f"{ins.alignment}) or past the end of the {lds.size}-byte LDS"
        )
    starts = [0, distance][: ins.addresses]
    idx = np.concatenate([np.arange(width) + d for d in starts])
    idx = np.where(active, addr, 0)[..., None] + idx
    return np.where(active[..., None], lds[idx], 0).astype(np.uint8)


def emulate(
    op: str, lds: np.ndarray, addr: ArrayLike, *, elem_bits: int | None = None, distance: int = 0
) -> np.ndarray:
    """Registers of every lane after ``op``: ``[..., lane, element]`` of unsigned ``elem_bits``.

    ``addr`` holds one byte address per lane (-1 = inactive lane, which reads zeros; a 2addr
    form reads a second access ``distance`` bytes on, its elements after the first's); leading
    dimensions are a batch of independent instructions. Plain loads default to dword elements
    (``u8``/``u16`` to their own width); transposed loads return their exchanged elements (16 bits
    for tr16, 8 for tr8) and accept no other ``elem_bits``.

    >>> lds = np.arange(64, dtype=np.uint8)
    >>> emulate("ds_load_u8", lds, np.arange(32))[:3, 0]
    array([0, 1, 2], dtype=uint8)
    >>> emulate("ds_load_b32", lds, np.full(32, 4))[0]
    array([117835012], dtype=uint32)
    >>> emulate("ds_load_2addr_b32", lds, np.full(32, 4), elem_bits=8, distance=32)[0]
    array([ 4,  5,  6,  7, 36, 37, 38, 39], dtype=uint8)
    """
    ins = instruction(op)
    addr = np.asarray(addr, dtype=np.int64)
    raw = _read_rows(op, lds, addr, int(distance))
    if ins.kind == "load_tr":
        if op not in _SOURCE_LANE:
            raise TraceError(f"emulate: {op}'s exchange is not modelled (only which rows it reads)")
        if elem_bits not in (None, ins.elem_bits):
            raise TraceError(
                f"emulate: {op} exchanges {ins.elem_bits}-bit elements, not {elem_bits}"
            )
        rows = raw.view(_UINT[ins.elem_bits])  # [..., source lane, element]
        per_row = rows.shape[-1]
        lane = np.arange(LANES)[:, None]
        reg = np.arange(per_row)[None, :]
        src = _SOURCE_LANE[op](lane, reg)
        return rows[..., src, lane % GROUP_LANES]
    if elem_bits is None:
        elem_bits = min(ins.elem_bits, 32)
    if elem_bits not in _UINT or (8 * ins.bytes_per_lane) % elem_bits:
        raise TraceError(
            f"emulate: elem_bits {elem_bits} does not divide the {8 * ins.bytes_per_lane}-bit "
            f"access of {op} (valid: 8, 16, 32, 64 dividing it)"
        )
    return raw.view(_UINT[elem_bits])
