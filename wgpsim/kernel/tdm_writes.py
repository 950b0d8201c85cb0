"""What a ``tensor_load_to_lds`` writes into the LDS: per warp and instruction, the 8-byte
granules of its block at the destination layout's addresses, 32 granules (256 B) a row.

Triton 3.9.0 splits a TDM copy's block over the warps (``TDMUtility.cpp``,
``TDMCommon.h``), and these functions follow it:

* `warp_distribution` (``tdmGetWarpDistribution``): warps go to the outermost dims first,
  doubling while they fit, the rest to the innermost dim; each warp copies a
  ``ceil(block / warps)`` sub-block.
* For a partitioned destination (``distributeTDMWarpsAlignToPartition``): ``gcd(warps, pieces)``
  warps along the partition dim and ``ceil(pieces / that)`` instructions per warp; pieces
  subdivided further along a partition dim that is not the innermost; the other warps on the
  other outer dims. Assumption: instruction k of the warp at position p along the partition dim
  copies piece ``k x warps_along + p``.
* Assumption: warp w's position is w in row-major order over the warps per dim (the last dim
  fastest), and a warp's sub-block is written as its element stream in row-major order
  (Triton: "TDM writes data as a linear element stream"), 8 bytes a granule, each granule at
  the LDS address of its first element (the padded layouts keep a granule's elements
  together).

The AMD blog's Part II A operand, 128 x 64 fp16 in a padded layout, 4 warps: each warp copies
32 rows (4 KiB, 16 rows of 256 B):

>>> from wgpsim.layout.notation import parse
>>> pad = parse("#ttg.padded_shared<[64:+8] {order = [1, 0], shape = [128, 64]}>")
>>> rows = block_rows(pad, (128, 64), 2, 0, num_warps=4)
>>> len(rows), [r.shape for r in rows[0]], int(rows[1][0][0, 0])
(4, [(16, 32)], 4608)
"""

from __future__ import annotations

from collections.abc import Sequence
from math import ceil, gcd, log2
from typing import Any

import numpy as np

from wgpsim.errors import LayoutError
from wgpsim.layout.addresses import local_load_addresses
from wgpsim.layout.distributed import DistributedLinearLayout
from wgpsim.layout.shared import PartitionedSharedLayout
from wgpsim.trace.instructions import LANES

__all__ = ["GRANULE_BYTES", "block_rows", "warp_distribution"]

GRANULE_BYTES = 8
"""Bytes of one TDM write granule, one "lane" of a TDM trace row (assumption, as the engines'
``tensor_load_to_lds`` rows take it: 32 granules = 256 B, one port cycle)."""


def warp_distribution(block: Sequence[int], num_warps: int) -> tuple[int, ...]:
    """``tdmGetWarpDistribution``: warps per dim, outermost first.

    >>> warp_distribution((128, 64), 4), warp_distribution((2, 64), 8), warp_distribution((1, 8), 4)
    ((4, 1), (2, 4), (1, 4))
    """
    warps = [1] * len(block)
    left = num_warps
    for i, size in enumerate(block):
        while left > 1 and warps[i] * 2 <= size:
            warps[i] *= 2
            left //= 2
    if left > 1:
        warps[-1] *= left
    return tuple(warps)


