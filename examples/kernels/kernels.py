"""Kernels for wgpsim's kernel report: sources compiled for gfx1250 by ``regenerate.py``.

* ``lds_bandwidth``: the AMD blog's LDS bandwidth microbenchmark as a Gluon kernel (a [4, 8192]
  fp16 tensor, 64 KiB, stored to LDS and read back into a blocked layout, 32 ds_load_b128 per
  warp), plain (``PARTITIONED=False``) and partitioned (two partitions, rows alternating).
* ``gemm_tdm``: a Gluon GEMM, 128x128x64 fp16 tiles, double-buffered TDM loads into LDS, WMMA
  v3; the standard layouts or ``make_partitioned_dot_layouts``'s partitioned ones.
* ``matmul``: a plain Triton ``tl.dot`` matmul (the compiler picks the layouts); also in fp32
  and fp8 (e4m3) operands, three stages, where LLVM pairs LDS loads (``ds_load_2addr_*``).
* ``column_sum``: a reduction over the rows of a [128, 64] fp32 tile (through LDS scratch).
* ``transpose``: a [64, 64] fp16 tile stored transposed (a ``convert_layout`` through scratch).

The AMD blog: https://rocm.blogs.amd.com/software-tools-optimization/mi450-lds-optimization/README.html
"""

import triton
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl
from triton.experimental.gluon.language.amd import gfx1250
from triton.experimental.gluon.language.amd.gfx1250 import PartitionedSharedLayout, tdm


@gluon.jit
def lds_bandwidth(
    x_ptr, out_ptr, N: ttgl.constexpr, NUM_WARPS: ttgl.constexpr, PARTITIONED: ttgl.constexpr
):
    blocked: ttgl.constexpr = ttgl.BlockedLayout([1, 8], [1, 32], [NUM_WARPS, 1], [1, 0])
    if PARTITIONED:
        shared: ttgl.constexpr = PartitionedSharedLayout(
            2, NUM_WARPS // 2, 0, ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0])
        )
    else:
        shared: ttgl.constexpr = ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0])
    rows = ttgl.arange(0, NUM_WARPS, layout=ttgl.SliceLayout(1, blocked))
    cols = ttgl.arange(0, N, layout=ttgl.SliceLayout(0, blocked))
    offs = rows[:, None] * N + cols[None, :]
    x = ttgl.load(x_ptr + offs)
    smem = ttgl.allocate_shared_memory(ttgl.float16, [NUM_WARPS, N], shared, x)
    ttgl.barrier()
    y = smem.load(blocked)
    ttgl.barrier()
    ttgl.store(out_ptr + offs, y)


@gluon.jit
def gemm_tdm(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BM: ttgl.constexpr,
    BN: ttgl.constexpr,
    BK: ttgl.constexpr,
    SHARED_A: ttgl.constexpr,
    SHARED_B: ttgl.constexpr,
    WMMA: ttgl.constexpr,
):
    a_desc = tdm.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK], SHARED_A)
    b_desc = tdm.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BK, BN], SHARED_B)
    a_smem = ttgl.allocate_shared_memory(ttgl.float16, [2, BM, BK], SHARED_A)
    b_smem = ttgl.allocate_shared_memory(ttgl.float16, [2, BK, BN], SHARED_B)
    dot_a: ttgl.constexpr = ttgl.DotOperandLayout(0, WMMA, 8)
    dot_b: ttgl.constexpr = ttgl.DotOperandLayout(1, WMMA, 8)
    acc = ttgl.zeros([BM, BN], ttgl.float32, WMMA)
    tdm.async_load(a_desc, [0, 0], a_smem.index(0))
    tdm.async_load(b_desc, [0, 0], b_smem.index(0))
    for k in range(0, K // BK - 1):
        s = k % 2
        tdm.async_load(a_desc, [0, (k + 1) * BK], a_smem.index(1 - s))
        tdm.async_load(b_desc, [(k + 1) * BK, 0], b_smem.index(1 - s))
        tdm.async_wait(2)
        a = a_smem.index(s).load(dot_a)
        b = b_smem.index(s).load(dot_b)
        acc = gfx1250.wmma(a, b, acc)
    tdm.async_wait(0)
    a = a_smem.index(1).load(dot_a)
    b = b_smem.index(1).load(dot_b)
    acc = gfx1250.wmma(a, b, acc)
    rows = ttgl.arange(0, BM, layout=ttgl.SliceLayout(1, WMMA))
    cols = ttgl.arange(0, BN, layout=ttgl.SliceLayout(0, WMMA))
    ttgl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(ttgl.float16))


