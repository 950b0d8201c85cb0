"""The scratch buffer of a layout conversion through shared memory, as Triton 3.9.0 sizes it.

Triton moves a tensor from layout ``src`` to ``dst`` through a swizzled scratch buffer
(``optimalSwizzlingLdSt``, ``lib/Tools/GenericSwizzling.cpp``) described on the flattened
tensor (one out dim, the first tensor dim the most minor) by three sets of bases: ``vector``
(elements one lane stores or loads together), ``bank`` (the rest of a row of banks) and
``segment`` (the rows). A segment basis that both layouts hold in registers is a *rep*: the
conversion runs once per rep value, each round through the same buffer, so the buffer holds
``numel / 2**reps`` elements (``getNumScratchElemsSwizzledCvt``).

A 64-element column that every thread holds in registers, converted to one element a lane
(lanes x warps), needs all 64 elements at once (no rep):

>>> from wgpsim.layout import LinearLayout
>>> src = LinearLayout({"register": [[1], [2], [4], [8], [16], [32]],
...     "lane": [[0]] * 5, "warp": [[0], [0]], "block": []}, {"dim0": 64})
>>> dst = LinearLayout({"register": [], "lane": [[1], [2], [4], [8], [16]],
...     "warp": [[32], [0]], "block": []}, {"dim0": 64})
>>> scratch_elems_swizzled(src, dst, 32)
64

Bases are ints: the flattened tensor index a basis maps to.
"""

from __future__ import annotations

from collections.abc import Sequence

from wgpsim.layout.linear_layout import LinearLayout

__all__ = ["flat_bases", "intersection_basis", "scratch_elems_swizzled", "swizzle_bases"]

#: Triton's default bank count for the generic swizzling (``numBanks = 32``).
NUM_BANKS = 32


def flat_bases(layout: LinearLayout, dim: str) -> list[int]:
    """The bases of in-dim ``dim`` as flattened tensor indices (``[[1], [2]] -> [1, 2]``)."""
    flat = layout.flatten_outs()
    if not flat.has_in_dim(dim):
        return []
    return [b[0] if b else 0 for b in flat.get_bases(dim)]


def without_broadcast_registers(layout: LinearLayout) -> LinearLayout:
    """``actionRemoveBroadcastedRegs``: the layout without its zero register bases."""
    return layout.remove_zero_bases("register") if layout.has_in_dim("register") else layout


def _rref(rows: Sequence[int], dim: int) -> list[int]:
    """Reduced row echelon form over GF(2), pivots at the lowest set bit (as f2reduce)."""
    mat = [r for r in rows]
    top = 0
    for col in range(dim):
        bit = 1 << col
        pivot = next((i for i in range(top, len(mat)) if mat[i] & bit), None)
        if pivot is None:
            continue
        mat[top], mat[pivot] = mat[pivot], mat[top]
        for i in range(len(mat)):
            if i != top and mat[i] & bit:
                mat[i] ^= mat[top]
        top += 1
    return mat


def _pivots(mat: Sequence[int]) -> set[int]:
    return {(r & -r).bit_length() - 1 for r in mat if r}


def nullspace_basis(vectors: Sequence[int], dim: int) -> list[int]:
    """A basis of the vectors orthogonal to all of ``vectors`` (Triton's ``nullspaceBasis``)."""
    mat = _rref(vectors, dim)
    pivots = _pivots(mat)
    out = []
    for free in range(dim):
        if free in pivots:
            continue
        vec = 1 << free
        for r in mat:
            if r and r & (1 << free):
                vec ^= r & -r
        out.append(vec)
    return out


def complement_basis(basis: Sequence[int], dim: int) -> list[int]:
    """Unit vectors completing ``basis`` to the whole space (``complementBasis``)."""
    pivots = _pivots(_rref(basis, dim))
    return [1 << i for i in range(dim) if i not in pivots]


def intersection_basis(b1: Sequence[int], b2: Sequence[int], dim: int) -> list[int]:
    """A basis of span(b1) ∩ span(b2); for unit bases, those of b1 in b2, in b1's order.

    >>> intersection_basis([1, 2, 8], [8, 4, 1], 4)
    [1, 8]
    """
    if all(b & (b - 1) == 0 for b in [*b1, *b2]):
        other = set(b2)
        return [b for b in b1 if b and b in other]
    return nullspace_basis(nullspace_basis(b1, dim) + nullspace_basis(b2, dim), dim)


def _log2(x: int) -> int:
    return max(x, 1).bit_length() - 1


