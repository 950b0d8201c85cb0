"""Scratch bytes of an op, as Triton 3.9.0's allocator sizes them for AMD targets.

``AMDAllocationAnalysisScratchSizeFn`` (``third_party/amd/lib/Analysis/AMDGPUAllocation.cpp``)
and the common ``defaultAllocationAnalysisScratchSizeFn`` (``lib/Analysis/Allocation.cpp``):

- ``ttg.convert_layout``: 0 when ``cvtNeedsSharedMemory`` says the conversion stays within a
  warp (registers, or registers and lanes), else the swizzled buffer's elements
  (`wgpsim.layout.cvt_swizzle`) times the element's bytes (pointers 8, at least 1). Also with
  ``amdgpu.use_padded_scratch_shmem``: older Triton sized such a conversion by its padded
  ``repShape`` (``getNumScratchElemsPaddedCvt``), 3.9.0 has no padded path left and ignores the
  attribute (a 64x64 fp32 transpose carrying it gets 16384 B, not the padded 33x32x4 = 4224 B:
  ``tests/fixtures/scratch/cvt_padded_attr_*``);
- ``tt.reduce``: each round of ``ReduceOpHelper``'s inter-warp reduction is a conversion to a
  layout that moves the reduced axis' warp bases into lanes; the largest round's buffer, for
  every operand's element bytes;
- ``tt.scan``: 0 with one warp along the axis, else the non-axis elements of every warp, per
  block of the axis, for every operand (``ScanLoweringHelper``);
- ``tt.histogram``: ``max(bins, threads per warp)`` elements of the result;
- atomics (``tt.atomic_rmw``/``_cas``, ``amdg.buffer_atomic_*``): one element for a scalar
  whose result is read; the whole tensor when its result is read and its layout broadcasts;
- ``tt.gather``: 0 when each gather column stays in one warp (``isWarpLocal``), else the whole
  source tensor.

A column sum of a 128x64 fp32 tile over 4 warps stacked along the rows (corpus ``col_sum_fp32``):
each warp's 64 partial sums meet in one 1 KiB buffer.

>>> from wgpsim.frontend.ttgir import read_ttgir_file
>>> k = read_ttgir_file("tests/corpus/fixtures/col_sum_fp32/kernel.ttgir")
>>> [(op.op, scratch_bytes(op, k.threads_per_warp)) for op in k.ops]
[('tt.reduce', 1024), ('ttg.convert_layout', 256)]
"""

from __future__ import annotations

from typing import Any

from wgpsim.errors import LayoutError
from wgpsim.frontend.model import LdsOp, TensorType, elem_bits
from wgpsim.layout.cvt_swizzle import (
    flat_bases,
    scratch_elems_swizzled,
    without_broadcast_registers,
)
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.packaged import hardware_fact

__all__ = ["SCRATCH_ALIGNMENT", "cvt_needs_shared_memory", "scratch_bytes"]

#: Triton's scratch buffers are aligned to 128 bytes (``getScratchValueSize``).
SCRATCH_ALIGNMENT = 128
_HW = ("block", "warp", "lane", "register")
#: The LDS banks Triton's swizzled scratch layout spreads a row over: the target's
#: ``getSharedMemoryBanks`` (64 on gfx1250 and gfx950, 32 on gfx942), its hardware file's
#: ``banks.count``; this default is gfx1250's (checked against compiles: with 32, a 64x128 fp32
#: row sum's buffer would be 128 B, Triton gives it 256 B; a 128x64 fp32 column sum of a
#: wave64 blocked layout gets 256 B on gfx942 and 512 B on gfx950,
#: ``tests/fixtures/gfx9_lowering/scratch_cases``).
NUM_BANKS = hardware_fact("banks", "count")


def _bits(dtype: str) -> int:
    """AMD ``getBitwidth``: 64 for a pointer, else the element's bits, at least 8."""
    return 64 if "ptr" in dtype else max(elem_bits(dtype), 8)


def _layout(t: TensorType) -> LinearLayout:
    if t.encoding is None:
        raise LayoutError(f"layout {t.encoding_text} is not modelled: its scratch is not sized")
    return t.encoding.to_linear_layout(t.shape)


def minimal_cvt_layout(src: LinearLayout, dst: LinearLayout) -> LinearLayout:
    """``minimalCvtLayout``: dst's hardware -> src's, without the slowest dims it keeps."""
    comp = dst.invert_and_compose(src)
    for dim in _HW:
        if not comp.has_in_dim(dim):
            continue
        quotient = comp.quotient([dim])
        if quotient is None:
            break
        comp = quotient
    return comp


