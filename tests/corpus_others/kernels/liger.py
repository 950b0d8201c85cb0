"""Kernels after Liger-Kernel (repository linkedin/Liger-Kernel, BSD 2-Clause licence).

Each kernel follows the computation, block shapes and loop structure of the Liger kernel named
above it (repository, path, the commit read), re-expressed for this corpus without the torch
wrappers (the CPU compile has no torch).

Copyright 2024 LinkedIn Corporation (the project's notice, BSD 2-Clause).
"""

import triton
import triton.language as tl


# After linkedin/Liger-Kernel src/liger_kernel/ops/rms_norm.py @ 6a770f5f0a7a
# (_rms_norm_forward_kernel, the llama casting mode): one row per program, no loop; the mean of
# squares in fp32, rstd cached, the weight applied in the input's dtype.
@triton.jit
def _rms_norm_forward_kernel(
    Y_ptr,
    Y_row_stride,
    X_ptr,
    X_row_stride,
    W_ptr,
    RSTD_ptr,
    n_cols,
    eps,
    offset,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    inside = cols < n_cols
    x = tl.load(X_ptr + row * X_row_stride + cols, mask=inside, other=0)
    x_dtype = x.dtype
    w = tl.load(W_ptr + cols, mask=inside, other=0)
    x = x.to(tl.float32)
    mean_square = tl.sum(x * x, axis=0) / n_cols
    rstd = tl.math.rsqrt(mean_square + eps)
    tl.store(RSTD_ptr + row, rstd)
    x = (x * rstd).to(x_dtype)
    y = x * (offset + w)
    tl.store(Y_ptr + row * Y_row_stride + cols, y, mask=inside)


# After linkedin/Liger-Kernel src/liger_kernel/ops/rms_norm.py @ 6a770f5f0a7a
# (_rms_norm_backward_kernel): each program walks a range of rows; per row a dot of dY*W with X
# (a reduction inside the loop), dX stored, dW accumulated across the rows.
@triton.jit
def _rms_norm_backward_kernel(
    dY_ptr,
    dY_row_stride,
    dX_ptr,
    dX_row_stride,
    X_ptr,
    X_row_stride,
    W_ptr,
    RSTD_ptr,
    dW_ptr,
    dW_row_stride,
    n_rows,
    n_cols,
    offset,
    rows_per_program,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    first = pid * rows_per_program
    last = min((pid + 1) * rows_per_program, n_rows)
    cols = tl.arange(0, BLOCK_SIZE)
    inside = cols < n_cols
    dw = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    w = tl.load(W_ptr + cols, mask=inside, other=0.0) + offset
    for row in range(first, last):
        dy = tl.load(dY_ptr + row * dY_row_stride + cols, mask=inside, other=0.0)
        x = tl.load(X_ptr + row * X_row_stride + cols, mask=inside, other=0.0).to(tl.float32)
        rstd = tl.load(RSTD_ptr + row)
        m = (dy * w).to(tl.float32)
        dx = rstd * m - (rstd / n_cols) * rstd * rstd * tl.sum(m * x, axis=0) * x
        dw += dy * (x * rstd)
        tl.store(dX_ptr + row * dX_row_stride + cols, dx.to(dy.dtype), mask=inside)
    tl.store(dW_ptr + pid * dW_row_stride + cols, dw, mask=inside)


# After linkedin/Liger-Kernel src/liger_kernel/ops/layer_norm.py @ 71b1cdaf1aa6
# (_layer_norm_forward_kernel): one row per program, mean and variance by two sums, no loop.
@triton.jit
def _layer_norm_forward_kernel(
    Y_ptr,
    Y_row_stride,
    X_ptr,
    X_row_stride,
    W_ptr,
    B_ptr,
    Mean_ptr,
    RSTD_ptr,
    n_cols,
    eps,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_SIZE)
    inside = cols < n_cols
    x = tl.load(X_ptr + row * X_row_stride + cols, mask=inside, other=0.0).to(tl.float32)
    w = tl.load(W_ptr + cols, mask=inside, other=0.0)
    b = tl.load(B_ptr + cols, mask=inside, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    centred = tl.where(inside, x - mean, 0.0)
    var = tl.sum(centred * centred, axis=0) / n_cols
    rstd = tl.math.rsqrt(var + eps)
    tl.store(Mean_ptr + row, mean)
    tl.store(RSTD_ptr + row, rstd)
    y = centred * rstd * w + b
    tl.store(Y_ptr + row * Y_row_stride + cols, y.to(Y_ptr.dtype.element_ty), mask=inside)


# After linkedin/Liger-Kernel src/liger_kernel/ops/cross_entropy.py @ 7cf0f3d84781
# (liger_cross_entropy_kernel, no label smoothing, mean reduction): one row of logits per program;
# a first loop over the vocabulary for the online max and sum of exponentials, a second loop that
# overwrites the logits with their gradient, then the loss.
@triton.jit
def liger_cross_entropy_kernel(
    X_ptr,
    X_stride,
    Y_ptr,
    Y_stride,
    loss_ptr,
    loss_stride,
    n_cols,
    n_non_ignore,
    ignore_index,
    BLOCK_SIZE: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    Y_ptr += row * Y_stride
    y = tl.load(Y_ptr)
    X_ptr += row * X_stride
    if y == ignore_index:
        for off in range(0, n_cols, BLOCK_SIZE):
            cols = off + tl.arange(0, BLOCK_SIZE)
            tl.store(X_ptr + cols, 0.0, mask=cols < n_cols)
        return
    loss_ptr += row * loss_stride
    m = float("-inf")
    d = 0.0
    ori_x_y = tl.load(X_ptr + y).cast(tl.float32)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X_ptr + cols, mask=cols < n_cols, other=float("-inf")).cast(tl.float32)
        block_max = tl.max(x)
        m_new = tl.maximum(m, block_max)
        d = d * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new))
        m = m_new
    lse = m + tl.log(d)
    for off in range(0, n_cols, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X_ptr + cols, mask=cols < n_cols, other=float("-inf")).cast(tl.float32)
        grad = tl.exp(x - m) / d
        grad = tl.where(cols == y, grad - 1.0, grad) / n_non_ignore
        tl.store(X_ptr + cols, grad.to(X_ptr.dtype.element_ty), mask=cols < n_cols)
    loss = (lse - ori_x_y) / n_non_ignore
    tl.store(loss_ptr, loss)