@triton.jit
def matmul(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sak,
    sbk,
    sbn,
    scm,
    scn,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_m = pid * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_n[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc += tl.dot(a, b)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    tl.store(c_ptr + offs_m[:, None] * scm + offs_n[None, :] * scn, acc.to(tl.float16))


def gemm_layouts(partitioned: bool, bm: int = 128, bn: int = 128, bk: int = 64):
    """(SHARED_A, SHARED_B, WMMA) for ``gemm_tdm``: padded operands and a plain ctaLayout, or
    ``make_partitioned_dot_layouts``'s partitioned operands and swizzled ctaLayout."""
    from triton.experimental.gluon.language.amd._layouts import AMDWMMALayout

    pa = ttgl.PaddedSharedLayout.with_identity_for([[bk, 8]], [bm, bk], [1, 0])
    pb = ttgl.PaddedSharedLayout.with_identity_for([[bn, 16]], [bk, bn], [1, 0])
    if partitioned:
        return gfx1250.make_partitioned_dot_layouts(bm, bn, pa, pb, 4, [16, 16, 32])
    return pa, pb, AMDWMMALayout(3, True, [[0, 1], [1, 0]], [], [16, 16, 32])


PTR3 = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
#: name -> (function, signature, constexprs, num_warps)
CASES = {
    "lds_bandwidth_plain": (
        lds_bandwidth,
        {"x_ptr": "*fp16", "out_ptr": "*fp16"},
        {"N": 8192, "NUM_WARPS": 4, "PARTITIONED": False},
        4,
    ),
    "lds_bandwidth_partitioned": (
        lds_bandwidth,
        {"x_ptr": "*fp16", "out_ptr": "*fp16"},
        {"N": 8192, "NUM_WARPS": 4, "PARTITIONED": True},
        4,
    ),
    "matmul": (
        matmul,
        PTR3 | {s: "i32" for s in ("sam", "sak", "sbk", "sbn", "scm", "scn")},
        {"BM": 128, "BN": 128, "BK": 64},
        4,
    ),
}


def gemm_case(partitioned: bool):
    sa, sb, wmma = gemm_layouts(partitioned)
    consts = {"BM": 128, "BN": 128, "BK": 64, "SHARED_A": sa, "SHARED_B": sb, "WMMA": wmma}
    return gemm_tdm, PTR3, consts, 4


@triton.jit
def attention_fwd(Q, K, V, Out, sm_scale, N_CTX, stride_qm, stride_kn, stride_vn, stride_om,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):  # fmt: skip
    """The forward pass of Triton's tutorial 06 (fused attention), non-causal, one head: the
    online-softmax loop over K/V blocks with its two tl.dot (Q K^T and P V)."""
    start_m = tl.program_id(0)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * stride_qm + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(K + (start_n + offs_n)[None, :] * stride_kn + offs_d[:, None])
        qk = tl.dot(q, k)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V + (start_n + offs_n)[:, None] * stride_vn + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(Out + offs_m[:, None] * stride_om + offs_d[None, :], acc.to(tl.float16))


ATTENTION = (
    attention_fwd,
    {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "Out": "*fp16", "sm_scale": "fp32", "N_CTX": "i32",
     "stride_qm": "i32", "stride_kn": "i32", "stride_vn": "i32", "stride_om": "i32"},
    {"BLOCK_M": 128, "BLOCK_N": 128, "HEAD_DIM": 256},
    8,
)  # fmt: skip


@triton.jit
def column_sum(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + tl.arange(0, N), tl.sum(tl.load(x_ptr + offs), axis=0))


@triton.jit
def transpose(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    tl.store(out_ptr + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], tl.trans(x))


STRIDES = {s: "i32" for s in ("sam", "sak", "sbk", "sbn", "scm", "scn")}
CASES |= {
    "matmul_fp32": (matmul, PTR3 | {"a_ptr": "*fp32", "b_ptr": "*fp32"} | STRIDES,
                    {"BM": 64, "BN": 64, "BK": 32}, 4),
    "matmul_fp8": (matmul, PTR3 | {"a_ptr": "*fp8e4nv", "b_ptr": "*fp8e4nv"} | STRIDES,
                   {"BM": 128, "BN": 128, "BK": 64}, 8),
    "column_sum": (column_sum, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"M": 128, "N": 64}, 4),
    "transpose": (transpose, {"x_ptr": "*fp16", "out_ptr": "*fp16"}, {"M": 64, "N": 64}, 4),
}  # fmt: skip
#: num_stages per case (default: Triton's)
STAGES = {"matmul_fp32": 3, "matmul_fp8": 3}