def mixed_transpositions(src: LinearLayout, dst: LinearLayout) -> int:
    """How many register<->lane transpositions the in-warp permutation src -> dst holds
    (``getWarpLayoutConvertDecomposition``): the register bits of ``src`` whose element a lane
    bit of ``dst`` holds, zero bits of one side paired in order with zero bits of the other."""
    src, dst = without_broadcast_registers(src), without_broadcast_registers(dst)
    dims = ("register", "lane")
    bases = [{d: flat_bases(layout, d) for d in dims} for layout in (src, dst)]
    n = {d: max(len(b[d]) for b in bases) for d in dims}
    sides = [[(d, v) for d in dims for v in b[d] + [0] * (n[d] - len(b[d]))] for b in bases]
    s_side, t_side = sides
    where = {v: k for k, v in t_side if v}
    count = sum(k == "register" and v and where.get(v) == "lane" for k, v in s_side)
    s_free = [k for (k, v), (_, t) in zip(s_side, t_side, strict=True) if not v and t]
    t_free = [k for (_, v), (k, t) in zip(s_side, t_side, strict=True) if v and not t]
    return count + sum(
        a == "register" and b == "lane" for a, b in zip(s_free, t_free, strict=False)
    )


def cvt_needs_shared_memory(src: TensorType, dst: TensorType) -> bool:
    """``cvtNeedsSharedMemory``: whether Triton converts ``src`` to ``dst`` through LDS. Not
    when only registers move; not when registers and lanes move and at most one
    register<->lane transposition is needed (a warp shuffle)."""
    a, b = _layout(src), _layout(dst)
    outs = minimal_cvt_layout(a, b).out_dim_names
    if outs in ((), ("register",)):
        return False
    return not (outs == ("register", "lane") and mixed_transpositions(a, b) < 2)


def _cvt_bytes(op: LdsOp, num_banks: int = NUM_BANKS) -> int:
    src, dst = op.tensor, op.result
    if not cvt_needs_shared_memory(src, dst):
        return 0
    bits = _bits(src.dtype)
    return scratch_elems_swizzled(_layout(src), _layout(dst), bits, num_banks) * bits // 8


# ---------------------------------------------------------------- reduce
def _bases(layout: LinearLayout) -> dict[str, list[list[int]]]:
    return {d: [list(b) for b in bs] for d, bs in layout.bases}


def _build(bases: dict[str, list[list[int]]], names: tuple[str, ...]) -> LinearLayout:
    sizes = [1] * len(names)
    for bs in bases.values():
        for b in bs:
            sizes = [max(s, 1 << v.bit_length()) for s, v in zip(sizes, b, strict=True)]
    return LinearLayout(bases, list(zip(names, sizes, strict=True)))


def _zero_along(layout: LinearLayout, axis: int, dim: str) -> LinearLayout:
    """``zeroBasesAlongDimAndReorder``: ``dim``'s bases lose their ``axis`` component; the
    remaining ``axis`` bases are renumbered 1, 2, 4, ... in in-dim order."""
    bases = _bases(layout)
    for b in bases.get(dim, []):
        b[axis] = 0
    nxt = 1
    for bs in bases.values():
        for b in bs:
            if b[axis]:
                b[axis], nxt = nxt, nxt * 2
    return _build(bases, layout.out_dim_names)


def _reduced_reg_lane(layout: LinearLayout, axis: int) -> LinearLayout:
    """``reducedRegLaneLayout``: each thread's and each warp's own reduction done."""
    layout = without_broadcast_registers(layout)
    bases = _bases(layout)
    regs = bases.get("register", [])
    bases["register"] = [b for b in regs if b[axis]] + [b for b in regs if not b[axis]]
    layout = _zero_along(_build(bases, layout.out_dim_names), axis, "register")
    layout = without_broadcast_registers(layout)
    return _zero_along(layout, axis, "lane")


def _inter_layout(layout: LinearLayout, axis: int) -> LinearLayout:
    """``getInterLayout``: the warp (and block) bases along ``axis`` swapped into lanes, into
    zero lanes when there are enough, else into the first lanes."""
    bases = _bases(layout)
    lanes, warps, blocks = (bases.setdefault(d, []) for d in ("lane", "warp", "block"))
    moving = [(warps, i) for i, b in enumerate(warps) if b[axis]]
    moving += [(blocks, i) for i, b in enumerate(blocks) if b[axis]]
    zero = [i for i, b in enumerate(lanes) if not any(b)]
    if len(zero) >= len(moving):
        slots = zero
    elif len(moving) <= len(lanes):
        slots = list(range(len(lanes)))
    else:
        moving = [m for m in moving if m[0] is warps][: len(lanes)]
        slots = list(range(len(lanes)))
    for (where, i), lane in zip(moving, slots, strict=False):
        lanes[lane], where[i] = where[i], lanes[lane]
    return _build(bases, layout.out_dim_names)


