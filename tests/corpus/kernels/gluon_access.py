"""Gluon kernels around single LDS accesses: stores and loads between chosen distributed and
shared layouts, views into a larger buffer, 1-D slice reads, packed fp4 loads, MX scales."""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd import gfx1250
from triton.experimental.gluon.language.amd.gfx1250 import PartitionedSharedLayout

from . import Case, signature


@gluon.jit
def _offsets(M: gl.constexpr, N: gl.constexpr, layout: gl.constexpr):
    rows = gl.arange(0, M, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, layout))
    return rows[:, None] * N + cols[None, :]


@gluon.jit
def store_load(
    in_ptr,
    out_ptr,
    M: gl.constexpr,
    N: gl.constexpr,
    SRC: gl.constexpr,
    SHARED: gl.constexpr,
    DST: gl.constexpr,
    INIT: gl.constexpr,
):
    """Global -> registers (SRC) -> LDS (SHARED) -> registers (DST) -> global. ``INIT``: the
    store is the local_alloc's initial value, else a ttg.local_store into the buffer."""
    x = gl.load(in_ptr + _offsets(M, N, SRC))
    if INIT:
        smem = gl.allocate_shared_memory(in_ptr.dtype.element_ty, [M, N], SHARED, x)
    else:
        smem = gl.allocate_shared_memory(in_ptr.dtype.element_ty, [M, N], SHARED)
        smem.store(x)
    y = smem.load(DST)
    gl.store(out_ptr + _offsets(M, N, DST), y)


@gluon.jit
def slice_read(
    in_ptr,
    out_ptr,
    N: gl.constexpr,
    PARENT: gl.constexpr,
    SRC_DIM: gl.constexpr,
    DST_DIM: gl.constexpr,
    SHARED: gl.constexpr,
):
    """A 1-D vector through LDS: stored from one slice of PARENT, read into another."""
    src: gl.constexpr = gl.SliceLayout(SRC_DIM, PARENT)
    dst: gl.constexpr = gl.SliceLayout(DST_DIM, PARENT)
    x = gl.load(in_ptr + gl.arange(0, N, layout=src))
    smem = gl.allocate_shared_memory(in_ptr.dtype.element_ty, [N], SHARED)
    smem.store(x)
    y = smem.load(dst)
    gl.store(out_ptr + gl.arange(0, N, layout=dst), y)


