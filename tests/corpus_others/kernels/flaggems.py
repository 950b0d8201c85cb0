"""Kernels after FlagGems (repository FlagOpen/FlagGems, Apache License 2.0).

Each kernel follows the computation, block shapes and loop structure of the FlagGems kernel
named above it (repository, path, the commit read), re-expressed for this corpus without its
runtime helpers (libentry, autotune configs, torch).

Copyright 2024 The FlagGems authors; licensed under the Apache License, Version 2.0.
"""

import triton
import triton.language as tl


# After FlagOpen/FlagGems src/flag_gems/ops/softmax.py (softmax_kernel_inner, the online
# variant for a row longer than one tile): a loop of tiles keeping a running max and sum, then a
# second loop writing the normalised values.
@triton.jit
def softmax_kernel_inner(output_ptr, input_ptr, M, N, TILE_N: tl.constexpr):
    pid_m = tl.program_id(0)
    m = tl.full([TILE_N], value=float("-inf"), dtype=tl.float32)
    z = tl.full([TILE_N], value=0.0, dtype=tl.float32)
    row = input_ptr + pid_m * N
    for start in range(0, N, TILE_N):
        cols = start + tl.arange(0, TILE_N)
        x = tl.load(row + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        z = z * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    m_reduced = tl.max(m, 0)
    z = tl.sum(z * tl.exp(m - m_reduced), 0)
    m = m_reduced
    out_row = output_ptr + pid_m * N
    for start in range(0, N, TILE_N):
        cols = start + tl.arange(0, TILE_N)
        x = tl.load(row + cols, mask=cols < N, other=-float("inf")).to(tl.float32)
        out = tl.exp(x - m) / z
        tl.store(out_row + cols, out.to(output_ptr.dtype.element_ty), mask=cols < N)


# After FlagOpen/FlagGems src/flag_gems/ops/sum.py (sum_dim_kernel): a [BLOCK_M, BLOCK_N] tile
# per step of a loop over N, accumulated, then summed along N.
@triton.jit
def sum_dim_kernel(inp, out, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
    inp = inp + rows * N
    out = out + rows
    row_mask = rows < M
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for off in range(0, N, BLOCK_N):
        cols = off + tl.arange(0, BLOCK_N)[None, :]
        a = tl.load(inp + cols, mask=row_mask & (cols < N), other=0).to(tl.float32)
        acc += a
    total = tl.sum(acc, axis=1)[:, None]
    tl.store(out, total.to(out.dtype.element_ty), row_mask)


# After FlagOpen/FlagGems src/flag_gems/ops/argmax.py @ 9319ea9323c5 (argmax_kernel along the
# last dim): a loop of tiles, per tile the max and its index (tl.max with return_indices), the
# running best kept per row.
@triton.jit
def argmax_kernel(inp, out_index, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    m_offset = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    max_values = tl.full([BLOCK_M], dtype=tl.float32, value=float("-inf"))
    argmax_values = tl.full([BLOCK_M], dtype=tl.int64, value=0)
    for start_n in range(0, N, BLOCK_N):
        n_offset = start_n + tl.arange(0, BLOCK_N)
        offset = m_offset[:, None] * N * K + n_offset[None, :] * K + pid_k
        mask = (m_offset[:, None] < M) & (n_offset[None, :] < N)
        values = tl.load(inp + offset, mask=mask, other=-float("inf")).to(tl.float32)
        tile_max, tile_arg = tl.max(values, axis=1, return_indices=True)
        better = tile_max > max_values
        max_values = tl.where(better, tile_max, max_values)
        argmax_values = tl.where(better, start_n + tile_arg, argmax_values)
    tl.store(out_index + m_offset * K + pid_k, argmax_values, mask=m_offset < M)


# After FlagOpen/FlagGems src/flag_gems/ops/cumsum.py @ 15c14fc876e9 (scan_part_sum_kernel): a
# block of the input scanned with tl.cumsum, its total stored for the next pass; no loop.
@triton.jit
def scan_part_sum_kernel(inp, out, partial_sum, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(0)
    offset = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offset < n_elements
    x = tl.load(inp + offset, mask=mask, other=0.0).to(tl.float32)
    result = tl.cumsum(x, axis=0)
    part_sum = tl.sum(x, axis=0)
    tl.store(out + offset, result.to(out.dtype.element_ty), mask=mask)
    tl.store(partial_sum + pid, part_sum)


# After FlagOpen/FlagGems src/flag_gems/ops/groupnorm.py @ 1ed75020d55b (group_norm_kernel): one
# (batch, group) per program, the group's [GROUP_SIZE, HxW] tile loaded whole, mean and variance
# over both dims, per-channel weight and bias.
@triton.jit
def group_norm_kernel(
    X,
    Y,
    W,
    B,
    Mean,
    Rstd,
    group_size,
    C,
    HW,
    num_groups,
    eps,
    BLOCK_GROUP_SIZE: tl.constexpr,
    BLOCK_HW_SIZE: tl.constexpr,
):
    pid = tl.program_id(0)
    group = pid % num_groups
    num_elements = group_size * HW
    group_off = tl.arange(0, BLOCK_GROUP_SIZE)
    hw_off = tl.arange(0, BLOCK_HW_SIZE)
    wb_off = group * group_size + group_off
    wb_mask = wb_off < C
    xy_off = pid * num_elements + group_off[:, None] * HW + hw_off[None, :]
    xy_mask = wb_off[:, None] < C and (hw_off < HW)[None, :]
    x = tl.load(X + xy_off, mask=xy_mask, other=0.0).to(tl.float32)
    mean = tl.sum(x) / num_elements
    centred = tl.where(xy_mask, x - mean, 0.0)
    var = tl.sum(centred * centred) / num_elements
    rstd = tl.rsqrt(var + eps)
    w = tl.load(W + wb_off, mask=wb_mask, other=0.0)[:, None]
    b = tl.load(B + wb_off, mask=wb_mask, other=0.0)[:, None]
    y = centred * rstd * w + b
    tl.store(Y + xy_off, y, mask=xy_mask)
    tl.store(Mean + pid, mean)
    tl.store(Rstd + pid, rstd)


# After FlagOpen/FlagGems src/flag_gems/ops/mm.py (mm_kernel, EVEN_K): grouped tile order, a K
# loop of unmasked loads with multiple_of/max_contiguous hints, tl.dot with an fp32 accumulator.
@triton.jit
def mm_kernel(
    A,
    B,
    C,
    M,
    N,
    K,
    stride_am,
    stride_bk,
    stride_cm,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    width = GROUP_M * grid_n
    group_id = pid // width
    group_size = min(grid_m - group_id * GROUP_M, GROUP_M)
    pid_m = group_id * GROUP_M + (pid % group_size)
    pid_n = (pid % width) // group_size
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    A = A + (ram[:, None] * stride_am + rk[None, :])
    B = B + (rk[:, None] * stride_bk + rbn[None, :])
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):  # noqa: B007
        a = tl.load(A)
        b = tl.load(B)
        acc += tl.dot(a, b, out_dtype=tl.float32, allow_tf32=False)
        A += BLOCK_K
        B += BLOCK_K * stride_bk
    C = C + (rm[:, None] * stride_cm + rn[None, :])
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    tl.store(C, acc.to(C.dtype.element_ty), mask=mask)


# After FlagOpen/FlagGems src/flag_gems/ops/bmm.py @ 08715dba7eca (bmm_kernel, GROUP_M 1,
# DIVISIBLE_M/N, K not a multiple of TILE_K): one batch per program_id(0), a K loop whose loads
# are masked by a K mask advanced every iteration.
@triton.jit
def bmm_kernel(
    A, B, O, M, N, K, TILE_M: tl.constexpr, TILE_N: tl.constexpr, TILE_K: tl.constexpr  # noqa: E741
):  # fmt: skip
    pid_b = tl.program_id(0)
    A += pid_b * M * K
    B += pid_b * K * N
    O += pid_b * M * N  # noqa: E741
    pid_m = tl.program_id(1)
    pid_n = tl.program_id(2)
    offs_m = pid_m * TILE_M + tl.arange(0, TILE_M)
    offs_n = pid_n * TILE_N + tl.arange(0, TILE_N)
    offs_k = tl.arange(0, TILE_K)
    a_ptrs = A + offs_m[:, None] * K + offs_k[None, :]
    b_ptrs = B + offs_k[:, None] * N + offs_n[None, :]
    o = tl.zeros((TILE_M, TILE_N), dtype=tl.float32)
    for _ in range(tl.cdiv(K, TILE_K)):
        mask_k = offs_k < K
        offs_k += TILE_K
        a = tl.load(a_ptrs, mask_k[None, :])
        b = tl.load(b_ptrs, mask_k[:, None])
        a_ptrs += TILE_K
        b_ptrs += TILE_K * N
        o += tl.dot(a, b, allow_tf32=False)
    tl.store(O + offs_m[:, None] * N + offs_n[None, :], o.to(O.dtype.element_ty))
