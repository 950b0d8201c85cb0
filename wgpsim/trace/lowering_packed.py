"""``amdg.local_load_packed_transposed``: packed fp4 operands through ``ds_load_tr4_b64``.

The LDS holds fp4 values packed two to a byte along M (or N); the WMMA operand wants them packed
along K. Triton 3.9.0 lowers the op on gfx1250 to ``ds_load_tr4_b64``: each source lane reads a
row of 8 bytes, 16 fp4 values consecutive in M, and the instruction exchanges them so that each
destination lane holds 16 K values of one M (8 bytes, 8 i8 registers of the result).

The rows come from the layouts. In fp4 units the result has one register bit more (the nibble,
K + 1), and the byte the LDS holds element (mn, k) in is the memdesc's element (mn // 2, k), so
``(fp4 register, lane, warp) -> memdesc byte`` is again a linear layout and
``local_load_addresses`` gives every element's byte. Instruction i covers fp4 registers
16i .. 16i + 15 (i8 registers 8i .. 8i + 7); destination lanes 0-15 and 16-31 are two halves,
in each the 16 lanes must hold 16 consecutive M values of one 8-byte row for every register (the
tile condition). Half h's register j is the row that source lane
``(j & 7) | h << 3 | (j >> 3) << 4`` reads: the order real gfx1250 compiles show (an 8-lane run
of K, then the other half's run). ``ds_load_tr4_b64`` is one pass of 32 lanes (config), so only
the set of rows of an instruction matters for its timing.

Like ``ds_load_tr16_b128``, Triton keeps the result's broadcast registers, so its LLVM dialect
holds instructions that read the same rows twice (16 for 8 distinct on the A operand of a
128x128 fp4 tile, 64 for 32 on B, on real compiles); LLVM removes the copies
(``wgpsim.trace.lowering_asm``), so ``counts`` are the assembly's and ``dialect_counts`` Triton's.

>>> from wgpsim.trace.lowering_packed import lower_packed_transposed
>>> low = lower_packed_transposed(
...     "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>",
...     "#ttg.dot_op<{opIdx = 0, parent = #ttg.amd_wmma<{version = 3, isTranspose = true, "
...     "ctaLayout = {warp = [[1, 0], [2, 0]]}, instrShape = [16, 16, 128]}>, kWidth = 16}>",
...     (64, 128))
>>> low.dialect_counts, low.counts
({'ds_load_tr4_b64': 16}, {'ds_load_tr4_b64': 8})
>>> low.issued.addresses[0, :, 0].tolist()      # lane 0's row: K 0, 16, 64, 80; M + 64
[0, 1024, 4096, 5120, 32, 1056, 4128, 5152]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from wgpsim.errors import LayoutError
from wgpsim.layout.addresses import check_warps, local_load_addresses, local_load_encodings
from wgpsim.layout.distributed import DistributedLinearLayout
from wgpsim.layout.dtypes import parse_shape
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.trace.instructions import LANES

INSTRUCTION = "ds_load_tr4_b64"
ROW_ELEMS = 16
"""fp4 values of one source row (8 bytes), and fp4 registers of one instruction per lane."""


def _operand_index(dst: Any) -> int:
    index = getattr(dst, "op_idx", getattr(dst, "operand_index", None))
    if index not in (0, 1):
        raise LayoutError(
            f"local_load_packed_transposed: the result must be a WMMA dot operand (opIdx 0 or 1), got {dst!r}"
        )
    return int(index)


def _fp4_layout(dst_ll: LinearLayout, kdim: int, mem_dims: tuple[str, str], packed: int):
    """(fp4 register, lane, warp) -> memdesc byte coordinates (see the module docstring)."""
    other = 1 - kdim
    names = dst_ll.out_dim_names

    def to_mem(basis: Sequence[int]) -> list[int]:
        mn, k = basis[names.index(f"dim{other}")], basis[names.index(f"dim{kdim}")]
        out = [0, 0]
        out[packed], out[1 - packed] = mn >> 1, k << 1
        return out

    nibble = [0, 0]
    nibble[1 - packed] = 1  # the second fp4 of a result byte: K + 1
    bases = {
        "register": [nibble] + [to_mem(b) for b in dst_ll.get_bases("register")],
        "lane": [to_mem(b) for b in dst_ll.get_bases("lane")],
        "warp": [to_mem(b) for b in dst_ll.get_bases("warp")],
        "block": [],
    }
    return DistributedLinearLayout(bases["register"], bases["lane"], bases["warp"], ())


def lower_packed_transposed(
    shared: Any,
    dst: Any,
    mem_shape: str | Sequence[int],
    *,
    num_warps: int | None = None,
    bases: int | Sequence[int] = 0,
):
    """Lower ``amdg.local_load_packed_transposed`` of an i8 memdesc of ``mem_shape`` (fp4 packed
    along its contiguous dim, M or N) in ``shared`` into the WMMA operand ``dst`` (packed along
    K): a ``Lowering`` of ``ds_load_tr4_b64``."""
    from wgpsim.trace.lowering import Lowering

    mem_shape = parse_shape(mem_shape)
    dst_enc, shared_enc = local_load_encodings(dst, shared)
    op_idx = _operand_index(dst_enc)
    kdim = 1 if op_idx == 0 else 0  # A is [M, K], B is [K, N]
    order = getattr(shared_enc, "order", None)
    packed = int(order[0]) if order else 1 - kdim
    if packed == kdim:
        raise LayoutError(
            f"local_load_packed_transposed: the memdesc must be contiguous along M/N (dim "
            f"{1 - kdim}), its order is {list(order)}"
        )
    out_shape = [0, 0]
    out_shape[kdim] = mem_shape[kdim] // 2
    out_shape[1 - kdim] = 2 * mem_shape[1 - kdim]
    dst_ll = dst_enc.to_linear_layout(out_shape)
    warps = dst_ll.in_dim_size("warp")
    check_warps(num_warps, warps)
    fp4 = _fp4_layout(dst_ll, kdim, ("dim0", "dim1"), packed)
    elem = local_load_addresses(fp4, shared_enc, mem_shape, 1, bases)  # [warp, lane, fp4 reg]
    nreg = elem.shape[2]
    if elem.shape[1] != LANES:  # gfx1250's instruction, whose exchange is wave32's
        raise LayoutError(
            f"{INSTRUCTION} exchanges within {LANES} lanes; the layout has {elem.shape[1]}"
        )
    if nreg % ROW_ELEMS:
        raise LayoutError(f"{nreg} fp4 registers per lane: {INSTRUCTION} fills {ROW_ELEMS}")
    lane = np.arange(LANES)
    half, within = lane // ROW_ELEMS, lane % ROW_ELEMS
    row = elem[:, half * ROW_ELEMS]  # [warp, lane, reg]: the row of the lane's half
    if not (elem == row + within[None, :, None] // 2).all():
        raise LayoutError(
            f"{INSTRUCTION}: destination lanes 0-15 (and 16-31) must hold 16 consecutive M/N "
            "values of one 8-byte LDS row in every register; this layout does not"
        )
    if (row % 8).any():
        raise LayoutError(f"{INSTRUCTION}: the rows must start at 8-byte aligned addresses")
    j = np.arange(ROW_ELEMS)
    source = (j & 7) | ((j >> 3) << 4)  # source lane of half 0's register j; half 1 adds 8
    count = nreg // ROW_ELEMS
    distinct = np.zeros((elem.shape[0], count, LANES), dtype=np.int64)
    for i in range(count):
        for h in (0, 1):
            distinct[:, i, source + 8 * h] = elem[:, h * ROW_ELEMS, i * ROW_ELEMS + j]
    addresses = np.ascontiguousarray(distinct)
    registers = np.arange(count * ROW_ELEMS, dtype=np.int64).reshape(count, ROW_ELEMS)
    for arr in (addresses, registers):
        arr.flags.writeable = False
    reason = (
        "packed fp4 (two per byte along M/N) to K-packed registers: lanes 0-15 and 16-31 read "
        "16-value rows, ds_load_tr4_b64 exchanges them"
    )
    return Lowering(
        instruction=INSTRUCTION,
        vector_elems=ROW_ELEMS,
        eligibility="valid",
        reason=reason,
        cvt=fp4.to_linear_layout(list(mem_shape)),
        shape=tuple(out_shape),
        elem_bits=4,
        addresses=addresses,
        registers=registers,
        dst_layout=dst_ll,
    )