@gluon.jit
def views(
    in_ptr,
    out_ptr,
    M: gl.constexpr,
    K: gl.constexpr,
    SRC: gl.constexpr,
    SHARED: gl.constexpr,
    WMMA: gl.constexpr,
):
    """A two-stage [2, M, K] buffer: store into a stage (memdesc_index), read a K/2 slice of it
    as the A operand (memdesc_subslice), its transpose as a B operand (memdesc_trans) and a
    reshaped view as a blocked tensor (memdesc_reshape)."""
    stage = gl.program_id(0) % 2
    smem = gl.allocate_shared_memory(in_ptr.dtype.element_ty, [2, M, K], SHARED)
    x = gl.load(in_ptr + _offsets(M, K, SRC))
    smem.index(stage).store(x)
    a = smem.index(stage).slice(K // 2, K // 2, dim=1).load(gl.DotOperandLayout(0, WMMA, 8))
    b = smem.index(stage).permute([1, 0]).load(gl.DotOperandLayout(1, WMMA, 8))
    flat: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [gl.num_warps(), 1], [1, 0])
    r = smem.index(stage).reshape([M // 2, 2 * K]).load(flat)
    gl.store(out_ptr + _offsets(M, K // 2, gl.DotOperandLayout(0, WMMA, 8)), a)
    gl.store(out_ptr + M * K + _offsets(K, M, gl.DotOperandLayout(1, WMMA, 8)), b)
    gl.store(out_ptr + 2 * M * K + _offsets(M // 2, 2 * K, flat), r)


@gluon.jit
def fp4_packed(
    in_ptr,
    out_ptr,
    M: gl.constexpr,
    N: gl.constexpr,
    SRC: gl.constexpr,
    SHARED: gl.constexpr,
    DST: gl.constexpr,
    OUT_M: gl.constexpr,
    OUT_N: gl.constexpr,
):
    """Packed fp4 bytes (two values per i8) read from LDS by amdg.local_load_packed_transposed
    into a K-packed WMMA operand (ds_load_tr4_b64)."""
    x = gl.load(in_ptr + _offsets(M, N, SRC))
    smem = gl.allocate_shared_memory(gl.int8, [M, N], SHARED, x)
    y = gfx1250.load_shared_fp4_repacked(smem, DST)
    gl.store(out_ptr + _offsets(OUT_M, OUT_N, DST), y)


@gluon.jit
def mx_gemm(
    a_ptr,
    b_ptr,
    sa_ptr,
    sb_ptr,
    c_ptr,
    M: gl.constexpr,
    N: gl.constexpr,
    K: gl.constexpr,
    SRC: gl.constexpr,
    SHARED: gl.constexpr,
    SCALE_SRC: gl.constexpr,
    SCALE_SHARED: gl.constexpr,
    WMMA: gl.constexpr,
):
    """One MX fp8 WMMA tile: operands and their e8m0 scales (one per 32 K) through LDS."""
    a_l: gl.constexpr = gl.DotOperandLayout(0, WMMA, 16)
    b_l: gl.constexpr = gl.DotOperandLayout(1, WMMA, 16)
    sa_l: gl.constexpr = gfx1250.get_wmma_scale_layout(a_l, [M, K // 32])
    sb_l: gl.constexpr = gfx1250.get_wmma_scale_layout(b_l, [N, K // 32])
    sa = gl.allocate_shared_memory(
        gl.uint8, [M, K // 32], SCALE_SHARED, gl.load(sa_ptr + _offsets(M, K // 32, SCALE_SRC))
    )
    sb = gl.allocate_shared_memory(
        gl.uint8, [N, K // 32], SCALE_SHARED, gl.load(sb_ptr + _offsets(N, K // 32, SCALE_SRC))
    )
    a = gl.allocate_shared_memory(
        a_ptr.dtype.element_ty, [M, K], SHARED, gl.load(a_ptr + _offsets(M, K, SRC))
    )
    b = gl.allocate_shared_memory(
        b_ptr.dtype.element_ty, [K, N], SHARED, gl.load(b_ptr + _offsets(K, N, SRC))
    )
    acc = gl.zeros([M, N], gl.float32, WMMA)
    acc = gfx1250.wmma_scaled(
        a.load(a_l), sa.load(sa_l), "e4m3", b.load(b_l), sb.load(sb_l), "e4m3", acc
    )
    gl.store(c_ptr + _offsets(M, N, WMMA), acc)


def _blocked(elems, lanes_n, warps, order=(1, 0), size=None):
    size = size or [1, elems]
    return gl.BlockedLayout(size, [32 // lanes_n, lanes_n], [warps, 1], list(order))


def _wmma(warps, instr=(16, 16, 32)):
    warp_bases = {4: [[1, 0], [2, 0]], 8: [[1, 0], [2, 0], [0, 1]]}[warps]
    return gl.amd.AMDWMMALayout(3, True, warp_bases, [], list(instr))


def _padded(pairs, shape):
    return gl.PaddedSharedLayout.with_identity_for(pairs, shape, [1, 0])


def _sl(name, dtype, shape, src, shared, dst, warps=4, init=False, covers=(), note=""):
    ce = dict(M=shape[0], N=shape[1], SRC=src, SHARED=shared, DST=dst, INIT=init)
    sig = signature(f"in_ptr:*{dtype} out_ptr:*{dtype}", ce)
    return Case(name, store_load, sig, ce, warps, ("10", *covers), note)


_B16 = _blocked(8, 8, 4)  # 16 B per lane, 8 lanes across a 64-wide fp16 row
_B16_W8 = _blocked(8, 8, 8)
_SW8 = gl.SwizzledSharedLayout(8, 1, 8, [1, 0])
_SW4 = gl.SwizzledSharedLayout(4, 2, 4, [1, 0])
_PLAIN = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
_W4 = _wmma(4)
#: a 64x64 fp16 XOR swizzle written as an explicit linear layout (Gluon's SharedLinearLayout)
_LINEAR = gl.SharedLinearLayout(
    [
        [0, 1],
        [0, 2],
        [0, 4],
        [0, 8],
        [0, 16],
        [0, 32],
        [1, 8],
        [2, 16],
        [4, 32],
        [8, 0],
        [16, 0],
        [32, 0],
    ]
)
#: the same bases with offsets 1, 2, 4 reversed: still a bijection, no 8-element run
_LINEAR_SCRAMBLED = gl.SharedLinearLayout(
    [
        [0, 4],
        [0, 2],
        [0, 1],
        [0, 8],
        [0, 16],
        [0, 32],
        [1, 0],
        [2, 0],
        [4, 0],
        [8, 0],
        [16, 0],
        [32, 0],
    ]
)

CASES = [
    _sl(
        "store_load_swizzled_dot_a_fp16",
        "fp16",
        (128, 64),
        _B16,
        _SW8,
        gl.DotOperandLayout(0, _W4, 8),
        covers=("swizzled",),
    ),
    _sl(
        "store_load_swizzled_dot_b_fp16",
        "fp16",
        (64, 128),
        _blocked(8, 16, 4),
        _SW8,
        gl.DotOperandLayout(1, _W4, 8),
        init=True,
        covers=("swizzled",),
    ),
    _sl(
        "store_load_swizzled4_dot_b_bf16_w8",
        "bf16",
        (64, 128),
        _blocked(8, 16, 8),
        _SW4,
        gl.DotOperandLayout(1, _wmma(8), 8),
        warps=8,
        covers=("swizzled", "8 warps"),
    ),
    _sl(
        "store_load_padded_multi_dot_b_fp16",
        "fp16",
        (64, 128),
        _blocked(8, 16, 4),
        _padded([[64, 4], [512, 8]], [64, 128]),
        gl.DotOperandLayout(1, _W4, 8),
        covers=("padded", "6"),
        note="[64:+4, 512:+8]: 8-byte aligned ds_load_tr16_b128",
    ),
    _sl(
        "store_load_padded16_dot_a_fp16",
        "fp16",
        (128, 64),
        _B16,
        _padded([[16, 4]], [128, 64]),
        gl.DotOperandLayout(0, _W4, 8),
        covers=("padded", "6"),
        note="[16:+4]",
    ),
    _sl(
        "store_load_padded64_blocked_fp16",
        "fp16",
        (128, 64),
        _B16,
        _padded([[64, 4]], [128, 64]),
        _B16,
        covers=("padded", "6"),
        note="[64:+4]: 8-byte aligned ds_load_b128 / ds_store_b128",
    ),
    _sl(
        "store_load_shared_linear_dot_a_fp16",
        "fp16",
        (64, 64),
        _B16,
        _LINEAR,
        gl.DotOperandLayout(0, _W4, 8),
        covers=("4-shared_linear",),
    ),
    _sl(
        "store_load_shared_linear_dot_b_fp16",
        "fp16",
        (64, 64),
        _B16,
        _LINEAR,
        gl.DotOperandLayout(1, _W4, 8),
        covers=("4-shared_linear",),
    ),
    _sl(
        "store_load_shared_linear_scrambled_fp16",
        "fp16",
        (64, 64),
        _B16,
        _LINEAR_SCRAMBLED,
        _B16,
        covers=("4-shared_linear",),
    ),
    _sl(
        "store_load_colsum_fp32",
        "fp32",
        (128, 64),
        _blocked(4, 16, 4),
        _PLAIN,
        gl.BlockedLayout([2, 1], [32, 1], [1, 4], [0, 1]),
        covers=("1", "fp32"),
        note="fp32 columns: each lane reads two rows 256 B apart",
    ),
    _sl(
        "store_load_rows_fp32_w8",
        "fp32",
        (64, 64),
        _blocked(4, 16, 8),
        _PLAIN,
        gl.BlockedLayout([1, 2], [1, 32], [8, 1], [1, 0]),
        warps=8,
        covers=("fp32", "8 warps"),
    ),
    _sl(
        "store_load_wmma_acc_fp32",
        "fp32",
        (128, 128),
        _W4,
        _padded([[128, 4]], [128, 128]),
        _blocked(4, 32, 4),
        covers=("padded",),
        note="an epilogue: the WMMA accumulator through LDS",
    ),
    _sl(
        "store_load_transpose_fp16",
        "fp16",
        (64, 64),
        _B16,
        gl.SwizzledSharedLayout(8, 1, 8, [0, 1]),
        _B16,
        covers=("swizzled",),
        note="column-major shared order: a transpose through LDS",
    ),
    _sl(
        "store_load_dot_a_i8",
        "i8",
        (128, 128),
        _blocked(16, 8, 4),
        gl.SwizzledSharedLayout(16, 1, 16, [1, 0]),
        gl.DotOperandLayout(0, _wmma(4, (16, 16, 64)), 8),
        covers=("1", "i8"),
    ),
    _sl(
        "store_load_dot_b_fp8",
        "fp8e4nv",
        (128, 128),
        _blocked(16, 8, 4),
        gl.SwizzledSharedLayout(16, 1, 16, [1, 0]),
        gl.DotOperandLayout(1, _wmma(4, (16, 16, 64)), 8),
        covers=("fp8",),
    ),
    _sl(
        "store_load_partitioned_inner128_fp16",
        "fp16",
        (128, 64),
        _B16,
        PartitionedSharedLayout(2, 1, 0, _padded([[512, 16]], [128, 64])),
        _B16,
        covers=("partitioned", "7"),
        note="inner [512:+16] with shape [128, 64]: 82416 bytes",
    ),
    _sl(
        "store_load_partitioned_inner256_fp16",
        "fp16",
        (128, 64),
        _B16,
        PartitionedSharedLayout(2, 1, 0, _padded([[512, 16]], [256, 64])),
        _B16,
        covers=("partitioned", "7"),
        note="inner [512:+16] with shape [256, 64]: 99312 bytes",
    ),
    _sl(
        "store_load_partitioned_dot_a_fp16_w8",
        "fp16",
        (256, 64),
        _B16_W8,
        PartitionedSharedLayout(2, 2, 0, _padded([[64, 8]], [64, 64])),
        gl.DotOperandLayout(0, _wmma(8), 8),
        warps=8,
        covers=("partitioned", "8 warps"),
    ),
]


def _slice_case(name, dtype, n, parent, src_dim, dst_dim, warps=4):
    ce = dict(
        N=n,
        PARENT=parent,
        SRC_DIM=src_dim,
        DST_DIM=dst_dim,
        SHARED=gl.SwizzledSharedLayout(1, 1, 1, [0]),
    )
    sig = signature(f"in_ptr:*{dtype} out_ptr:*{dtype}", ce)
    return Case(name, slice_read, sig, ce, warps, ("4-slice", "10"), "a 1-D vector read from LDS")


CASES += [
    _slice_case(
        "slice_read_fp32", "fp32", 128, gl.BlockedLayout([1, 4], [8, 4], [4, 1], [1, 0]), 1, 0
    ),
    _slice_case("slice_read_wmma_fp32", "fp32", 128, _W4, 0, 1),
    _slice_case(
        "slice_read_fp16_w8", "fp16", 256, gl.BlockedLayout([1, 8], [4, 8], [8, 1], [1, 0]), 1, 0, 8
    ),
]


def _views_case(name, dtype, m, k, shared, warps=4):
    w = _wmma(warps)
    ce = dict(M=m, K=k, SRC=_blocked(8, k // 8, warps), SHARED=shared, WMMA=w)
    sig = signature(f"in_ptr:*{dtype} out_ptr:*{dtype}", ce)
    return Case(name, views, sig, ce, warps, ("5", "10"), "memdesc_index/subslice/trans/reshape")


CASES += [
    _views_case("views_swizzled_fp16", "fp16", 128, 64, _SW8),
    _views_case("views_plain_bf16_w8", "bf16", 128, 64, _PLAIN, warps=8),
    _views_case(
        "views_padded_fp16",
        "fp16",
        128,
        64,
        gl.PaddedSharedLayout.with_identity_for([[64, 8]], [128, 64], [1, 0]),
    ),
]


def _fp4_case(name, op_idx, warps=4):
    w = _wmma(warps, (16, 16, 128))
    if op_idx == 0:  # [K/2, M] bytes, M contiguous -> [M, K/2] K-packed
        m, n, order, out = 64, 128, [0, 1], (128, 64)
    else:  # [N, K/2] bytes... stored [K/2, N] with N contiguous -> [K/2, 2N]
        m, n, order, out = 128, 64, [1, 0], (64, 128)
    ce = dict(
        M=m,
        N=n,
        SRC=_blocked(16, 4, warps) if op_idx else _blocked(16, 8, warps),
        SHARED=gl.SwizzledSharedLayout(1, 1, 1, order),
        DST=gl.DotOperandLayout(op_idx, w, 16),
        OUT_M=out[0],
        OUT_N=out[1],
    )
    sig = signature("in_ptr:*i8 out_ptr:*i8", ce)
    return Case(name, fp4_packed, sig, ce, warps, ("3",), "packed fp4: ds_load_tr4_b64")


CASES += [_fp4_case("fp4_packed_a", 0), _fp4_case("fp4_packed_b", 1)]

_MX_SIG = "a_ptr:*fp8e4nv b_ptr:*fp8e4nv sa_ptr:*u8 sb_ptr:*u8 c_ptr:*fp32"
_MX = dict(
    M=128,
    N=128,
    K=128,
    SRC=_blocked(16, 8, 4),
    SHARED=gl.SwizzledSharedLayout(16, 1, 16, [1, 0]),
    SCALE_SRC=gl.BlockedLayout([1, 4], [32, 1], [4, 1], [1, 0]),
    SCALE_SHARED=_PLAIN,
    WMMA=_wmma(4, (16, 16, 128)),
)
CASES += [
    Case(
        "mx_gemm_fp8",
        mx_gemm,
        signature(_MX_SIG, _MX),
        _MX,
        4,
        ("mx scales", "1", "10"),
        "MX fp8 WMMA with e8m0 scales from LDS",
    )
]


@gluon.jit
def _offsets3(B: gl.constexpr, M: gl.constexpr, N: gl.constexpr, layout: gl.constexpr):
    bs = gl.arange(0, B, layout=gl.SliceLayout(1, gl.SliceLayout(2, layout)))
    rows = gl.arange(0, M, layout=gl.SliceLayout(0, gl.SliceLayout(2, layout)))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, gl.SliceLayout(1, layout)))
    return bs[:, None, None] * M * N + rows[None, :, None] * N + cols[None, None, :]


@gluon.jit
def batched_operands(
    a_ptr,
    b_ptr,
    c_ptr,
    B: gl.constexpr,
    M: gl.constexpr,
    N: gl.constexpr,
    K: gl.constexpr,
    SRC: gl.constexpr,
    SHARED: gl.constexpr,
    WMMA: gl.constexpr,
):
    """A batched (rank-3) WMMA: both operands stored to LDS and read as rank-3 dot operands.
    (Triton 3.9.0 cannot re-parse the rank-3 #ttg.amd_wmma it prints, so the plain Triton
    batched matmul's loads cannot be probed from TTGIR text; this kernel builds the same
    accesses from Gluon.)"""
    a = gl.allocate_shared_memory(
        a_ptr.dtype.element_ty, [B, M, K], SHARED, gl.load(a_ptr + _offsets3(B, M, K, SRC))
    )
    b = gl.allocate_shared_memory(
        b_ptr.dtype.element_ty, [B, K, N], SHARED, gl.load(b_ptr + _offsets3(B, K, N, SRC))
    )
    acc = gl.zeros([B, M, N], gl.float32, WMMA)
    acc = gfx1250.wmma(
        a.load(gl.DotOperandLayout(0, WMMA, 8)), b.load(gl.DotOperandLayout(1, WMMA, 8)), acc
    )
    gl.store(c_ptr + _offsets3(B, M, N, WMMA), acc)


_B3 = dict(
    B=4,
    M=32,
    N=32,
    K=32,
    SRC=gl.BlockedLayout([1, 1, 8], [1, 8, 4], [4, 1, 1], [2, 1, 0]),
    SHARED=gl.SwizzledSharedLayout(8, 1, 8, [2, 1, 0]),
    WMMA=gl.amd.AMDWMMALayout(3, True, [[1, 0, 0], [2, 0, 0]], [], [16, 16, 32], rank=3),
)
CASES += [
    Case(
        "batched_operands_fp16",
        batched_operands,
        signature("a_ptr:*fp16 b_ptr:*fp16 c_ptr:*fp32", _B3),
        _B3,
        4,
        ("4-rank3", "10"),
        "rank-3 dot operands from LDS",
    )
]


@gluon.jit
def oversize_alloc(out_ptr, M: gl.constexpr, N: gl.constexpr, SHARED: gl.constexpr):
    """A swizzled allocation with a dim that is not a power of two, which Triton refuses."""
    smem = gl.allocate_shared_memory(gl.int8, [M, N], SHARED)
    layout: gl.constexpr = gl.BlockedLayout([1, 16], [8, 4], [4, 1], [1, 0])
    x = smem.slice(0, 512).load(layout)
    rows = gl.arange(0, 512, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, layout))
    gl.store(out_ptr + rows[:, None] * N + cols[None, :], x)


_REJECT = dict(M=625, N=64, SHARED=gl.SwizzledSharedLayout(16, 1, 4, [1, 0]))
CASES += [
    Case(
        "rejected_swizzled_625x64_i8",
        oversize_alloc,
        signature("out_ptr:*i8", _REJECT),
        _REJECT,
        4,
        ("7-rejected",),
        "625x64 i8 in a swizzled layout: Triton refuses the shape",
        rejects="shape must have power-of-2",
        rejected_alloc=(
            (625, 64),
            "i8",
            "#ttg.swizzled_shared<{vec = 16, perPhase = 1, maxPhase = 4, order = [1, 0]}>",
        ),
    )
]