def _reduce_bytes(op: LdsOp, num_banks: int = NUM_BANKS) -> int:
    axis = op.attr("axis")
    bits = [_bits(t) for t in op.attr("elem_types") or (op.tensor.dtype,)]
    reg = _reduced_reg_lane(_layout(op.tensor), axis)
    most = 0
    while reg.out_dim_size(reg.out_dim_names[axis]) > 1:
        tmp = _inter_layout(reg, axis)
        most = max(
            most, sum(scratch_elems_swizzled(reg, tmp, b, num_banks) * (b // 8) for b in bits)
        )
        reg = _zero_along(tmp, axis, "lane")
    return most


# ---------------------------------------------------------------- scan, histogram, atomics
def _per_dim(layout: LinearLayout, dim: str) -> list[int]:
    """Per tensor dim, how many distinct values in-dim ``dim`` spans (zero bases skipped)."""
    counts = [1] * len(layout.out_dim_names)
    for b in layout.get_bases(dim) if layout.has_in_dim(dim) else ():
        for i, v in enumerate(b):
            if v:
                counts[i] *= 2
                break
    return counts


def _contig_per_thread(layout: LinearLayout, order: list[int]) -> list[int]:
    regs = list(layout.get_bases("register"))
    contig = [1] * len(layout.out_dim_names)
    k = 0
    for d in order:
        unit = [0] * len(contig)
        unit[d] = 1
        while k < len(regs) and list(regs[k]) == unit:
            contig[d] *= 2
            unit[d] *= 2
            k += 1
    return contig


def _scan_bytes(op: LdsOp) -> int:
    """``ScanLoweringHelper::getScratchSizeInBytes`` on the layout without broadcast registers."""
    enc, shape, axis = op.tensor.encoding, op.tensor.shape, op.attr("axis")
    if type(enc).__name__ != "BlockedLayout":
        return 0
    layout = without_broadcast_registers(_layout(op.tensor))
    threads, warps = _per_dim(layout, "lane"), _per_dim(layout, "warp")
    if warps[axis] == 1:
        return 0
    order = list(getattr(enc, "order", range(len(shape))))
    contig = _contig_per_thread(layout, order)
    blocks = [-(-shape[i] // (contig[i] * threads[i] * warps[i])) for i in range(len(shape))]
    non_axis_threads = _prod(threads) // threads[axis]
    non_axis_elems = _prod(contig) // contig[axis]
    non_axis_blocks = _prod(blocks) // blocks[axis]
    elems = _prod(warps) * non_axis_threads * non_axis_elems * blocks[axis] * non_axis_blocks
    return elems * sum(-(-elem_bits(t) // 8) for t in op.attr("elem_types"))


def _prod(xs: list[int]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def _atomic_bytes(op: LdsOp) -> int:
    if not op.attr("result_used"):
        return 0
    bits = max(8, elem_bits(op.attr("elem_type") or "i32"))
    if op.result is None:
        return bits // 8
    free = _layout(op.result).free_variable_masks()
    return _prod(list(op.result.shape)) * bits // 8 if any(free.values()) else 0


def _same(a: LinearLayout, b: LinearLayout, ins: list[str], outs: list[str]) -> bool:
    x, y = a.sublayout(ins, outs), b.sublayout(ins, outs)
    return (x.bases, x.out_dims) == (y.bases, y.out_dims)


def gather_is_warp_local(src: TensorType, idx: TensorType, axis: int) -> bool:
    """``GatherLoweringHelper::isWarpLocal``: no warp (or block) moves along the gather axis
    in either tensor, and the warps and lanes hold the same other coordinates in both."""
    a, b = _layout(src), _layout(idx)
    dims = list(a.out_dim_names)
    gather, others = [dims[axis]], [d for i, d in enumerate(dims) if i != axis]
    hw = [d for d in ("block", "warp") if a.has_in_dim(d)]
    for layout in (a, b):
        if any(any(v) for _, bs in layout.sublayout(hw, gather).bases for v in bs):
            return False
    return _same(a, b, hw, others) and _same(a, b, ["lane"], others)


def _gather_bytes(op: LdsOp) -> int:
    """0 for a warp-local gather, else the whole source tensor."""
    idx, axis = op.attr("indices"), op.attr("axis")
    if idx is not None and gather_is_warp_local(op.tensor, idx, axis):
        return 0
    return _prod(list(op.tensor.shape)) * -(-elem_bits(op.tensor.dtype) // 8)


TENSOR_SIZED = ("tt.reduce", "tt.scan", "tt.gather")
"""Scratch ops sized by their source tensor (an atomic's scalar pointer has none)."""


def scratch_bytes(op: LdsOp, threads_per_warp: int = 32, num_banks: int = NUM_BANKS) -> int:
    """Bytes of the scratch buffer Triton 3.9.0 gives ``op`` (0: none) on a target with
    ``threads_per_warp`` lanes and ``num_banks`` LDS banks (its hardware file's
    ``banks.count``; default gfx1250's)."""
    kind: Any = op.op
    sized_by = {"ttg.convert_layout": (op.tensor, op.result), "tt.histogram": (op.result,)}
    if None in sized_by.get(kind, (op.tensor,) if kind in TENSOR_SIZED else ()):
        raise LayoutError(f"{kind}: a tensor type is missing: its scratch is not sized")
    if kind == "ttg.convert_layout":
        return _cvt_bytes(op, num_banks)
    if kind == "tt.reduce":
        return _reduce_bytes(op, num_banks)
    if kind == "tt.scan":
        return _scan_bytes(op)
    if kind == "tt.histogram":
        return max(_prod(list(op.result.shape)), threads_per_warp) * _bits(op.result.dtype) // 8
    if kind == "tt.gather":
        return _gather_bytes(op)
    if "atomic" in kind:
        return _atomic_bytes(op)
    return 0
