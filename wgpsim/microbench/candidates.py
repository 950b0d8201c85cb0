"""GEMM layout candidates: which warp computes which C tile, who reads which operand band, and
the PartitionedSharedLayout parameters a ctaLayout implies (seed, Part II).

A WMMA ctaLayout places whole instruction tiles: its ``warp`` bases give each warp its tile and
its ``register`` bases (plus the repeats that fill the block) enumerate the instructions a warp
issues one after the other. Under the seed's lock-step assumption instruction ``r`` of every
warp runs together, so two warps *co-locate* on operand A when they compute tiles in the same
M-row in the same instruction (they read the same A bytes), and on B when they share an N-column.

The seed's 4-warp, C[128, 128] example with ``warpsPerCTA = [2, 2]`` (Figure 8): in every one of the
16 instructions w0 and w1 (pairs A and B) sit in one M-row, so A is co-located; B is not (w0, w2
share a column, and both are pair A):

>>> from wgpsim.layout.mma.wmma import AMDWMMALayout
>>> gemm = Gemm((128, 128, 128), "fp16", 4, (16, 16, 32))
>>> std = AMDWMMALayout.from_warps_per_cta([2, 2], instr_shape=(16, 16, 32))
>>> tiles = instruction_tiles(std, gemm.block_mn)
>>> tiles[0].tolist()                          # instruction 0: (tileRow, tileCol) per warp
[[0, 0], [0, 1], [1, 0], [1, 1]]
>>> pairs = [0, 1, 0, 1]
>>> len(tiles), len(cross_pair_bands(tiles, 0, pairs)[0]), len(cross_pair_bands(tiles, 1, pairs)[0])
(16, 16, 0)

The swizzled ctaLayout ``{register: [[2, 0]], warp: [[2, 1], [1, 0]]}`` (Figure 9) moves w1 to
another M-row; its pair bit then sits on tile-row bit 1, so A is cut into 32-row pieces, 2
partitions x 2 groups, and B into 16-column pieces, 2 x 4 (Figure 10):

>>> swz = AMDWMMALayout(3, False, [[2, 1], [1, 0]], [[2, 0]], (16, 16, 32))
>>> tiles = instruction_tiles(swz, gemm.block_mn)
>>> auto_partition(gemm, tiles, 0, pairs)
AutoPartition(partition_dim=0, num_partitions=2, num_groups=2, piece_shape=(32, 128), pair_bit=1)
>>> auto_partition(gemm, tiles, 1, pairs).num_groups
4
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wgpsim.errors import ConfigError, LayoutError
from wgpsim.layout.bits import is_pow2
from wgpsim.layout.dtypes import dtype_bytes
from wgpsim.layout.mma.mfma import AMDMFMALayout
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout

OPERANDS = ("a", "b")
#: Name of the operand's non-K dimension, by operand index (A is [M, K], B is [K, N]).
NON_K_NAME = ("M", "N")
#: Which C-tile coordinate an operand band follows: A the tile row, B the tile column.
BAND_AXIS = (0, 1)


@dataclass(frozen=True)
class Gemm:
    """One block of ``C[M, N] = A[M, K] x B[K, N]``: the tile, element type, warps, WMMA shape.

    ``a_k_contiguous``: A is stored with K fastest (order [1, 0]); ``b_k_contiguous``: B with K
    fastest (order [0, 1]); the seed's B is N-contiguous.
    """

    block: tuple[int, int, int]
    dtype: str
    num_warps: int
    instr_shape: tuple[int, int, int]
    k_width: int = 8
    a_k_contiguous: bool = True
    b_k_contiguous: bool = False
    transposed: bool = False
    #: 0: gfx1250's WMMA (wave32); 3 or 4: a gfx942/gfx950 ``#ttg.amd_mfma`` of that version
    #: (wave64), whose ctaLayouts are warpsPerCTA grids (`wgpsim.search.mfma`)
    mfma_version: int = 0

    @property
    def block_mn(self) -> tuple[int, int]:
        return (self.block[0], self.block[1])

    @property
    def elem_bytes(self) -> int:
        return dtype_bytes(self.dtype)

    def operand_shape(self, op: int) -> tuple[int, int]:
        """Logical shape: A ``[M, K]``, B ``[K, N]``."""
        m, n, k = self.block
        return (m, k) if op == 0 else (k, n)

    def non_k_dim(self, op: int) -> int:
        """Index of the non-K dim in the operand's shape (A: 0 = M, B: 1 = N)."""
        return 0 if op == 0 else 1

    def contiguous_dim(self, op: int) -> int:
        """The operand dim that is contiguous in memory."""
        k_contiguous = self.a_k_contiguous if op == 0 else self.b_k_contiguous
        k_dim = 1 - self.non_k_dim(op)
        return k_dim if k_contiguous else self.non_k_dim(op)

    def order(self, op: int) -> tuple[int, int]:
        """Shared-layout ``order`` (fastest dim first)."""
        c = self.contiguous_dim(op)
        return (c, 1 - c)

    def wmma(self, warp: Sequence[Sequence[int]], register: Sequence[Sequence[int]] = ()):
        """The WMMA result layout with this ctaLayout (an ``amd_mfma`` one on gfx9)."""
        if self.mfma_version:
            return self._mfma(warp, register)
        layout = AMDWMMALayout(3, self.transposed, warp, register, self.instr_shape)
        if layout.num_warps != self.num_warps:
            raise LayoutError(
                f"ctaLayout has {len(layout.warp_bases)} warp bases ({layout.num_warps} warps) but "
                f"warps is {self.num_warps}; give log2({self.num_warps}) warp bases"
            )
        return layout

    def _mfma(self, warp: Sequence[Sequence[int]], register: Sequence[Sequence[int]]):
        """The ``amd_mfma`` layout whose warp bases are ``warp`` (a warpsPerCTA grid: N bits
        first, Triton's order); registers repeat the rest of the block."""
        wn = sum(1 for b in warp if b[0] == 0)
        layout = AMDMFMALayout(
            self.mfma_version,
            (self.num_warps >> wn, 1 << wn),
            self.instr_shape,
            self.transposed,
        )
        want = [tuple(b) for b in warp]
        got = [
            (m // self.tile_shape[0], n // self.tile_shape[1])
            for m, n in layout.to_linear_layout(list(self.block_mn)).get_bases("warp")
        ]
        if layout.num_warps != self.num_warps or got != want:
            raise LayoutError(
                f"amd_mfma takes a warpsPerCTA grid, not warp bases {[list(b) for b in want]}"
            )
        return layout

    def dot_operand(self, wmma: AMDWMMALayout, op: int) -> DotOperandLayout:
        return DotOperandLayout(op, wmma, self.k_width)

    @property
    def tile_shape(self) -> tuple[int, int]:
        """(rows, cols) of one instruction's C tile (``N x M`` when ``transposed``)."""
        m, n = self.instr_shape[:2]
        return (n, m) if self.transposed else (m, n)

    def band_extent(self, op: int) -> int:
        """Rows of A (columns of B) one instruction reads: the tile's M (N) extent."""
        return self.tile_shape[BAND_AXIS[op]]


@dataclass(frozen=True)
class AutoPartition:
    """PartitionedSharedLayout parameters derived from a ctaLayout (``partitioned: auto``).

    ``pair_bit``: the bit of the tile coordinate along the partition dim that tells the SIMD
    pairs apart; pieces are ``2**pair_bit`` instruction tiles long.
    """

    partition_dim: int
    num_partitions: int
    num_groups: int
    piece_shape: tuple[int, int]
    pair_bit: int

    @property
    def num_pieces(self) -> int:
        return self.num_partitions * self.num_groups


def instruction_tiles(wmma: AMDWMMALayout, block_mn: Sequence[int]) -> np.ndarray:
    """``[instruction, warp, 2]``: the C tile (tileRow, tileCol) each warp computes in each
    instruction, instructions in register order of the ctaLayout fitted to the block."""
    ll = wmma.to_linear_layout(tuple(block_mn))
    tile_regs = wmma.tile_layout().num_bases("register")
    reps = ll.num_bases("register") - tile_regs
    reg = (np.arange(1 << reps) << tile_regs)[:, None]
    warp = np.arange(ll.in_dim_size("warp"))[None, :]
    out = ll.apply({"register": reg, "warp": warp})
    rows, cols = wmma.tile_shape
    shape = (reg.size, warp.size)
    return np.stack(
        [np.broadcast_to(out["dim0"], shape) // rows, np.broadcast_to(out["dim1"], shape) // cols],
        axis=-1,
    )


def issue_rounds(num_warps: int, simds: int) -> tuple[int, ...]:
    """The issue round of each warp: warps w and w + simds share a SIMD and take turns, so in
    lock step only the warps of one round (w // simds) meet at the arbiter together.

    >>> issue_rounds(8, 4)
    (0, 0, 0, 0, 1, 1, 1, 1)
    """
    return tuple(w // simds for w in range(num_warps))


def cross_pair_bands(
    tiles: np.ndarray, op: int, pairs: Sequence[int], rounds: Sequence[int] | None = None
) -> tuple[list[int], list[tuple[int, int, int]]]:
    """Instructions in which warps of different SIMD pairs (of one issue round) read the same
    band of operand ``op`` (the same bytes), and the (instruction, warp, warp) that do."""
    band = tiles[..., BAND_AXIS[op]]
    pairs = np.asarray(pairs)
    rounds = np.zeros(len(pairs), dtype=np.int64) if rounds is None else np.asarray(rounds)
    hits: list[tuple[int, int, int]] = []
    for r in range(band.shape[0]):
        for w in range(band.shape[1]):
            for v in range(w + 1, band.shape[1]):
                meet = pairs[w] != pairs[v] and rounds[w] == rounds[v]
                if meet and band[r, w] == band[r, v]:
                    hits.append((r, w, v))
    return sorted({r for r, _, _ in hits}), hits


def auto_partition(
    gemm: Gemm,
    tiles: np.ndarray,
    op: int,
    pairs: Sequence[int],
    rounds: Sequence[int] | None = None,
) -> AutoPartition:
    """The seed's derivation: slice the operand along its non-K dim, where the ctaLayout
    spreads the pairs; one partition per pair; num_groups = how often the [P0, P1] cycle
    repeats along that dim.

    A bit ``j`` of the band index separates the pairs if, in every instruction, it differs
    between two warps of one issue round exactly when their pairs differ; pieces are then ``2**j`` tiles and
    partition = bit ``j``. The highest such bit is taken (the largest pieces, fewest TDM
    instructions). LayoutError if no bit does (the pairs co-locate, seed Figure 8).
    """
    pairs = np.asarray(pairs, dtype=np.int64)
    num_partitions = len(set(pairs.tolist()))
    if num_partitions != 2:
        raise LayoutError(
            f"partitioned: auto needs warps on 2 SIMD pairs, the {len(pairs)} warps use "
            f"{num_partitions}; use more warps or give the partitioned layout explicitly"
        )
    band = tiles[..., BAND_AXIS[op]]
    name = NON_K_NAME[op]
    dim = gemm.non_k_dim(op)
    shape = gemm.operand_shape(op)
    extent = gemm.band_extent(op)
    num_bands = shape[dim] // extent
    rounds = np.zeros(len(pairs), dtype=np.int64) if rounds is None else np.asarray(rounds)
    lead = np.array([np.flatnonzero(rounds == rounds[w])[0] for w in range(len(pairs))])
    differ = (pairs != pairs[lead]).astype(np.int64)[None, :]
    for j in reversed(range(max(num_bands.bit_length() - 1, 0))):
        bit = (band >> j) & 1
        if np.array_equal(bit ^ bit[:, lead], np.broadcast_to(differ, bit.shape)):
            piece = list(shape)
            piece[dim] = extent << j
            pieces = shape[dim] // piece[dim]
            return AutoPartition(dim, 2, pieces // 2, (piece[0], piece[1]), j)
    colocated, hits = cross_pair_bands(tiles, op, pairs, rounds)
    why = (
        f"warps {hits[0][1]} and {hits[0][2]} read the same {name}-band in instruction "
        f"{hits[0][0]} (co-located)"
        if colocated
        else f"no bit of the {name}-tile index follows the SIMD pair in every instruction"
    )
    raise LayoutError(
        f"partitioned: auto: this ctaLayout cannot put the two SIMD pairs of operand "
        f"{OPERANDS[op].upper()} in different partitions: {why}; swizzle the ctaLayout (the AMD blog's "
        f"warp = [[2, 1], [1, 0]]) or use a plain shared layout"
    )


def tile_bits(block_mn: Sequence[int], tile_shape: Sequence[int]) -> tuple[int, int]:
    """(row bits, column bits) of the instruction-tile grid of a block.

    >>> tile_bits((128, 128), (16, 16))
    (3, 3)
    """
    bits = []
    for size, tile, name in zip(block_mn, tile_shape, ("M", "N"), strict=True):
        if size % tile or not is_pow2(size // tile):
            raise ConfigError(
                f"block {name} {size} must be a power-of-two multiple of the instruction tile {tile}"
            )
        bits.append((size // tile).bit_length() - 1)
    return (bits[0], bits[1])


__all__ = [
    "BAND_AXIS",
    "NON_K_NAME",
    "OPERANDS",
    "AutoPartition",
    "Gemm",
    "auto_partition",
    "cross_pair_bands",
    "instruction_tiles",
    "issue_rounds",
    "tile_bits",
]
