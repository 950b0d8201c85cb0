"""Held-out kernels after public kernels others wrote (issue 27): kinds the rest of the corpus
lacks or has few of (rotary embedding, layer-norm backward, an online softmax, a cross-entropy
with a loop over the classes, top-k, a linear layer ``x @ W^T``, a split-K GEMM). Each follows
the computation, block shapes and loop structure of the kernel named above it (repository, path,
the commit read), re-expressed for this corpus without the torch wrappers (the CPU compile has no
torch); the attention, quantized-GEMM and linear-attention kernels are in
``heldout_attention.py``."""

import triton
import triton.language as tl


# After linkedin/Liger-Kernel src/liger_kernel/ops/rope.py (commit not pinned) (_triton_rope): one
# program per (batch, token); the q and k heads of that token as [heads, head_dim // 2] halves,
# rotated by the token's cos/sin row (forward direction).
@triton.jit
def rope_kernel(
    q_ptr,
    q_row_stride,
    k_ptr,
    k_row_stride,
    cos,
    cos_row_stride,
    sin,
    sin_row_stride,
    sl,
    n_qh: tl.constexpr,
    n_kh: tl.constexpr,
    hd: tl.constexpr,
    pad_n_qh: tl.constexpr,
    pad_n_kh: tl.constexpr,
    pad_hd: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    q_ptr = q_ptr + pid * q_row_stride
    k_ptr = k_ptr + pid * k_row_stride
    row = pid % sl
    cos = cos + row * cos_row_stride
    sin = sin + row * sin_row_stride
    half = tl.arange(0, pad_hd // 2)
    cos_row = tl.load(cos + half, mask=half < hd // 2, other=0)
    sin_row = tl.load(sin + half, mask=half < hd // 2, other=0)
    q_offs = tl.arange(0, pad_n_qh)[:, None] * hd + half[None, :]
    k_offs = tl.arange(0, pad_n_kh)[:, None] * hd + half[None, :]
    q_mask = (tl.arange(0, pad_n_qh)[:, None] < n_qh) & (half[None, :] < hd // 2)
    k_mask = (tl.arange(0, pad_n_kh)[:, None] < n_kh) & (half[None, :] < hd // 2)
    q1 = tl.load(q_ptr + q_offs, mask=q_mask, other=0).to(sin_row.dtype)
    k1 = tl.load(k_ptr + k_offs, mask=k_mask, other=0).to(sin_row.dtype)
    q2 = tl.load(q_ptr + q_offs + hd // 2, mask=q_mask, other=0).to(sin_row.dtype)
    k2 = tl.load(k_ptr + k_offs + hd // 2, mask=k_mask, other=0).to(sin_row.dtype)
    tl.store(q_ptr + q_offs, q1 * cos_row - q2 * sin_row, mask=q_mask)
    tl.store(q_ptr + q_offs + hd // 2, q2 * cos_row + q1 * sin_row, mask=q_mask)
    tl.store(k_ptr + k_offs, k1 * cos_row - k2 * sin_row, mask=k_mask)
    tl.store(k_ptr + k_offs + hd // 2, k2 * cos_row + k1 * sin_row, mask=k_mask)


# After triton-lang/triton python/tutorials/05-layer-norm.py @ 545699290b85
# (_layer_norm_bwd_dx_fused): dx of one row, and its partial dw/db accumulated into one of
# GROUP_SIZE_M buffers under a spin lock (atomic_cas / atomic_xchg).
@triton.jit
def layer_norm_bwd_dx_fused(
    DX,
    DY,
    DW,
    DB,
    X,
    W,
    Mean,
    Rstd,
    Lock,
    stride,
    N,
    GROUP_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE_N)
    mask = cols < N
    X += row * stride
    DY += row * stride
    DX += row * stride
    lock_id = row % GROUP_SIZE_M
    Lock += lock_id
    Count = Lock + GROUP_SIZE_M
    DW = DW + lock_id * N + cols
    DB = DB + lock_id * N + cols
    x = tl.load(X + cols, mask=mask, other=0).to(tl.float32)
    dy = tl.load(DY + cols, mask=mask, other=0).to(tl.float32)
    w = tl.load(W + cols, mask=mask).to(tl.float32)
    mean = tl.load(Mean + row)
    rstd = tl.load(Rstd + row)
    xhat = tl.where(mask, (x - mean) * rstd, 0.0)
    wdy = tl.where(mask, w * dy, 0.0)
    c1 = tl.sum(xhat * wdy, axis=0) / N
    c2 = tl.sum(wdy, axis=0) / N
    dx = (wdy - (xhat * c1 + c2)) * rstd
    tl.store(DX + cols, dx, mask=mask)
    partial_dw = (dy * xhat).to(w.dtype)
    partial_db = dy.to(w.dtype)
    while tl.atomic_cas(Lock, 0, 1) == 1:
        pass
    count = tl.load(Count)
    if count == 0:
        tl.atomic_xchg(Count, 1)
    else:
        partial_dw += tl.load(DW, mask=mask)
        partial_db += tl.load(DB, mask=mask)
    tl.store(DW, partial_dw, mask=mask)
    tl.store(DB, partial_db, mask=mask)
    tl.debug_barrier()
    tl.atomic_xchg(Lock, 0)


# After linkedin/Liger-Kernel src/liger_kernel/ops/softmax.py (commit not pinned)
# (_softmax_multi_block_forward_kernel): a row wider than one block, in two passes over its
# blocks: the online max and sum, then the normalised outputs.
@triton.jit
def softmax_multi_block_forward(
    Y_ptr, Y_row_stride, X_ptr, X_row_stride, n_cols, BLOCK_SIZE: tl.constexpr
):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_SIZE)
    m = tl.full([], -float("inf"), dtype=tl.float32)
    d = tl.full([], 0.0, dtype=tl.float32)
    for start in tl.range(0, n_cols, BLOCK_SIZE):
        idx = start + offs
        x = tl.load(X_ptr + row * X_row_stride + idx, mask=idx < n_cols, other=-float("inf"))
        blk_max = tl.max(x, axis=0)
        new_m = tl.maximum(m, blk_max)
        d = d * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
        m = new_m
    for start in tl.range(0, n_cols, BLOCK_SIZE):
        idx = start + offs
        x = tl.load(X_ptr + row * X_row_stride + idx, mask=idx < n_cols, other=-float("inf"))
        y = tl.exp(x - m) / d
        tl.store(Y_ptr + row * Y_row_stride + idx, y, mask=idx < n_cols)


# After FlagOpen/FlagGems src/flag_gems/ops/cross_entropy_loss.py (commit not pinned)
# (celoss_indices_kernel): [N, C, D] logits, one program per (BLOCK_D columns of d, n); a loop
# over the classes in BLOCK_C tiles with an online max / sum of exponentials, then the loss of
# the target class (ignore_index masked).
@triton.jit
def celoss_indices_kernel(
    inp_ptr,
    tgt_ptr,
    out_ptr,
    ignore_index,
    C,
    D,
    BLOCK_C: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid_d = tl.program_id(0)
    pid_n = tl.program_id(1)
    offset_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    tgt = tl.load(tgt_ptr + pid_n * D + offset_d, mask=offset_d < D, other=0)
    ignore = tgt == ignore_index
    tmp_max = tl.zeros([BLOCK_C, BLOCK_D], dtype=tl.float32)
    tmp_sum = tl.zeros([BLOCK_C, BLOCK_D], dtype=tl.float32)
    for off in range(0, C, BLOCK_C):
        offset_c = off + tl.arange(0, BLOCK_C)
        ptrs = inp_ptr + pid_n * C * D + offset_c[:, None] * D + offset_d[None, :]
        mask = (offset_c[:, None] < C) & (offset_d[None, :] < D)
        x = tl.load(ptrs, mask, other=-float("inf")).to(tl.float32)
        cur_max = tl.maximum(tmp_max, x)
        cur_exp = tl.exp(x - cur_max)
        tmp_sum = tmp_sum * tl.exp(tmp_max - cur_max) + cur_exp
        tmp_max = cur_max
    final_max = tl.max(tmp_max, axis=0)
    tmp_sum = tmp_sum * tl.exp(tmp_max - final_max[None, :])
    final_sum = tl.log(tl.sum(tmp_sum, axis=0))
    inp_tgt = tl.load(inp_ptr + pid_n * C * D + tgt * D + offset_d, mask=offset_d < D).to(
        tl.float32
    )
    loss = tl.where(ignore, 0.0, final_sum + final_max - inp_tgt)
    tl.store(out_ptr + pid_n * D + offset_d, loss, mask=offset_d < D)


# After FlagOpen/FlagGems src/flag_gems/ops/topk.py (commit not pinned) (topk_stage1_kernel): each
# program takes one CHUNK of a row and keeps its K largest values and their indices (the
# library's bitonic sort, here Triton's tl.topk / tl.sort of the chunk).
@triton.jit
def topk_stage1_kernel(y_ptr, index_ptr, x_ptr, N, CHUNK_SIZE: tl.constexpr, K: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    offs = chunk * CHUNK_SIZE + tl.arange(0, CHUNK_SIZE)
    x = tl.load(x_ptr + row * N + offs, mask=offs < N, other=-float("inf"))
    top = tl.sort(x, descending=True)
    keep = tl.arange(0, CHUNK_SIZE) < K
    out = row * tl.num_programs(1) * K + chunk * K + tl.arange(0, CHUNK_SIZE)
    tl.store(y_ptr + out, top, mask=keep)
    first = tl.max(top, axis=0)
    where = tl.min(tl.where(x == first, offs, N), axis=0)
    tl.store(index_ptr + row * tl.num_programs(1) + chunk, where)


# After pytorch-labs/applied-ai kernels/triton/inference/fp8/splitk_gemm_fp8.py (commit not pinned)
# (gemm_split_k_kernel): a GEMM whose K range is split over SPLIT_K programs, each adding its
# partial tile into an fp32 C with tl.atomic_add.
@triton.jit
def gemm_split_k_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    m,
    n,
    k,
    block_m: tl.constexpr,
    block_n: tl.constexpr,
    block_k: tl.constexpr,
    split_k: tl.constexpr,
    group_m: tl.constexpr,
):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    grid_m = tl.cdiv(m, block_m)
    grid_n = tl.cdiv(n, block_n)
    width = group_m * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * group_m, group_m)
    pid_m = group_id * group_m + (pid % group_size)
    pid_n = (pid % width) // group_size
    offs_m = pid_m * block_m + tl.arange(0, block_m)
    offs_n = pid_n * block_n + tl.arange(0, block_n)
    offs_k = pid_k * block_k + tl.arange(0, block_k)
    offs_am = tl.max_contiguous(tl.multiple_of(offs_m, block_m), block_m)
    offs_bn = tl.max_contiguous(tl.multiple_of(offs_n, block_n), block_n)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((block_m, block_n), dtype=tl.float32)
    for _ in range(0, tl.cdiv(k, block_k * split_k)):
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
        acc = tl.dot(a, b, acc)
        a_ptrs += block_k * split_k * stride_ak
        b_ptrs += block_k * split_k * stride_bk
    offs_m = pid_m * block_m + tl.arange(0, block_m)
    offs_n = pid_n * block_n + tl.arange(0, block_n)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.atomic_add(c_ptrs, acc, mask=(offs_m[:, None] < m) & (offs_n[None, :] < n))


# After FlagOpen/FlagGems src/flag_gems/ops/addmm.py (commit not pinned) with the weight read as
# [N, K] (a linear layer y = x @ W^T + bias, the B tile loaded row-major and tl.trans'd) and a
# tanh-GELU epilogue, as the fused linear+activation kernels of FlagGems / Unsloth do.
@triton.jit
def linear_gelu_kernel(
    x_ptr,
    w_ptr,
    bias_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_wn,
    stride_ym,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :]
    w_ptrs = w_ptr + offs_n[:, None] * stride_wn + offs_k[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        rem = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=offs_k[None, :] < rem, other=0.0)
        w = tl.load(w_ptrs, mask=offs_k[None, :] < rem, other=0.0)
        acc = tl.dot(x, tl.trans(w), acc)
        x_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    acc += bias[None, :]
    inner = 0.7978845608 * (acc + 0.044715 * acc * acc * acc)
    y = 0.5 * acc * (1.0 + (2.0 * tl.sigmoid(2.0 * inner) - 1.0))
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :]
    tl.store(y_ptrs, y.to(tl.bfloat16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
