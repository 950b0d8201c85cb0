"""Held-out kernels after public kernels others wrote (issue 27), the attention and quantized
GEMM kinds: the flash-attention backward's dK/dV loop (``tl.trans`` operands), a paged-attention
decode with its block table, a chunked linear-attention output (causal mask on a ``q @ k^T``
tile), an int8 GEMM with per-token / per-channel scales, a 4-bit AWQ GEMM (unpacked in
registers) and the fp8 w8a8 fused-MoE GEMM. Each follows the kernel named above it (repository,
path, the commit where one was read), re-expressed without the torch wrappers."""

import triton
import triton.language as tl


# After triton-lang/triton python/tutorials/06-fused-attention.py @ dc6ee3ed2cf9 (_attn_bwd_dkdv
# inside _attn_bwd): one BLOCK_N1 block of keys/values, a loop over the query blocks; qT = q^T
# read through tl.trans, p^T recomputed from the saved logsumexp M, dV += p^T do, dK += ds^T q.
@triton.jit
def attn_bwd_dkdv(
    Q,
    K,
    V,
    DO,
    M,
    D,
    DK,
    DV,
    sm_scale,
    stride_tok,
    N_CTX,
    BLOCK_M1: tl.constexpr,
    BLOCK_N1: tl.constexpr,
    HEAD_DIM: tl.constexpr,
):
    bhid = tl.program_id(1)
    adj = bhid * N_CTX * HEAD_DIM
    Q += adj
    K += adj
    V += adj
    DO += adj
    DK += adj
    DV += adj
    M += bhid * N_CTX
    D += bhid * N_CTX
    start_n = tl.program_id(0) * BLOCK_N1
    offs_n = start_n + tl.arange(0, BLOCK_N1)
    offs_k = tl.arange(0, HEAD_DIM)
    k = tl.load(K + offs_n[:, None] * stride_tok + offs_k[None, :])
    v = tl.load(V + offs_n[:, None] * stride_tok + offs_k[None, :])
    dk = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N1, HEAD_DIM], dtype=tl.float32)
    offs_m = tl.arange(0, BLOCK_M1)
    qT_ptrs = Q + offs_m[None, :] * stride_tok + offs_k[:, None]
    do_ptrs = DO + offs_m[:, None] * stride_tok + offs_k[None, :]
    for curr_m in range(0, N_CTX, BLOCK_M1):
        qT = tl.load(qT_ptrs)
        m = tl.load(M + curr_m + offs_m)
        qkT = tl.dot(k, qT)
        pT = tl.math.exp2(qkT - m[None, :])
        do = tl.load(do_ptrs)
        dv += tl.dot(pT.to(tl.float16), do)
        Di = tl.load(D + curr_m + offs_m)
        dpT = tl.dot(v, tl.trans(do)).to(tl.float32)
        dsT = (pT * (dpT - Di[None, :])).to(tl.float16)
        dk += tl.dot(dsT, tl.trans(qT))
        qT_ptrs += BLOCK_M1 * stride_tok
        do_ptrs += BLOCK_M1 * stride_tok
    tl.store(DV + offs_n[:, None] * stride_tok + offs_k[None, :], dv.to(tl.float16))
    dk *= sm_scale
    tl.store(DK + offs_n[:, None] * stride_tok + offs_k[None, :], dk.to(tl.float16))