def _vbasis(src: LinearLayout, dst: LinearLayout, bitwidth: int, dim: int) -> list[int]:
    """``getVecBasisLdSt``: the vector bases, the registers both layouts hold (up to 128
    bits), filled up to one 32-bit bank word with registers the other layout spreads over
    warps, then with warp bases."""
    reg_src, reg_dst = flat_bases(src, "register"), flat_bases(dst, "register")
    vbasis = intersection_basis(reg_src, reg_dst, dim)[: _log2(128 // bitwidth)]
    if (1 << len(vbasis)) * bitwidth >= 32:
        return vbasis
    per_bank = _log2(32 // bitwidth)
    warp_src = [b for b in flat_bases(src, "warp") if b]
    warp_dst = [b for b in flat_bases(dst, "warp") if b]
    block_src = flat_bases(src, "block")
    src_warp = intersection_basis([r for r in reg_src if r not in vbasis], warp_dst, dim)
    dst_warp = intersection_basis([r for r in reg_dst if r not in vbasis], warp_src, dim)
    if len(src_warp) == len(dst_warp) and src_warp:
        vbasis += src_warp if min(src_warp) < min(dst_warp) else dst_warp
    else:
        vbasis += src_warp if len(src_warp) > len(dst_warp) else dst_warp
    if len(vbasis) < per_bank:
        vbasis += intersection_basis(warp_src, warp_dst, dim)
    i = 0
    while len(vbasis) < per_bank and (i < len(warp_src) or i < len(warp_dst)):
        if i < len(warp_src) and warp_src[i] not in vbasis:
            vbasis.append(warp_src[i])
        if (
            len(vbasis) < per_bank
            and i < len(warp_dst)
            and warp_dst[i] not in vbasis
            and warp_dst[i] not in block_src
        ):
            vbasis.append(warp_dst[i])
        i += 1
    return vbasis[:per_bank]


def _lane_tile(lanes: list[int], vec_bits: int, num_banks: int) -> list[int]:
    """``getLaneTile`` of a plain load/store: the lanes one phase serves (all but the top
    ``log2Phase`` lane bases)."""
    phase = max(0, _log2(max(1, vec_bits // 32)) + len(lanes) - _log2(num_banks))
    return lanes[: len(lanes) - phase]


def _segment(
    bank_src: list[int], bank_dst: list[int], blocks: list[int], dim: int, length: int
) -> list[int]:
    """``computeSegment``: the segment bases, free bits first, then conflict-free mixes."""
    s, d = set(bank_src) | set(blocks), set(bank_dst) | set(blocks)
    s.discard(0)
    d.discard(0)
    segment = [1 << b for b in range(dim) if (1 << b) not in s and (1 << b) not in d]
    if len(segment) >= length:
        return segment[:length]
    a, b = sorted(s - d), sorted(d - s)
    if len(a) > len(b):
        a, b = b, a
    conflicts = min(max(0, length - len(a) - len(segment)), len(a))
    segment += [a[i] ^ b[i] for i in range(conflicts, len(a))]
    segment += a[:conflicts] + b[:conflicts]
    return segment[:length]


def swizzle_bases(
    src: LinearLayout, dst: LinearLayout, bitwidth: int, num_banks: int = NUM_BANKS
) -> tuple[list[int], list[int], list[int]]:
    """(vector, bank, segment) bases of ``optimalSwizzlingLdSt`` for ``src -> dst``
    (register broadcasting already removed) with ``num_banks`` 32-bit banks, on the
    flattened tensor."""
    dim = _log2(src.total_out_size)
    vbasis = _vbasis(src, dst, bitwidth, dim)
    vec_bits = (1 << len(vbasis)) * bitwidth
    tile_src = _lane_tile(flat_bases(src, "lane"), vec_bits, num_banks)
    tile_dst = _lane_tile(flat_bases(dst, "lane"), vec_bits, num_banks)
    blocks = [b for b in flat_bases(src, "block") if b]
    rest = dim - len(vbasis) - len(blocks)
    len_bank = min(_log2(num_banks * 32 // vec_bits), rest)
    sbasis = _segment(vbasis + tile_src, vbasis + tile_dst, blocks, dim, rest - len_bank)
    bbasis = complement_basis(vbasis + sbasis + blocks, dim)
    return vbasis, bbasis, sbasis


def scratch_elems_swizzled(
    src: LinearLayout, dst: LinearLayout, bitwidth: int, num_banks: int = NUM_BANKS
) -> int:
    """Elements of the scratch buffer converting ``src`` to ``dst`` (``bitwidth`` bits an
    element): the tensor's elements over the reps (``getNumScratchElemsSwizzledCvt``)."""
    src, dst = without_broadcast_registers(src), without_broadcast_registers(dst)
    _, _, sbasis = swizzle_bases(src, dst, bitwidth, num_banks)
    both = set(flat_bases(src, "register")) & set(flat_bases(dst, "register"))
    reps = sum(s in both for s in sbasis)
    return src.total_out_size >> reps