def partitioned_distribution(
    block: Sequence[int], num_warps: int, pieces: int, dim: int
) -> tuple[tuple[int, ...], int, int]:
    """``distributeTDMWarpsAlignToPartition``: (warps per dim, instructions per warp, warps
    along the partition dim before subdividing pieces).

    >>> partitioned_distribution((64, 128), 4, 8, 1)   # the blog's B: 8 pieces along N
    ((1, 4), 2, 4)
    >>> partitioned_distribution((128, 64), 4, 2, 0)   # 2 pieces along M, subdivided
    ((4, 1), 1, 2)
    """
    inner = len(block) - 1
    along = gcd(num_warps, pieces)
    instructions = ceil(pieces / along)
    first = along
    left = num_warps // along
    piece = block[dim] // pieces
    if dim != inner:
        while left >= 2 and piece % (max(1, along // pieces) * 2) == 0 and along * 2 <= block[dim]:
            along *= 2
            left //= 2
    warps = [1] * len(block)
    warps[dim] = along
    for i in range(len(block)):
        if i in (dim, inner):
            continue
        while left > 1 and warps[i] * 2 <= block[i]:
            warps[i] *= 2
            left //= 2
    return tuple(warps), instructions, first


def _element_addresses(shared: Any, shape: Sequence[int], elem_bytes: int, bases) -> np.ndarray:
    """LDS byte address of every element, row-major ``shape`` (through any `SharedView`)."""
    shape = tuple(int(s) for s in shape)
    regs = []
    for d in reversed(range(len(shape))):
        for b in range(int(log2(shape[d]))):
            regs.append([1 << b if k == d else 0 for k in range(len(shape))])
    zero = [[0] * len(shape)] * int(log2(LANES))
    dst = DistributedLinearLayout(regs or [[0] * len(shape)], zero)
    addr = local_load_addresses(dst, shared, shape, elem_bytes, bases)[0, 0]
    return addr[: int(np.prod(shape))].reshape(shape)


def block_rows(
    shared: Any,
    shape: Sequence[int],
    elem_bytes: int,
    bases,
    *,
    num_warps: int,
    lanes: int = LANES,
) -> list[list[np.ndarray]]:
    """``rows[w][k]``: warp w's instruction k, int32 ``[rows, lanes]`` granule byte addresses
    (-1 past the end of its block), for a TDM copy of a ``shape`` block into ``shared`` (a
    layout or a `wgpsim.layout.SharedView`) at ``bases``; a row is as wide as the trace's
    (``lanes``: 32 on gfx1250, the one target with a TDM)."""
    shape = tuple(int(s) for s in shape)
    addr = _element_addresses(shared, shape, elem_bytes, bases)
    per = GRANULE_BYTES // elem_bytes
    if per < 1 or shape[-1] % per:
        raise LayoutError(
            f"TDM granules of {GRANULE_BYTES} B need the inner dim ({shape[-1]}) to be a "
            f"multiple of {max(per, 1)} elements"
        )
    layout = getattr(shared, "layout", shared)
    if isinstance(layout, PartitionedSharedLayout):
        pieces = layout.num_partitions * layout.num_groups
        warps, instructions, first = partitioned_distribution(
            shape, num_warps, pieces, layout.partition_dim
        )
        dim = layout.partition_dim
    else:
        warps, instructions, first, dim = warp_distribution(shape, num_warps), 1, 1, 0
    sub = [ceil(s / w) for s, w in zip(shape, warps, strict=True)]
    out: list[list[np.ndarray]] = []
    for w in range(num_warps):
        pos = np.unravel_index(w % int(np.prod(warps)), warps)
        mine = []
        for k in range(instructions):
            lo = [int(p) * s for p, s in zip(pos, sub, strict=True)]
            hi = [min(a + s, n) for a, s, n in zip(lo, sub, shape, strict=True)]
            if instructions > 1:  # instruction k: piece k x warps_along + position
                piece = shape[dim] // (first * instructions)
                lo[dim] = (k * first + int(pos[dim])) * piece
                hi[dim] = lo[dim] + piece
            block = addr[tuple(slice(a, b) for a, b in zip(lo, hi, strict=True))]
            granules = block.reshape(-1, per)
            if (np.diff(granules, axis=1) != elem_bytes).any():
                raise LayoutError(
                    "TDM write: the destination layout does not keep 8-byte granules contiguous"
                )
            flat = granules[:, 0]
            rows = np.full((ceil(len(flat) / lanes), lanes), -1, dtype=np.int32)
            rows.ravel()[: len(flat)] = flat
            mine.append(rows)
        out.append(mine)
    return out
