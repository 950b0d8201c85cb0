"""Gluon GEMMs for gfx1250: TDM and async-copy operand loads into swizzled, padded and
partitioned shared layouts, WMMA v3, 4 and 8 warps, fp16/bf16/fp8/i8/fp32 operands."""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd import gfx1250
from triton.experimental.gluon.language.amd.gfx1250 import async_copy, tdm

from . import Case, signature


@gluon.jit
def gemm_tdm(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    SHARED_A: gl.constexpr,
    SHARED_B: gl.constexpr,
    WMMA: gl.constexpr,
    K_WIDTH: gl.constexpr,
):
    """C = A @ B, A [M, K] and B [K, N] row-major, both staged in LDS by the TDM."""
    pid_m = gl.program_id(0)
    pid_n = gl.program_id(1)
    a_desc = tdm.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BLOCK_M, BLOCK_K], SHARED_A)
    b_desc = tdm.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BLOCK_K, BLOCK_N], SHARED_B)
    smem_a = gl.allocate_shared_memory(a_ptr.dtype.element_ty, [BLOCK_M, BLOCK_K], SHARED_A)
    smem_b = gl.allocate_shared_memory(b_ptr.dtype.element_ty, [BLOCK_K, BLOCK_N], SHARED_B)
    acc_ty: gl.constexpr = gl.int32 if a_ptr.dtype.element_ty == gl.int8 else gl.float32
    acc = gl.zeros([BLOCK_M, BLOCK_N], acc_ty, WMMA)
    for k in range(0, K, BLOCK_K):
        tdm.async_load(a_desc, [pid_m * BLOCK_M, k], smem_a)
        tdm.async_load(b_desc, [k, pid_n * BLOCK_N], smem_b)
        tdm.async_wait(0)
        a = smem_a.load(gl.DotOperandLayout(0, WMMA, K_WIDTH))
        b = smem_b.load(gl.DotOperandLayout(1, WMMA, K_WIDTH))
        acc = gfx1250.wmma(a, b, acc)
    offs_m = pid_m * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, WMMA))
    offs_n = pid_n * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, WMMA))
    gl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


@gluon.jit
def gemm_async(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N: gl.constexpr,
    K: gl.constexpr,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    SHARED_A: gl.constexpr,
    SHARED_B: gl.constexpr,
    WMMA: gl.constexpr,
    K_WIDTH: gl.constexpr,
    COPY_A: gl.constexpr,
    COPY_B: gl.constexpr,
):
    """C = A @ B with the operands staged by direct-to-LDS async copies (one stage); N and K
    are constexprs, so the copies are known to be 16-byte aligned."""
    pid_m = gl.program_id(0)
    pid_n = gl.program_id(1)
    rows_a = pid_m * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, COPY_A))
    cols_a = gl.arange(0, BLOCK_K, layout=gl.SliceLayout(0, COPY_A))
    rows_b = gl.arange(0, BLOCK_K, layout=gl.SliceLayout(1, COPY_B))
    cols_b = pid_n * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, COPY_B))
    smem_a = gl.allocate_shared_memory(a_ptr.dtype.element_ty, [BLOCK_M, BLOCK_K], SHARED_A)
    smem_b = gl.allocate_shared_memory(b_ptr.dtype.element_ty, [BLOCK_K, BLOCK_N], SHARED_B)
    acc_ty: gl.constexpr = gl.int32 if a_ptr.dtype.element_ty == gl.int8 else gl.float32
    acc = gl.zeros([BLOCK_M, BLOCK_N], acc_ty, WMMA)
    for k in range(0, K, BLOCK_K):
        async_copy.global_to_shared(smem_a, a_ptr + rows_a[:, None] * K + (k + cols_a)[None, :])
        async_copy.global_to_shared(smem_b, b_ptr + (k + rows_b)[:, None] * N + cols_b[None, :])
        async_copy.commit_group()
        async_copy.wait_group(0)
        a = smem_a.load(gl.DotOperandLayout(0, WMMA, K_WIDTH))
        b = smem_b.load(gl.DotOperandLayout(1, WMMA, K_WIDTH))
        acc = gfx1250.wmma(a, b, acc)
    offs_m = pid_m * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, WMMA))
    offs_n = pid_n * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, WMMA))
    gl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc)


_DTYPES = {"fp16": "fp16", "bf16": "bf16", "fp8": "fp8e4nv", "i8": "i8", "fp32": "fp32"}
#: dtype -> (WMMA instruction shape, kWidth)
_WMMA = {
    "fp16": ([16, 16, 32], 8),
    "bf16": ([16, 16, 32], 8),
    "fp8": ([16, 16, 64], 8),
    "i8": ([16, 16, 64], 8),
    "fp32": ([16, 16, 4], 2),
}


def _padded(pairs, shape):
    return gl.PaddedSharedLayout.with_identity_for(pairs, shape, [1, 0])


def _wmma(warps, instr):
    warp_bases = {4: [[1, 0], [2, 0]], 8: [[1, 0], [2, 0], [0, 1]]}[warps]
    return gl.amd.AMDWMMALayout(3, True, warp_bases, [], instr)


def _tdm_case(name, dtype, warps, shared, block=(128, 128, 64), covers=(), note="", wmma=None):
    m, n, k = block
    instr, k_width = _WMMA[dtype]
    if shared == "partitioned":
        sa, sb, w = gfx1250.make_partitioned_dot_layouts(
            m, n, _padded([[k, 8]], [m, k]), _padded([[n, 16]], [k, n]), warps, instr
        )
    else:
        sa, sb = shared
        w = wmma or _wmma(warps, instr)
    acc = "i32" if dtype == "i8" else "fp32"
    ce = dict(BLOCK_M=m, BLOCK_N=n, BLOCK_K=k, SHARED_A=sa, SHARED_B=sb, WMMA=w, K_WIDTH=k_width)
    t = _DTYPES[dtype]
    sig = signature(f"a_ptr:*{t} b_ptr:*{t} c_ptr:*{acc} M:i32 N:i32 K:i32", ce)
    return Case(name, gemm_tdm, sig, ce, warps, ("gemm", "tdm", *covers), note)


