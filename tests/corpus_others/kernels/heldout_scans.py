"""Held-out kernels after public kernels others wrote (issue 27), the scan, atomic and fp32
kinds: vLLM's MoE token sort (a tensor atomic whose old values are used), a Welford variance
(a reduce of three operands), a linear recurrence (an associative scan of two operands), and an
fp32 GEMM (the ieee dot). Each follows the kernel named above it, re-expressed without the torch
wrappers."""

import triton
import triton.language as tl


# After vllm-project/vllm vllm/model_executor/layers/fused_moe/moe_align_block_size.py (commit
# not pinned; count_and_sort_expert_tokens_kernel): each token's expert, its slot taken with
# tl.atomic_add on the expert's running offset (the old value used as the slot).
@triton.jit
def count_and_sort_expert_tokens(
    topk_ids_ptr, sorted_token_ids_ptr, cumsum_ptr, numel, BLOCK: tl.constexpr
):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    expert = tl.load(topk_ids_ptr + offs, mask=mask, other=0)
    slot = tl.atomic_add(cumsum_ptr + expert, 1, mask=mask)
    tl.store(sorted_token_ids_ptr + slot, offs, mask=mask)


@triton.jit
def _welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    weight = weight_1 + weight_2
    w2_over_w = tl.where(weight == 0.0, 0.0, weight_2 / weight)
    delta = mean_2 - mean_1
    return mean_1 + delta * w2_over_w, m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w, weight


# After FlagOpen/FlagGems src/flag_gems/ops/var_mean.py (commit not pinned;
# var_mean_welford_kernel): BLOCK_M rows per program, a loop over the columns accumulating
# Welford's (mean, m2, count) per element, then one tl.reduce of the three along the row.
@triton.jit
def var_mean_welford_kernel(
    X, Var, Mean, M, N, correction, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    X = X + rows * N
    row_mask = rows < M
    acc_mean = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    acc_m2 = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    acc_w = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)[None, :]
        mask = row_mask & (cols < N)
        x = tl.load(X + cols, mask, other=0.0).to(tl.float32)
        count = acc_w + mask.to(tl.float32)
        delta = x - acc_mean
        acc_mean = acc_mean + tl.where(mask, delta / tl.maximum(count, 1.0), 0.0)
        acc_m2 = acc_m2 + tl.where(mask, delta * (x - acc_mean), 0.0)
        acc_w = count
    mean, m2, weight = tl.reduce((acc_mean, acc_m2, acc_w), 1, _welford_combine)
    tl.store(Mean + rows, mean[:, None], row_mask)
    tl.store(Var + rows, (m2 / (weight - correction))[:, None], row_mask)


@triton.jit
def _first_order(gl, xl, gr, xr):
    return gr * gl, gr * xl + xr


# After proger/accelerated-scan accelerated_scan/triton.py (commit not pinned; forward_scan):
# x_t = g_t * x_{t-1} + u_t over a sequence of SEQUENCE_LENGTH per (batch, channel) row, as one
# tl.associative_scan of the (gate, token) pair.
@triton.jit
def forward_scan(gates, tokens, outputs, SEQUENCE_LENGTH: tl.constexpr):
    row = tl.program_id(0) * SEQUENCE_LENGTH
    offs = row + tl.arange(0, SEQUENCE_LENGTH)
    g = tl.load(gates + offs).to(tl.float32)
    u = tl.load(tokens + offs).to(tl.float32)
    _, x = tl.associative_scan((g, u), axis=0, combine_fn=_first_order)
    tl.store(outputs + offs, x.to(outputs.dtype.element_ty))


# After FlagOpen/FlagGems src/flag_gems/ops/mm.py (commit not pinned; mm_kernel) with fp32
# inputs and input_precision="ieee" (torch.mm of float32, allow_tf32 off): the A and B tiles of
# 32-bit elements through LDS to the fp32 MFMA / FMA path.
@triton.jit
def mm_fp32_kernel(
    A, B, C, M, N, K, stride_am, stride_bk, stride_cm,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = A + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = B + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=rk[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=rk[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = C + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
