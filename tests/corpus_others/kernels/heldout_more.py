"""Held-out kernels after public kernels others wrote (issue 27), a third set: AITER's causal
flash-attention forward at head dim 128, FLA's chunk-local cumsum (a scan along the rows of a
2-D tile), the SwiGLU of triton_kernels (interleaved gate/linear halves split with
tl.reshape / tl.split), Mamba-2's chunk state (a dot of transposed, decay-scaled tiles) and a
paged decode over an fp8 KV cache. Each follows the kernel named above it, re-expressed without
the torch wrappers."""

import triton
import triton.language as tl


# After ROCm/aiter aiter/ops/triton/_triton_kernels/mha.py (commit not pinned; _attn_fwd with
# IS_CAUSAL, the inner loop in two parts: the full blocks, then the masked diagonal ones), its
# MI300 config BLOCK_M 128 / BLOCK_N 64 at head dim 128.
@triton.jit
def mha_fwd_causal(
    Q, K, V, Out, sm_scale, stride_qm, stride_kn, stride_om, N_CTX,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD: tl.constexpr,
):  # fmt: skip
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1).to(tl.int64) * N_CTX
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD)
    q = tl.load(Q + (off_hz + offs_m[:, None]) * stride_qm + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.full([BLOCK_M], 1.0, dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504089
    n_full = start_m * BLOCK_M // BLOCK_N
    n_all = (start_m + 1) * BLOCK_M // BLOCK_N
    for j in range(0, n_all):
        start_n = j * BLOCK_N
        kT = tl.load(K + (off_hz + start_n + offs_n[None, :]) * stride_kn + offs_d[:, None])
        qk = tl.dot(q, kT)
        if j >= n_full:
            qk = tl.where(offs_m[:, None] >= start_n + offs_n[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + (off_hz + start_n + offs_n[:, None]) * stride_kn + offs_d[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_ij
    out = Out + (off_hz + offs_m[:, None]) * stride_om + offs_d[None, :]
    tl.store(out, (acc / l_i[:, None]).to(Out.dtype.element_ty))


# After fla-org/flash-linear-attention fla/ops/utils/cumsum.py (commit not pinned;
# chunk_local_cumsum_vector_kernel): one chunk of BT tokens x BS channels of one head, the
# inclusive cumsum along the tokens (axis 0).
@triton.jit
def chunk_local_cumsum_vector(s, o, T, S: tl.constexpr, BT: tl.constexpr, BS: tl.constexpr):
    i_s = tl.program_id(0)
    i_t = tl.program_id(1)
    i_bh = tl.program_id(2)
    rows = i_t * BT + tl.arange(0, BT)
    cols = i_s * BS + tl.arange(0, BS)
    base = i_bh * T * S
    mask = (rows[:, None] < T) & (cols[None, :] < S)
    b_s = tl.load(s + base + rows[:, None] * S + cols[None, :], mask=mask, other=0).to(tl.float32)
    b_o = tl.cumsum(b_s, axis=0)
    tl.store(o + base + rows[:, None] * S + cols[None, :], b_o.to(o.dtype.element_ty), mask=mask)


# After triton-lang/triton python/triton_kernels/triton_kernels/swiglu_details/_swiglu.py
# (commit not pinned; _swiglu): gate and linear interleaved along the columns, split with
# tl.reshape + tl.split, the gate clamped, out = silu(alpha * gate) * (linear + 1).
@triton.jit
def swiglu_kernel(
    Out, A, stride_am, stride_om, M, N, alpha, limit, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, 2 * BLOCK_N)
    a = tl.load(
        A + rows[:, None] * stride_am + cols[None, :],
        mask=(rows[:, None] < M) & (cols[None, :] < 2 * N),
        other=0.0,
    ).to(tl.float32)
    gate, lin = tl.split(tl.reshape(a, (BLOCK_M, BLOCK_N, 2)))
    gate = tl.minimum(gate, limit)
    lin = tl.clamp(lin, -limit, limit)
    out = gate / (1 + tl.exp(-alpha * gate)) * (lin + 1)
    ocols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    tl.store(
        Out + rows[:, None] * stride_om + ocols[None, :],
        out.to(Out.dtype.element_ty),
        mask=(rows[:, None] < M) & (ocols[None, :] < N),
    )


# After state-spaces/mamba mamba_ssm/ops/triton/ssd_chunk_state.py (commit not pinned;
# _chunk_state_fwd_kernel): states[h, p, n] = sum over the chunk's positions l of
# x[l, p] * exp(dA_last - dA[l]) * dt[l] * B[l, n], a K loop over the chunk in BLOCK_K steps
# with x read transposed.
@triton.jit
def chunk_state_fwd(
    x_ptr, b_ptr, states_ptr, dt_ptr, dA_ptr, chunk_size, hdim, dstate,
    stride_x_l, stride_b_l, stride_st_p,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    chunk = tl.program_id(2)
    x_ptr += chunk * chunk_size * stride_x_l
    b_ptr += chunk * chunk_size * stride_b_l
    dt_ptr += chunk * chunk_size
    dA_ptr += chunk * chunk_size
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] + offs_k[None, :] * stride_x_l
    b_ptrs = b_ptr + offs_n[None, :] + offs_k[:, None] * stride_b_l
    dA_last = tl.load(dA_ptr + chunk_size - 1).to(tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, chunk_size, BLOCK_K):
        kmask = offs_k < chunk_size - k
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < hdim) & kmask[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=kmask[:, None] & (offs_n[None, :] < dstate), other=0.0)
        dA_k = tl.load(dA_ptr + k + offs_k, mask=kmask, other=0.0).to(tl.float32)
        dt_k = tl.load(dt_ptr + k + offs_k, mask=kmask, other=0.0).to(tl.float32)
        scale = tl.exp(dA_last - dA_k) * dt_k
        b = (b * scale[:, None]).to(x_ptr.dtype.element_ty)
        acc += tl.dot(x, b)
        x_ptrs += BLOCK_K * stride_x_l
        b_ptrs += BLOCK_K * stride_b_l
    st = states_ptr + chunk * hdim * stride_st_p + offs_m[:, None] * stride_st_p + offs_n[None, :]
    tl.store(st, acc, mask=(offs_m[:, None] < hdim) & (offs_n[None, :] < dstate))


# After vllm-project/vllm vllm/attention/ops/chunked_prefill_paged_decode.py (commit not pinned;
# kernel_paged_attention_2d with an fp8 KV cache): the cache pages are fp8, scaled to the
# query's bf16 before each dot; one program per (sequence, kv head), its query heads as rows.
@triton.jit
def paged_decode_fp8kv(
    out_ptr, q_ptr, k_cache, v_cache, block_tables, seq_lens, scale, k_scale, v_scale,
    stride_q_tok, stride_bt, stride_k_blk, stride_o_tok,
    QUERIES_PER_KV: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_SIZE: tl.constexpr,
    HEAD_SIZE: tl.constexpr,
):  # fmt: skip
    seq = tl.program_id(0)
    kv_head = tl.program_id(1)
    offs_m = tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_SIZE)
    offs_t = tl.arange(0, BLOCK_SIZE)
    heads = kv_head * QUERIES_PER_KV + offs_m
    ok = offs_m < QUERIES_PER_KV
    q = tl.load(
        q_ptr + seq * stride_q_tok + heads[:, None] * HEAD_SIZE + offs_d[None, :],
        mask=ok[:, None],
        other=0.0,
    )
    n = tl.load(seq_lens + seq)
    M = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    L = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_SIZE], dtype=tl.float32)
    for j in range(0, tl.cdiv(n, BLOCK_SIZE)):
        page = tl.load(block_tables + seq * stride_bt + j).to(tl.int64)
        base = page * stride_k_blk + kv_head * BLOCK_SIZE * HEAD_SIZE
        k8 = tl.load(k_cache + base + offs_d[:, None] + offs_t[None, :] * HEAD_SIZE)
        v8 = tl.load(v_cache + base + offs_t[:, None] * HEAD_SIZE + offs_d[None, :])
        K = (k8.to(tl.float32) * k_scale).to(q.dtype)
        V = (v8.to(tl.float32) * v_scale).to(q.dtype)
        S = scale * tl.dot(q, K)
        S = tl.where((j * BLOCK_SIZE + offs_t)[None, :] < n, S, float("-inf"))
        m_j = tl.maximum(M, tl.max(S, axis=1))
        P = tl.exp(S - m_j[:, None])
        alpha = tl.exp(M - m_j)
        acc = acc * alpha[:, None] + tl.dot(P.to(V.dtype), V)
        L = L * alpha + tl.sum(P, axis=1)
        M = m_j
    o = out_ptr + seq * stride_o_tok + heads[:, None] * HEAD_SIZE + offs_d[None, :]
    tl.store(o, (acc / L[:, None]).to(out_ptr.dtype.element_ty), mask=ok[:, None])