def _copy_layout(cols, elems, warps):
    """16 bytes per lane along the contiguous dim, the lanes of a warp across a row first."""
    lanes = min(32, cols // elems)
    return gl.BlockedLayout([1, elems], [32 // lanes, lanes], [warps, 1], [1, 0])


def _async_case(name, dtype, warps, sa, sb, block=(128, 128, 64), covers=(), note=""):
    m, n, k = block
    instr, k_width = _WMMA[dtype]
    w = _wmma(warps, instr)
    elems = 16 // (4 if dtype == "fp32" else 2 if dtype in ("fp16", "bf16") else 1)
    copy_a, copy_b = _copy_layout(k, elems, warps), _copy_layout(n, elems, warps)
    acc = "i32" if dtype == "i8" else "fp32"
    ce = dict(
        N=1024,
        K=1024,
        BLOCK_M=m,
        BLOCK_N=n,
        BLOCK_K=k,
        SHARED_A=sa,
        SHARED_B=sb,
        WMMA=w,
        K_WIDTH=k_width,
        COPY_A=copy_a,
        COPY_B=copy_b,
    )
    t = _DTYPES[dtype]
    sig = signature(f"a_ptr:*{t} b_ptr:*{t} c_ptr:*{acc} M:i32", ce)
    return Case(name, gemm_async, sig, ce, warps, ("gemm", "async_copy", *covers), note)


_SW8 = gl.SwizzledSharedLayout(8, 1, 8, [1, 0])
_SW16 = gl.SwizzledSharedLayout(16, 1, 16, [1, 0])
_PLAIN = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])

CASES = [
    _tdm_case(
        "gemm_tdm_partitioned_fp16",
        "fp16",
        4,
        "partitioned",
        covers=("partitioned", "padded"),
        note="make_partitioned_dot_layouts: the AMD blog's swizzled ctaLayout + PartitionedSharedLayout",
    ),
    _tdm_case(
        "gemm_tdm_partitioned_fp16_w8",
        "fp16",
        8,
        "partitioned",
        block=(256, 256, 64),
        covers=("partitioned", "padded", "8 warps"),
    ),
    _tdm_case(
        "gemm_tdm_partitioned_bf16", "bf16", 4, "partitioned", covers=("partitioned", "padded")
    ),
    _tdm_case(
        "gemm_tdm_padded_fp16",
        "fp16",
        4,
        (_padded([[64, 8]], [128, 64]), _padded([[128, 16]], [64, 128])),
        covers=("padded",),
    ),
    _tdm_case(
        "gemm_tdm_padded8_fp16",
        "fp16",
        4,
        (_padded([[64, 4]], [128, 64]), _padded([[128, 4]], [64, 128])),
        covers=("padded", "6"),
        note="8-byte paddings [64:+4] and [128:+4]",
    ),
    _tdm_case(
        "gemm_tdm_padded16_fp16",
        "fp16",
        4,
        (_padded([[16, 4]], [128, 64]), _padded([[64, 4]], [64, 128])),
        covers=("padded", "6"),
        note="8-byte paddings [16:+4] and [64:+4]",
    ),
    _tdm_case(
        "gemm_tdm_plain_fp16_w8", "fp16", 8, (_PLAIN, _PLAIN), covers=("swizzled", "8 warps")
    ),
    _tdm_case(
        "gemm_tdm_padded_fp8",
        "fp8",
        4,
        (_padded([[128, 16]], [128, 128]), _padded([[128, 16]], [128, 128])),
        block=(128, 128, 128),
        covers=("padded", "fp8"),
    ),
    _tdm_case(
        "gemm_tdm_padded_i8",
        "i8",
        4,
        (_padded([[128, 16]], [128, 128]), _padded([[128, 16]], [128, 128])),
        block=(128, 128, 128),
        covers=("padded", "i8"),
    ),
    _tdm_case(
        "gemm_tdm_padded_fp32",
        "fp32",
        4,
        (_padded([[32, 4]], [64, 32]), _padded([[64, 4]], [32, 64])),
        block=(64, 64, 32),
        covers=("padded", "fp32"),
    ),
    _tdm_case(
        "gemm_tdm_partitioned_fp8_w8",
        "fp8",
        8,
        "partitioned",
        block=(256, 256, 128),
        covers=("partitioned", "padded", "fp8", "8 warps"),
    ),
    _async_case("gemm_async_swizzled_fp16", "fp16", 4, _SW8, _SW8, covers=("swizzled",)),
    _async_case(
        "gemm_async_swizzled_bf16_w8", "bf16", 8, _SW8, _SW8, covers=("swizzled", "8 warps")
    ),
    _async_case(
        "gemm_async_swizzled_fp8",
        "fp8",
        4,
        _SW16,
        _SW16,
        block=(128, 128, 128),
        covers=("swizzled", "fp8"),
    ),
    _async_case(
        "gemm_async_swizzled_i8",
        "i8",
        4,
        _SW16,
        _SW16,
        block=(128, 128, 128),
        covers=("swizzled", "i8"),
    ),
    _async_case(
        "gemm_async_plain_fp32",
        "fp32",
        4,
        _PLAIN,
        _PLAIN,
        block=(64, 64, 32),
        covers=("swizzled", "fp32"),
    ),
]
