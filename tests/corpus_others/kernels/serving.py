"""Kernels after the serving stacks: vLLM (repository vllm-project/vllm) and AITER (repository
ROCm/aiter), both under the Apache License 2.0 / MIT licence of their projects.

Each kernel follows the computation, block shapes and loop structure of the kernel named above
it (repository, path, the commit read), re-expressed for this corpus without the torch wrappers.

vLLM: Copyright contributors to the vLLM project, Apache License 2.0.
AITER: Copyright (c) Advanced Micro Devices, Inc., MIT licence.
"""

import triton
import triton.language as tl


# After vllm-project/vllm vllm/attention/ops/prefix_prefill.py @ 0ae8f3ee03fe (_fwd_kernel): a
# query block of one sequence attends first to its cached context, read from a paged KV cache
# through the block table (loop 1), then to its own new keys and values with a causal mask
# (loop 2); online softmax, two dots per iteration in each loop.
@triton.jit
def _prefix_fwd_kernel(
    Q,
    K,
    V,
    K_cache,
    V_cache,
    B_Loc,
    sm_scale,
    B_Start_Loc,
    B_Seqlen,
    Out,
    stride_b_loc_b,
    stride_qbs,
    stride_kbs,
    stride_k_cache_bs,
    stride_obs,
    cur_ctx_len,
    BLOCK_SIZE: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    start_m = tl.program_id(1)
    cur_seq_len = tl.load(B_Seqlen + cur_batch)
    start_loc = tl.load(B_Start_Loc + cur_batch)
    query_len = cur_seq_len - cur_ctx_len
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    q = tl.load(
        Q + (start_loc + offs_m[:, None]) * stride_qbs + offs_d[None, :],
        mask=offs_m[:, None] < query_len,
        other=0.0,
    )
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, BLOCK_DMODEL], dtype=tl.float32)
    for start_n in range(0, cur_ctx_len, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        pos = start_n + offs_n
        bn = tl.load(B_Loc + cur_batch * stride_b_loc_b + pos // BLOCK_SIZE, mask=pos < cur_ctx_len)
        slot = bn * BLOCK_SIZE + pos % BLOCK_SIZE
        k = tl.load(K_cache + slot[None, :] * stride_k_cache_bs + offs_d[:, None])
        qk = tl.dot(q, k)
        qk = tl.where(pos[None, :] < cur_ctx_len, qk, float("-inf")) * sm_scale
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(V_cache + slot[:, None] * stride_k_cache_bs + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    block_mask = tl.where(start_m * BLOCK_M < query_len, 1, 0)
    for start_n in range(0, block_mask * (start_m + 1) * BLOCK_M, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        pos = start_n + offs_n
        k = tl.load(
            K + (start_loc + pos[None, :]) * stride_kbs + offs_d[:, None],
            mask=pos[None, :] < query_len,
            other=0.0,
        )
        qk = tl.dot(q, k) * sm_scale
        qk = tl.where(offs_m[:, None] >= pos[None, :], qk, float("-inf"))
        m_ij = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_ij[:, None])
        alpha = tl.exp(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(
            V + (start_loc + pos[:, None]) * stride_kbs + offs_d[None, :],
            mask=pos[:, None] < query_len,
            other=0.0,
        )
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(
        Out + (start_loc + offs_m[:, None]) * stride_obs + offs_d[None, :],
        acc.to(Out.dtype.element_ty),
        mask=offs_m[:, None] < query_len,
    )


# After vllm-project/vllm vllm/attention/ops/triton_decode_attention.py @ 1e8e86046cc3
# (_fwd_grouped_kernel_stage1): one KV split of one sequence for a group of query heads; keys and
# values gathered from the paged cache through the request's page table, qk = q k^T by tl.dot,
# online softmax, partial output and log-sum-exp stored for stage 2.
@triton.jit
def _fwd_grouped_kernel_stage1(
    Q,
    K_Buffer,
    V_Buffer,
    sm_scale,
    Req_to_tokens,
    B_Seqlen,
    Att_Out,
    stride_req_to_tokens_b,
    stride_qbs,
    stride_qh,
    stride_buf_kbs,
    stride_mid_ob,
    stride_mid_oh,
    stride_mid_os,
    kv_group_num: tl.constexpr,
    q_head_num: tl.constexpr,
    BLOCK_DMODEL: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_H: tl.constexpr,
    NUM_KV_SPLITS: tl.constexpr,
    PAGE_SIZE: tl.constexpr,
):
    cur_batch = tl.program_id(0)
    cur_head_id = tl.program_id(1)
    split_kv_id = tl.program_id(2)
    heads_per_block: tl.constexpr = min(BLOCK_H, kv_group_num)
    cur_kv_head = cur_head_id // tl.cdiv(kv_group_num, BLOCK_H)
    cur_head = cur_head_id * heads_per_block + tl.arange(0, BLOCK_H)
    mask_h = (cur_head < (cur_head_id + 1) * heads_per_block) & (cur_head < q_head_num)
    offs_d = tl.arange(0, BLOCK_DMODEL)
    seq_len = tl.load(B_Seqlen + cur_batch)
    q = tl.load(
        Q + cur_batch * stride_qbs + cur_head[:, None] * stride_qh + offs_d[None, :],
        mask=mask_h[:, None],
        other=0.0,
    )
    per_split = tl.cdiv(seq_len, NUM_KV_SPLITS)
    split_start = per_split * split_kv_id
    split_end = tl.minimum(split_start + per_split, seq_len)
    e_max = tl.zeros([BLOCK_H], dtype=tl.float32) - float("inf")
    e_sum = tl.zeros([BLOCK_H], dtype=tl.float32)
    acc = tl.zeros([BLOCK_H, BLOCK_DMODEL], dtype=tl.float32)
    if split_end > split_start:
        for start_n in range(split_start, split_end, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            page = tl.load(
                Req_to_tokens + stride_req_to_tokens_b * cur_batch + offs_n // PAGE_SIZE,
                mask=offs_n < split_end,
                other=0,
            )
            loc = page * PAGE_SIZE + offs_n % PAGE_SIZE
            off_buf = loc[None, :] * stride_buf_kbs + cur_kv_head * BLOCK_DMODEL + offs_d[:, None]
            k = tl.load(K_Buffer + off_buf, mask=offs_n[None, :] < split_end, other=0.0)
            qk = tl.dot(q, k.to(q.dtype)) * sm_scale
            qk = tl.where(mask_h[:, None] & (offs_n[None, :] < split_end), qk, float("-inf"))
            off_v = loc[:, None] * stride_buf_kbs + cur_kv_head * BLOCK_DMODEL + offs_d[None, :]
            v = tl.load(V_Buffer + off_v, mask=offs_n[:, None] < split_end, other=0.0)
            n_e_max = tl.maximum(tl.max(qk, 1), e_max)
            re_scale = tl.exp(e_max - n_e_max)
            p = tl.exp(qk - n_e_max[:, None])
            acc *= re_scale[:, None]
            acc += tl.dot(p.to(v.dtype), v)
            e_sum = e_sum * re_scale + tl.sum(p, 1)
            e_max = n_e_max
        offs_mid = cur_batch * stride_mid_ob + cur_head[:, None] * stride_mid_oh
        offs_mid += split_kv_id * stride_mid_os + offs_d[None, :]
        tl.store(Att_Out + offs_mid, acc / e_sum[:, None], mask=mask_h[:, None])
        offs_lse = cur_batch * stride_mid_ob + cur_head * stride_mid_oh
        offs_lse += split_kv_id * stride_mid_os + BLOCK_DMODEL
        tl.store(Att_Out + offs_lse, e_max + tl.log(e_sum), mask=mask_h)


# After vllm-project/vllm vllm/model_executor/layers/fused_moe/fused_moe.py (fused_moe_kernel,
# fp16, no quantisation): tokens sorted by expert; each program takes a block of sorted token ids,
# gathers their rows of A (token // top_k), multiplies by its expert's B over a K loop, scales by
# the routing weight.
@triton.jit
def fused_moe_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    topk_weights_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    num_tokens_post_padded_ptr,
    N,
    K,
    EM,
    num_valid_tokens,
    stride_am,
    stride_be,
    stride_bn,
    stride_cm,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    top_k: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(EM, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % in_group) % group_size_m)
    pid_n = (pid % in_group) // group_size_m
    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded:
        return
    offs_token_id = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_token = tl.load(sorted_token_ids_ptr + offs_token_id)
    token_mask = offs_token < num_valid_tokens
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_token[:, None] // top_k * stride_am + offs_k[None, :])
    off_expert = tl.load(expert_ids_ptr + pid_m)
    b_ptrs = b_ptr + off_expert * stride_be + (offs_k[:, None] + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(
            a_ptrs,
            mask=token_mask[:, None] & (offs_k[None, :] < K - k * BLOCK_SIZE_K),
            other=0.0,
        )
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        acc += tl.dot(a, b)
        a_ptrs += BLOCK_SIZE_K
        b_ptrs += BLOCK_SIZE_K
    moe_weight = tl.load(topk_weights_ptr + offs_token, mask=token_mask, other=0)
    acc = acc * moe_weight[:, None]
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_token[:, None] + offs_cn[None, :]
    tl.store(
        c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=token_mask[:, None] & (offs_cn[None, :] < N)
    )


# After ROCm/aiter aiter/ops/triton/gemm_a8w8_blockscale.py (_gemm_a8w8_blockscale_kernel):
# fp8 A and B with one scale per row of A and 128-wide K group, and one per 128x128 block of B;
# each K step's dot is scaled and accumulated in fp32.
@triton.jit
def _gemm_a8w8_blockscale_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    a_scale_ptr,
    b_scale_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bn,
    stride_cm,
    stride_ascale_m,
    stride_bscale_n,
    GROUP_K: tl.constexpr,
    GROUP_N: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] + offs_bn[None, :] * stride_bn
    a_scale_ptrs = a_scale_ptr + offs_am * stride_ascale_m
    b_scale_ptrs = b_scale_ptr + (offs_bn // GROUP_N) * stride_bscale_n
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        a_scale = tl.load(a_scale_ptrs + (k * BLOCK_SIZE_K) // GROUP_K)
        b_scale = tl.load(b_scale_ptrs + (k * BLOCK_SIZE_K) // GROUP_K)
        acc += tl.dot(a, b, input_precision="ieee") * a_scale[:, None] * b_scale[None, :]
        a_ptrs += BLOCK_SIZE_K
        b_ptrs += BLOCK_SIZE_K
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.type.element_ty), mask=c_mask)


# After FlagOpen/FlagGems src/flag_gems/ops/permute / the tiled-transpose pattern of many
# libraries (a layout conversion): a [BLOCK_M, BLOCK_N] tile read row-major and written
# transposed; Triton moves it between the two register layouts through LDS.
@triton.jit
def transpose_kernel(
    inp, out, M, N, stride_in, stride_out, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(inp + rows[:, None] * stride_in + cols[None, :], mask=mask)
    tl.store(out + cols[:, None] * stride_out + rows[None, :], tl.trans(x), mask=tl.trans(mask))
