"""Small kernels (written for this corpus) that reproduce the project's known held-out failures
(issue 23): a row-permuting padded layout on a B operand, a ``memdesc_subslice`` view of a padded
buffer read as a dot operand, a causal attention loop fed by tensor descriptors, a column-sum
reduction loop, and a batched matmul whose loop body spans several basic blocks."""

import triton
import triton.language as tl

# The Gluon store -> load kernel of the project's corpus, reused for the padded B operand.
from corpus.kernels.gluon_access import _offsets, store_load  # noqa: F401
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


def _wmma4():
    return gl.amd.AMDWMMALayout(3, True, [[1, 0], [2, 0]], [], [16, 16, 32])


#: [64, 128] fp16, 8 lanes of 16 B across a row
SRC_64x128 = gl.BlockedLayout([1, 8], [2, 16], [4, 1], [1, 0])
SRC_128x128 = gl.BlockedLayout([1, 8], [2, 16], [4, 1], [1, 0])
#: a padded layout whose linear part sends the row bits in reverse order (a row permutation)
PADDED_ROWPERM = gl.PaddedSharedLayout(
    [[128, 8]],
    [[0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [0, 32], [0, 64]]
    + [[32, 0], [16, 0], [8, 0], [4, 0], [2, 0], [1, 0]],
    [],
    [64, 128],
)
PADDED_128 = gl.PaddedSharedLayout.with_identity_for([[128, 8]], [128, 128], [1, 0])
DOT_B = gl.DotOperandLayout(1, _wmma4(), 8)
DOT_A = gl.DotOperandLayout(0, _wmma4(), 8)


@gluon.jit
def padded_subslice_dot(
    in_ptr, out_ptr, M: gl.constexpr, SRC: gl.constexpr, SHARED: gl.constexpr, A: gl.constexpr
):
    """A [M, M] tile stored padded; its right half (a memdesc_subslice along K) read as the A
    operand of a WMMA."""
    x = gl.load(in_ptr + _offsets(M, M, SRC))
    smem = gl.allocate_shared_memory(in_ptr.dtype.element_ty, [M, M], SHARED, x)
    a = smem.slice(M // 2, M // 2, dim=1).load(A)
    gl.store(out_ptr + _offsets(M, M // 2, A), a)


@triton.jit
def _attn_inner(
    acc, l_i, m_i, q, desc_k, desc_v, base, start_m, qk_scale, offs_m, offs_n,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
):  # fmt: skip
    """One band of the causal KV loop (the tutorial's split): STAGE 1 the blocks left of the
    diagonal block, unmasked; STAGE 2 the diagonal block, masked."""
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    else:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    for start_n in tl.range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([base + start_n, 0]).T
        qk = tl.dot(q, k)
        if STAGE == 2:
            causal = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(causal, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([base + start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    return acc, l_i, m_i


@triton.jit
def attn_causal_descriptor(
    Q,
    K,
    V,
    Out,
    sm_scale,
    N_CTX,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Causal attention whose Q/K/V tiles come through tensor descriptors, in the shape of the
    Triton tutorial's descriptor path: the KV loop in two bands (left of the diagonal block,
    then the diagonal block masked), both from one inlined function."""
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    rows = N_CTX * 16
    desc_q = tl.make_tensor_descriptor(Q, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM])
    desc_k = tl.make_tensor_descriptor(K, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    desc_v = tl.make_tensor_descriptor(V, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_N, HEAD_DIM])
    desc_o = tl.make_tensor_descriptor(Out, [rows, HEAD_DIM], [HEAD_DIM, 1], [BLOCK_M, HEAD_DIM])
    base = off_hz * N_CTX
    q_row = base + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    q = desc_q.load([q_row, 0])
    qk_scale = sm_scale * 1.44269504
    acc, l_i, m_i = _attn_inner(
        acc,
        l_i,
        m_i,
        q,
        desc_k,
        desc_v,
        base,
        start_m,
        qk_scale,
        offs_m,
        offs_n,
        BLOCK_M,
        BLOCK_N,
        1,
    )
    acc, l_i, m_i = _attn_inner(
        acc,
        l_i,
        m_i,
        q,
        desc_k,
        desc_v,
        base,
        start_m,
        qk_scale,
        offs_m,
        offs_n,
        BLOCK_M,
        BLOCK_N,
        2,
    )
    desc_o.store([q_row, 0], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def col_sum_loop(x_ptr, out_ptr, M, N: tl.constexpr, BLOCK_M: tl.constexpr):
    """Column sums of an [M, N] matrix: a loop over row blocks, each block summed over its
    rows (the warps' partial sums meet in LDS every iteration)."""
    cols = tl.arange(0, N)
    acc = tl.zeros([N], dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=rows[:, None] < M, other=0.0)
        acc += tl.sum(x, axis=0)
    tl.store(out_ptr + tl.program_id(0) * N + cols, acc)


@triton.jit
def bmm_branchy(
    a_ptr, b_ptr, c_ptr, skip_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """A batched matmul whose K loop skips the blocks a runtime table marks empty: the dot sits
    under a branch, so the loop body is several basic blocks."""
    batch = tl.program_id(2)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + batch * M * K + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = b_ptr + batch * K * N + offs_k[:, None] * N + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        if tl.load(skip_ptr + batch * tl.cdiv(K, BK) + k) == 0:
            acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * N
    c_ptrs = c_ptr + batch * M * N + offs_m[:, None] * N + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.float16))


@triton.jit
def bmm_rank3_masked(
    a_ptr, b_ptr, c_ptr, K, BB: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """A batched matmul as one rank-3 tl.dot per K step ([BB, BM, BK] x [BB, BK, BN]), its loads
    masked at the end of K."""
    ob = tl.arange(0, BB)[:, None, None]
    om = tl.arange(0, BM)[None, :, None]
    on = tl.arange(0, BN)[None, None, :]
    okm = tl.arange(0, BK)[None, None, :]
    okn = tl.arange(0, BK)[None, :, None]
    acc = tl.zeros((BB, BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + ob * BM * K + om * K + k + okm, mask=(k + okm) < K, other=0.0)
        b = tl.load(b_ptr + ob * K * BN + (k + okn) * BN + on, mask=(k + okn) < K, other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + ob * BM * BN + om * BN + on, acc.to(tl.float16))
