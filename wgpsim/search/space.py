"""The layout-search space of one GEMM tile: WMMA ctaLayouts x shared layouts x transposed loads.

A ctaLayout places whole instruction tiles. With ``R`` tile-row bits and ``C`` tile-column bits
(a 128x128 block of 16x16 tiles: R = C = 3) a ctaLayout is an invertible GF(2) map from
``log2(warps)`` warp bits and ``R + C - log2(warps)`` register bits to the ``R + C`` tile bits.
The space enumerated here (``docs/DESIGN.md``, "Layout search"):

* register bases are unit tile moves (one row or column bit each), listed columns first, then
  rows, ascending (Triton's own fill order for the repeats it adds);
* warp basis ``i`` is a unit move along a *pivot* bit that no register basis covers, XOR-ed with
  at most ``swizzle_depth`` register bits (the AMD blog's swizzle ``warp = 1 -> [2, 1]`` is the
  pivot ``[0, 1]`` plus the register bit ``[2, 0]``). Every order of pivots is searched: the
  warp bits are physical (warp ``w`` runs on SIMD ``w mod 4``, pair ``w mod 2``).

Left out as symmetries that cannot change any metric: a different order of the register bases
permutes the instructions of a K step, the same permutation for every warp (every per-instruction
metric and every per-warp set of reads is unchanged); we list each register subspace once.

The AMD blog's 4-warp layouts, all in the space:

>>> space = cta_layouts(tile_bits=(3, 3), warps=4)
>>> coarse = CtaLayout(warp=((2, 4), (1, 0)), register=((0, 1), (0, 2), (2, 0), (4, 0)))
>>> swizzled = CtaLayout(warp=((2, 1), (1, 0)), register=((0, 2), (0, 4), (2, 0), (4, 0)))
>>> coarse in space, swizzled in space, len(space)
(True, True, 1050)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations, permutations, product
from typing import Any

from wgpsim.errors import ConfigError
from wgpsim.layout.bits import is_pow2
from wgpsim.microbench.candidates import tile_bits  # noqa: F401 (re-exported)


@dataclass(frozen=True)
class CtaLayout:
    """WMMA ctaLayout bases in whole instruction tiles, ``[tileRow, tileCol]`` each."""

    warp: tuple[tuple[int, int], ...]
    register: tuple[tuple[int, int], ...]

    def to_dict(self) -> dict[str, list[list[int]]]:
        return {"register": [list(b) for b in self.register], "warp": [list(b) for b in self.warp]}

    def __str__(self) -> str:
        return f"warp={[list(b) for b in self.warp]} register={[list(b) for b in self.register]}"


def _axis(a: int, row_bits: int) -> tuple[int, int]:
    """Unit tile move of axis ``a``: rows first (a < row_bits), then columns."""
    return (1 << a, 0) if a < row_bits else (0, 1 << (a - row_bits))


def _xor(u: tuple[int, int], v: tuple[int, int]) -> tuple[int, int]:
    return (u[0] ^ v[0], u[1] ^ v[1])


def cta_layouts(
    tile_bits: tuple[int, int], warps: int, *, swizzle_depth: int = 1, mixed: int | None = None
) -> list[CtaLayout]:
    """Every ctaLayout of the space for a grid of ``2**rows x 2**cols`` tiles.

    ``mixed``: how many warp bases (from warp bit 0, the SIMD-pair bit) may mix in other bits;
    default all of them up to 8 warps, only the pair bit's for 16 (370,440 ctaLayouts else).

    >>> [str(c) for c in cta_layouts((1, 1), 2)]
    ['warp=[[1, 0]] register=[[0, 1]]', 'warp=[[1, 1]] register=[[0, 1]]', 'warp=[[0, 1]] register=[[1, 0]]', 'warp=[[1, 1]] register=[[1, 0]]']
    """
    rows, cols = tile_bits
    n = rows + cols
    if not is_pow2(warps) or warps.bit_length() - 1 > n:
        raise ConfigError(
            f"warps {warps}: must be a power of two with at most {1 << n} warps for this block "
            f"({1 << rows} x {1 << cols} instruction tiles)"
        )
    w = warps.bit_length() - 1
    if mixed is None:
        mixed = w if w <= 3 else 1
    out: list[CtaLayout] = []
    seen: set[CtaLayout] = set()
    # registers: columns first, then rows (Triton's fill order)
    axes = sorted(range(n), key=lambda a: (a < rows, a))
    for reg_axes in combinations(axes, n - w):
        register = tuple(_axis(a, rows) for a in reg_axes)
        free = [a for a in range(n) if a not in reg_axes]
        for pivots in permutations(free):
            # warp basis i: its pivot XOR up to swizzle_depth other bits (register bits, or
            # the pivots of other warp bases: warpsPerCTA-style mixing of the warp bits)
            mixes = []
            for i, pivot in enumerate(pivots):
                others = [_axis(a, rows) for a in (*reg_axes, *pivots[:i], *pivots[i + 1 :])]
                mixes.append(
                    [
                        _mix(_axis(pivot, rows), combo)
                        for k in range(min(swizzle_depth if i < mixed else 0, len(others)) + 1)
                        for combo in combinations(others, k)
                    ]
                )
            for warp in product(*mixes):
                cta = CtaLayout(tuple(warp), register)
                if cta not in seen and _invertible([*warp, *register]):
                    seen.add(cta)
                    out.append(cta)
    return out


def _mix(base: tuple[int, int], extra: Sequence[tuple[int, int]]) -> tuple[int, int]:
    for e in extra:
        base = _xor(base, e)
    return base


def _invertible(vectors: Sequence[tuple[int, int]]) -> bool:
    """Whether the tile moves are linearly independent over GF(2)."""
    basis: list[int] = []
    for r, c in vectors:
        v = (c << 16) | r
        for b in basis:
            v = min(v, v ^ b)
        if not v:
            return False
        basis.append(v)
    return True


# ------------------------------------------------------------------------------ shared layouts
@dataclass(frozen=True)
class SharedChoice:
    """One shared-layout option of an operand: a spec `wgpsim.microbench.gemm.build_shared` reads
    and a short label for tables."""

    label: str
    spec: Any

    @property
    def partitioned(self) -> bool:
        return isinstance(self.spec, dict) and "partitioned" in self.spec


#: Swizzle parameters searched (vec, perPhase, maxPhase); vec in elements of 16 bits: 8 = 128 bits.
SWIZZLES = ((1, 1, 1), (8, 1, 2), (8, 1, 4), (8, 1, 8), (8, 2, 4), (8, 2, 8), (4, 1, 8))
#: Padding searched, as (interval in rows of the contiguous extent, padding in bytes).
PADDINGS = ((1, 16), (1, 32), (2, 16), (2, 32))


def shared_choices(contiguous_extent: int, elem_bytes: int) -> list[SharedChoice]:
    """Swizzled, padded and ``partitioned: auto`` (with each padding inside) options for an
    operand whose contiguous dim has ``contiguous_extent`` elements.

    >>> [c.label for c in shared_choices(64, 2)][:3]
    ['swizzled 1/1/1', 'swizzled 8/1/2', 'swizzled 8/1/4']
    >>> shared_choices(64, 2)[7].spec
    {'padded': [[64, 8]]}
    """
    out = [
        SharedChoice(
            f"swizzled {v}/{p}/{m}", {"swizzled": {"vec": v, "per_phase": p, "max_phase": m}}
        )
        for v, p, m in SWIZZLES
    ]
    pads = []
    for rows, pad_bytes in PADDINGS:
        if pad_bytes % elem_bytes:
            continue
        pads.append([[contiguous_extent * rows, pad_bytes // elem_bytes]])
    out += [SharedChoice(f"padded [{p[0][0]}:+{p[0][1]}]", {"padded": p}) for p in pads]
    out += [
        SharedChoice(
            f"partitioned auto [{p[0][0]}:+{p[0][1]}]",
            {"partitioned": "auto", "partition_layout": {"padded": p}},
        )
        for p in pads
    ]
    return out


__all__ = [
    "PADDINGS",
    "SWIZZLES",
    "CtaLayout",
    "SharedChoice",
    "cta_layouts",
    "shared_choices",
    "tile_bits",
]
