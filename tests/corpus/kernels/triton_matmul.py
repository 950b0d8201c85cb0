"""Plain Triton ``tl.dot`` matmuls: Triton's own layouts, pipelining and LDS staging."""

import triton
import triton.language as tl

from . import Case, signature


@triton.jit
def matmul(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bk,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """C = A @ B for row-major A [M, K], B [K, N]; M, N, K multiples of the blocks."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :]
    b_ptrs = b_ptr + ks[:, None] * stride_bk + cols[None, :]
    acc_ty: tl.constexpr = tl.int32 if a_ptr.dtype.element_ty == tl.int8 else tl.float32
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=acc_ty)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=acc_ty)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc)


@triton.jit
def matmul_bt(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bn,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """C = A @ B^T with B stored [N, K] (K contiguous in both operands)."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rows[:, None] * stride_am + ks[None, :]
    b_ptrs = b_ptr + cols[:, None] * stride_bn + ks[None, :]
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, tl.trans(b), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], acc.to(tl.float16))


@triton.jit
def batched_matmul(
    a_ptr,
    b_ptr,
    c_ptr,
    K,
    BATCH: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """A rank-3 ``tl.dot``: C[b] = A[b] @ B[b] for BATCH small tiles at once."""
    bs = tl.arange(0, BATCH)
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + bs[:, None, None] * BLOCK_M * K + rows[None, :, None] * K + ks[None, None, :]
    b_ptrs = (
        b_ptr + bs[:, None, None] * K * BLOCK_N + ks[None, :, None] * BLOCK_N + cols[None, None, :]
    )
    acc = tl.zeros([BATCH, BLOCK_M, BLOCK_N], dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * BLOCK_N
    c_ptrs = (
        c_ptr
        + bs[:, None, None] * BLOCK_M * BLOCK_N
        + rows[None, :, None] * BLOCK_N
        + cols[None, None, :]
    )
    tl.store(c_ptrs, acc)


def _case(
    name, dtype, block, warps=4, stages=None, precision="ieee", covers=(), note="", fn=matmul
):
    m, n, k = block
    ce = dict(BLOCK_M=m, BLOCK_N=n, BLOCK_K=k)
    if fn is matmul:
        ce["PRECISION"] = precision
    acc = "i32" if dtype == "i8" else "fp32" if fn is matmul else "fp16"
    strides = (
        "stride_am:i32 stride_bk:i32 stride_cm:i32"
        if fn is matmul
        else "stride_am:i32 stride_bn:i32 stride_cm:i32"
    )
    sig = signature(f"a_ptr:*{dtype} b_ptr:*{dtype} c_ptr:*{acc} M:i32 N:i32 K:i32 {strides}", ce)
    return Case(name, fn, sig, ce, warps, ("tl.dot", *covers), note)


CASES = [
    _case("matmul_fp16", "fp16", (128, 128, 64)),
    _case(
        "matmul_fp16_k16",
        "fp16",
        (128, 128, 16),
        covers=("2",),
        note="BLOCK_K = 16 < the WMMA K of 32: two identical-address ds_load_tr16_b128 pairs",
    ),
    _case("matmul_fp16_k16_w8", "fp16", (128, 128, 16), warps=8, covers=("2", "8 warps")),
    _case("matmul_bf16_w8", "bf16", (256, 128, 64), warps=8, covers=("8 warps",)),
    _case(
        "matmul_fp32",
        "fp32",
        (64, 64, 32),
        precision="ieee",
        covers=("1", "fp32"),
        note="fp32 operands",
    ),
    _case("matmul_fp32_bf16x3", "fp32", (64, 64, 32), precision="bf16x3", covers=("fp32",)),
    _case("matmul_fp8", "fp8e4nv", (128, 128, 128), covers=("fp8",)),
    _case("matmul_i8", "i8", (128, 128, 128), covers=("i8",)),
    _case("matmul_bt_fp16", "fp16", (128, 128, 64), fn=matmul_bt, note="B^T: K-contiguous B"),
    Case(
        "batched_matmul_fp16",
        batched_matmul,
        signature(
            "a_ptr:*fp16 b_ptr:*fp16 c_ptr:*fp32 K:i32",
            dict(BATCH=4, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32),
        ),
        dict(BATCH=4, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32),
        4,
        ("tl.dot", "4-rank3"),
        "a rank-3 tl.dot",
    ),
]
