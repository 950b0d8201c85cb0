"""Plain Triton kernels whose LDS traffic is Triton's own scratch: reductions, column sums,
transposes, softmax (convert_layout and tt.reduce through LDS)."""

import triton
import triton.language as tl

from . import Case, signature


@triton.jit
def row_sum(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + rows, tl.sum(x, axis=1))


@triton.jit
def col_sum(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + cols, tl.sum(x, axis=0))


@triton.jit
def transpose(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + cols[:, None] * M + rows[None, :], tl.trans(x))


@triton.jit
def softmax(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr):
    rows = tl.arange(0, M)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :]).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], y.to(out_ptr.dtype.element_ty))


def _case(name, fn, dtype, m, n, warps=4, covers=(), note="", out=None):
    ce = dict(M=m, N=n)
    sig = signature(f"x_ptr:*{dtype} out_ptr:*{out or dtype}", ce)
    return Case(name, fn, sig, ce, warps, covers, note)


CASES = [
    _case("row_sum_fp32", row_sum, "fp32", 128, 128, covers=("reduction", "fp32")),
    _case(
        "col_sum_fp32",
        col_sum,
        "fp32",
        128,
        64,
        covers=("reduction", "fp32"),
        note="a column sum: the partial sums of the warps meet in LDS",
    ),
    _case("col_sum_fp32_w8", col_sum, "fp32", 256, 128, warps=8, covers=("reduction", "fp32")),
    _case("transpose_fp16", transpose, "fp16", 64, 64, covers=("transpose",)),
    _case("transpose_fp32_w8", transpose, "fp32", 128, 64, warps=8, covers=("transpose", "fp32")),
    _case("softmax_fp16", softmax, "fp16", 64, 256, covers=("reduction",)),
]