# After vllm-project/vllm vllm/attention/ops/triton_unified_attention.py (commit not pinned;
# kernel_unified_attention_2d, decode only): one program per (kv head, sequence); the
# query heads of that kv head as the rows of Q; a loop over the sequence's pages through its
# block table, the online softmax, P @ V.
@triton.jit
def paged_attention_decode(
    out_ptr,
    q_ptr,
    k_cache,
    v_cache,
    block_tables,
    seq_lens,
    scale,
    stride_q_tok,
    stride_bt,
    stride_k_blk,
    stride_k_tok,
    stride_o_tok,
    num_queries_per_kv: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
    HEAD_SIZE: tl.constexpr,
):
    kv_head = tl.program_id(0)
    seq = tl.program_id(1)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_SIZE)
    offs_t = tl.arange(0, BLOCK_SIZE)
    q_head = kv_head * num_queries_per_kv + offs_m
    head_ok = offs_m < num_queries_per_kv
    q = tl.load(
        q_ptr + seq * stride_q_tok + q_head[:, None] * HEAD_SIZE + offs_d[None, :],
        mask=head_ok[:, None],
        other=0.0,
    )
    seq_len = tl.load(seq_lens + seq)
    M = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    L = tl.full([BLOCK_M], 1.0, dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_SIZE], dtype=tl.float32)
    for j in range(0, tl.cdiv(seq_len, BLOCK_SIZE)):
        page = tl.load(block_tables + seq * stride_bt + j).to(tl.int64)
        kv_off = page * stride_k_blk + kv_head * HEAD_SIZE
        K = tl.load(k_cache + kv_off + offs_d[:, None] + offs_t[None, :] * stride_k_tok)
        V = tl.load(v_cache + kv_off + offs_t[:, None] * stride_k_tok + offs_d[None, :])
        S = scale * tl.dot(q, K)
        S = tl.where((j * BLOCK_SIZE + offs_t)[None, :] < seq_len, S, float("-inf"))
        m_j = tl.maximum(M, tl.max(S, axis=1))
        P = tl.exp(S - m_j[:, None])
        alpha = tl.exp(M - m_j)
        acc = acc * alpha[:, None] + tl.dot(P.to(V.dtype), V)
        L = L * alpha + tl.sum(P, axis=1)
        M = m_j
    acc = acc / L[:, None]
    o = out_ptr + seq * stride_o_tok + q_head[:, None] * HEAD_SIZE + offs_d[None, :]
    tl.store(o, acc.to(out_ptr.dtype.element_ty), mask=head_ok[:, None])


# After fla-org/flash-linear-attention fla/ops/common/chunk_o.py (commit not pinned;
# chunk_fwd_kernel_o): one chunk of BT tokens of one head; o = q @ h (the chunk's state) plus the
# causal intra-chunk part (q @ k^T, lower-triangular) @ v, both over BK slices of the key dim.
@triton.jit
def chunk_fwd_kernel_o(
    q,
    k,
    v,
    h,
    o,
    scale,
    T,
    H: tl.constexpr,
    K: tl.constexpr,
    V: tl.constexpr,
    BT: tl.constexpr,
    BK: tl.constexpr,
    BV: tl.constexpr,
):
    i_v = tl.program_id(0)
    i_t = tl.program_id(1)
    i_bh = tl.program_id(2)
    NT = tl.cdiv(T, BT)
    q += i_bh * T * K
    k += i_bh * T * K
    v += i_bh * T * V
    o += i_bh * T * V
    h += (i_bh * NT + i_t) * K * V
    rows = i_t * BT + tl.arange(0, BT)
    cols_v = i_v * BV + tl.arange(0, BV)
    b_o = tl.zeros([BT, BV], dtype=tl.float32)
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        ks = i_k * BK + tl.arange(0, BK)
        b_q = tl.load(q + rows[:, None] * K + ks[None, :], mask=rows[:, None] < T, other=0.0)
        b_k = tl.load(k + ks[:, None] + rows[None, :] * K, mask=rows[None, :] < T, other=0.0)
        b_h = tl.load(h + ks[:, None] * V + cols_v[None, :])
        b_o += tl.dot(b_q, b_h)
        b_A += tl.dot(b_q, b_k)
    o_i = tl.arange(0, BT)
    b_A = tl.where(o_i[:, None] >= o_i[None, :], b_A, 0.0)
    b_v = tl.load(v + rows[:, None] * V + cols_v[None, :], mask=rows[:, None] < T, other=0.0)
    b_o = b_o * scale + tl.dot(b_A.to(b_v.dtype), b_v) * scale
    tl.store(o + rows[:, None] * V + cols_v[None, :], b_o.to(b_v.dtype), mask=rows[:, None] < T)


