"""Fused attention forward in the style of Triton's tutorial 06, the AMD blog's example:
fp16, no causal mask, BLOCK_M = BLOCK_N = 128, HEAD_DIM = 256, 8 warps; its V operand
becomes 128 ds_load_tr16_b128 per loop iteration."""

import triton
import triton.language as tl

from . import Case, signature


@triton.jit
def attention_fwd(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    sm_scale,
    N_CTX,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    HEAD_DIM: tl.constexpr,
):
    """One (batch x head, BLOCK_M rows) tile of softmax(Q K^T * sm_scale) V, online softmax."""
    start_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64) * N_CTX * HEAD_DIM
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head + rows[:, None] * HEAD_DIM + dims[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.full([BLOCK_M], 1.0, tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.44269504  # log2(e): exp via exp2
    for start_n in range(0, N_CTX, BLOCK_N):
        keys = start_n + cols
        k_t = tl.load(k_ptr + head + keys[None, :] * HEAD_DIM + dims[:, None])
        qk = tl.dot(q, k_t)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + head + keys[:, None] * HEAD_DIM + dims[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(o_ptr + head + rows[:, None] * HEAD_DIM + dims[None, :], acc.to(tl.float16))


def _case(name, block_m, block_n, head_dim, warps, note=""):
    ce = dict(BLOCK_M=block_m, BLOCK_N=block_n, HEAD_DIM=head_dim)
    sig = signature("q_ptr:*fp16 k_ptr:*fp16 v_ptr:*fp16 o_ptr:*fp16 sm_scale:fp32 N_CTX:i32", ce)
    return Case(name, attention_fwd, sig, ce, warps, ("attention", "tl.dot", "8 warps"), note)


CASES = [
    _case("attention_fwd_d256", 128, 128, 256, 8, note="the AMD blog's configuration"),
    _case("attention_fwd_d128", 128, 64, 128, 4),
]