# After vllm-project/vllm vllm/model_executor/layers/quantization/compressed_tensors/
# triton_scaled_mm.py (commit not pinned; scaled_mm_kernel): int8 A [M, K] and B [K, N],
# int32 accumulation, the per-token scale of A and per-channel scale of B applied after the loop.
@triton.jit
def scaled_mm_kernel(
    a_ptr,
    b_ptr,
    scale_a_ptr,
    scale_b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bk,
    stride_cm,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)).to(tl.int64)
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)).to(tl.int64)
    offs_k = tl.arange(0, BLOCK_SIZE_K).to(tl.int64)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :]
    masks_am = offs_am < M
    masks_bn = offs_bn < N
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.int32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        masks_k = offs_k < K - k * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=masks_am[:, None] & masks_k[None, :], other=0)
        b = tl.load(b_ptrs, mask=masks_k[:, None] & masks_bn[None, :], other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        a_ptrs += BLOCK_SIZE_K
        b_ptrs += BLOCK_SIZE_K * stride_bk
    scale_a = tl.load(scale_a_ptr + offs_am, mask=masks_am, other=0.0)
    scale_b = tl.load(scale_b_ptr + offs_bn, mask=masks_bn, other=0.0)
    c = acc.to(tl.float32) * scale_a[:, None] * scale_b[None, :]
    c_ptrs = c_ptr + offs_am[:, None] * stride_cm + offs_bn[None, :]
    tl.store(c_ptrs, c.to(tl.bfloat16), mask=masks_am[:, None] & masks_bn[None, :])


# After vllm-project/vllm vllm/model_executor/layers/quantization/awq_triton.py (commit not
# pinned; awq_gemm_kernel): B packed eight 4-bit weights per int32 in AWQ's order, unpacked in
# registers (tl.interleave, shifts), zeros and scales per group, an fp16 dot per K block.
@triton.jit
def awq_gemm_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    zeros_ptr,
    scales_ptr,
    M,
    N,
    K,
    group_size,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
):
    pid = tl.program_id(0)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    pid_m = pid // num_pid_n
    pid_n = pid % num_pid_n
    reverse = (tl.arange(0, 2) * 4)[None, :] + tl.arange(0, 4)[:, None]
    shifts = tl.reshape(reverse, (8,)) * 4
    shifts = tl.broadcast_to(shifts[None, :], (BLOCK_SIZE_K * (BLOCK_SIZE_N // 8), 8))
    shifts = tl.reshape(shifts, (BLOCK_SIZE_K, BLOCK_SIZE_N))
    offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_bn = pid_n * (BLOCK_SIZE_N // 8) + tl.arange(0, BLOCK_SIZE_N // 8)
    offs_zn = pid_n * (BLOCK_SIZE_N // 8) + tl.arange(0, BLOCK_SIZE_N // 8)
    offs_sn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + K * offs_am[:, None] + offs_k[None, :]
    b_ptrs = b_ptr + (N // 8) * offs_k[:, None] + offs_bn[None, :]
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_am[:, None] < M, other=0.0)
        b = tl.load(b_ptrs)
        b = tl.interleave(b, b)
        b = tl.interleave(b, b)
        b = tl.interleave(b, b)
        g = (k * BLOCK_SIZE_K) // group_size
        z = tl.load(zeros_ptr + g * (N // 8) + offs_zn)
        z = tl.interleave(z, z)
        z = tl.interleave(z, z)
        z = tl.interleave(z, z)
        s = tl.load(scales_ptr + g * N + offs_sn)
        b = (b >> shifts) & 0xF
        z = (z[None, :] >> shifts) & 0xF
        b = (b - z) * s[None, :]
        acc = tl.dot(a, b.to(tl.float16), acc)
        a_ptrs += BLOCK_SIZE_K
        b_ptrs += BLOCK_SIZE_K * (N // 8)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    c_ptrs = c_ptr + N * offs_cm[:, None] + offs_sn[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=offs_cm[:, None] < M)


# After vllm-project/vllm vllm/model_executor/layers/fused_moe/fused_moe.py (commit not
# pinned; fused_moe_kernel with use_fp8_w8a8, per-tensor scales): the expert-indexed B tile, the
# token rows gathered through sorted_token_ids, fp8 A and B, the router weight and both scales
# applied after the K loop.
@triton.jit
def fused_moe_fp8_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    a_scale_ptr,
    b_scale_ptr,
    topk_weights_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    N,
    K,
    num_valid_tokens,
    stride_am,
    stride_be,
    stride_bn,
    stride_cm,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    top_k: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_token_id = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid_tokens
    expert = tl.load(expert_ids_ptr + pid_m).to(tl.int64)
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_token[:, None] // top_k * stride_am + offs_k[None, :])
    b_ptrs = b_ptr + expert * stride_be + (offs_k[:, None] + offs_bn[None, :] * stride_bn)
    a_scale = tl.load(a_scale_ptr)
    b_scale = tl.load(b_scale_ptr + expert)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        kmask = offs_k < K - k * BLOCK_SIZE_K
        a = tl.load(a_ptrs, mask=token_mask[:, None] & kmask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=kmask[:, None], other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_SIZE_K
        b_ptrs += BLOCK_SIZE_K
    w = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0)
    acc = acc * a_scale * b_scale * w[:, None]
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + offs_cn[None, :]
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=token_mask[:, None] & (offs_cn[None, :] < N))
