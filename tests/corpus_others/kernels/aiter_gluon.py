"""Gluon kernels for gfx1250 after AITER (repository ROCm/aiter, MIT licence).

Each kernel follows the structure, layouts and pipelining of the AITER kernel named above it
(repository, path, the commit read), re-expressed for this corpus without AITER's wrappers
(kernel repr, activation and bias options).

Copyright (C) 2026, Advanced Micro Devices, Inc. (the project's notice, MIT).
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd import gfx1250
from triton.experimental.gluon.language.amd.cdna4 import async_copy as cdna4_copy
from triton.experimental.gluon.language.amd.gfx1250 import tdm

BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
#: the kernel's layouts for LAYOUT "TN": A [M, K] row-major padded by 8 every BLOCK_K, B stored
#: [N, K] padded by 8 every BLOCK_K and read through a permuted view
SHARED_A = gl.PaddedSharedLayout.with_identity_for([[BLOCK_K, 8]], [BLOCK_M, BLOCK_K], [1, 0])
SHARED_B = gl.PaddedSharedLayout.with_identity_for([[BLOCK_K, 8]], [BLOCK_N, BLOCK_K], [1, 0])
WMMA = gl.amd.AMDWMMALayout(3, True, [[0, 1], [1, 0]], [], [16, 16, 32])
OPERAND_A = gl.DotOperandLayout(0, WMMA, 8)
OPERAND_B = gl.DotOperandLayout(1, WMMA, 8)


@gluon.jit
def _load_operands(a_buffer, b_buffer, idx, NUM_BUFFERS: gl.constexpr, OPA: gl.constexpr,
                   OPB: gl.constexpr):  # fmt: skip
    a = cdna4_copy.load_shared_relaxed(a_buffer.index(idx % NUM_BUFFERS), OPA)
    b = cdna4_copy.load_shared_relaxed(b_buffer.index(idx % NUM_BUFFERS).permute([1, 0]), OPB)
    return a, b


# After ROCm/aiter aiter/ops/triton/_gluon_kernels/gfx1250/gemm/basic/gemm_a16w16.py
# @ 0895ae5a3f5a (_gemm_a16w16_bandwidth_bound_kernel, LAYOUT "TN"): TDM loads into NUM_BUFFERS
# padded stages (prologue, main loop, a peeled last tile, epilogue), relaxed LDS reads of a
# computed stage, B read through a permuted view, WMMA v3.
@gluon.jit
def gemm_a16w16_bandwidth_bound(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_bn,
    stride_cm,
    BLOCK_M: gl.constexpr,
    BLOCK_N: gl.constexpr,
    BLOCK_K: gl.constexpr,
    NUM_BUFFERS: gl.constexpr,
    SHARED_A: gl.constexpr,
    SHARED_B: gl.constexpr,
    WMMA: gl.constexpr,
    OPA: gl.constexpr,
    OPB: gl.constexpr,
):
    pid = gl.program_id(axis=0)
    num_pid_m = gl.cdiv(M, BLOCK_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    a_base = a_ptr + pid_m * BLOCK_M * stride_am
    b_base = b_ptr + pid_n * BLOCK_N * stride_bn
    a_desc = tdm.make_tensor_descriptor(
        a_base, (M - pid_m * BLOCK_M, K), (stride_am, 1), (BLOCK_M, BLOCK_K), SHARED_A
    )
    b_desc = tdm.make_tensor_descriptor(
        b_base, (N - pid_n * BLOCK_N, K), (stride_bn, 1), (BLOCK_N, BLOCK_K), SHARED_B
    )
    a_buffer = gl.allocate_shared_memory(
        a_ptr.type.element_ty, [NUM_BUFFERS, BLOCK_M, BLOCK_K], SHARED_A
    )
    b_buffer = gl.allocate_shared_memory(
        b_ptr.type.element_ty, [NUM_BUFFERS, BLOCK_N, BLOCK_K], SHARED_B
    )
    load_idx = 0
    compute_idx = 0
    acc = gl.zeros((BLOCK_M, BLOCK_N), dtype=gl.float32, layout=WMMA)
    for _ in gl.static_range(NUM_BUFFERS - 1):
        tdm.async_load(a_desc, [0, 0], a_buffer.index(load_idx % NUM_BUFFERS))
        tdm.async_load(b_desc, [0, 0], b_buffer.index(load_idx % NUM_BUFFERS))
        a_desc = tdm.update_tensor_descriptor(a_desc, add_offsets=[0, BLOCK_K])
        b_desc = tdm.update_tensor_descriptor(b_desc, add_offsets=[0, BLOCK_K])
        load_idx += 1
    num_k_tiles = gl.cdiv(K, BLOCK_K)
    for _ in range(num_k_tiles - (NUM_BUFFERS - 1)):
        tdm.async_load(a_desc, [0, 0], a_buffer.index(load_idx % NUM_BUFFERS))
        tdm.async_load(b_desc, [0, 0], b_buffer.index(load_idx % NUM_BUFFERS))
        tdm.async_wait((NUM_BUFFERS - 1) * 2)
        a_desc = tdm.update_tensor_descriptor(a_desc, add_offsets=[0, BLOCK_K])
        b_desc = tdm.update_tensor_descriptor(b_desc, add_offsets=[0, BLOCK_K])
        load_idx += 1
        a, b = _load_operands(a_buffer, b_buffer, compute_idx, NUM_BUFFERS, OPA, OPB)
        acc = gfx1250.wmma(a, b, acc)
        compute_idx += 1
    for i in gl.static_range(NUM_BUFFERS - 1):
        tdm.async_wait((NUM_BUFFERS - 2 - i) * 2)
        a, b = _load_operands(a_buffer, b_buffer, compute_idx, NUM_BUFFERS, OPA, OPB)
        acc = gfx1250.wmma(a, b, acc)
        compute_idx += 1
    offs_cm = pid_m * BLOCK_M + gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, WMMA))
    offs_cn = pid_n * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, WMMA))
    offs_c = stride_cm * offs_cm[:, None] + offs_cn[None, :]
    mask_c = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    gfx1250.buffer_store(acc.to(c_ptr.type.element_ty), c_ptr, offs_c, mask=mask_c)


@gluon.jit
def _scaled_step(acc, cur_a, cur_b, zeros, a_scale, b_scale):
    res = gfx1250.wmma(cur_a, cur_b, zeros)
    return acc + res * a_scale[:, None] * b_scale[None, :]


# After ROCm/aiter aiter/ops/triton/_gluon_kernels/gfx1250/gemm/basic/gemm_a8w8_blockscale.py
# @ 14165170e98c (_gemm_a8w8_blockscale_bandwidth_bound_kernel, one K split, a B scale per
# GROUP_N columns): fp8 A/B staged by TDM into NUM_BUFFERS padded stages, the next stage's
# operands read while this one's WMMA (16x16x128) runs, the per-row / per-column scales passed
# through 1-D swizzled LDS buffers every iteration, C written back through padded LDS by a TDM
# store.
@gluon.jit
def gemm_a8w8_blockscale(
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
    stride_ascale_k,
    stride_bscale_k,
    GROUP_N: gl.constexpr,
    BLOCK_SIZE_M: gl.constexpr,
    BLOCK_SIZE_N: gl.constexpr,
    BLOCK_SIZE_K: gl.constexpr,
    NUM_BUFFERS: gl.constexpr,
    WARP_BASES: gl.constexpr,
):
    pid = gl.program_id(axis=0)
    num_pid_m = gl.cdiv(M, BLOCK_SIZE_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m
    wmma: gl.constexpr = gl.amd.AMDWMMALayout(3, True, WARP_BASES, [], [16, 16, 128])
    shared_a: gl.constexpr = gl.PaddedSharedLayout.with_identity_for(
        [[BLOCK_SIZE_K, 8]], [BLOCK_SIZE_M, BLOCK_SIZE_K], [1, 0]
    )
    shared_b: gl.constexpr = gl.PaddedSharedLayout.with_identity_for(
        [[BLOCK_SIZE_K, 8]], [BLOCK_SIZE_N, BLOCK_SIZE_K], [1, 0]
    )
    shared_scale: gl.constexpr = gl.SwizzledSharedLayout(16, 2, 8, [0])
    dot_a: gl.constexpr = gl.DotOperandLayout(0, wmma, 8)
    dot_b: gl.constexpr = gl.DotOperandLayout(1, wmma, 8)
    smem_scale_a = gl.allocate_shared_memory(gl.float32, [BLOCK_SIZE_M], shared_scale)
    smem_scale_b = gl.allocate_shared_memory(gl.float32, [BLOCK_SIZE_N], shared_scale)
    offs_am = (pid_m * BLOCK_SIZE_M + gl.arange(0, BLOCK_SIZE_M, gl.SliceLayout(1, wmma))) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + gl.arange(0, BLOCK_SIZE_N, gl.SliceLayout(0, wmma))) % N
    offs_a_scale = offs_am * stride_ascale_m
    offs_b_scale = offs_bn // GROUP_N
    a_desc = tdm.make_tensor_descriptor(
        a_ptr, (M, K), (stride_am, 1), (BLOCK_SIZE_M, BLOCK_SIZE_K), shared_a
    )
    b_desc = tdm.make_tensor_descriptor(
        b_ptr, (N, K), (stride_bn, 1), (BLOCK_SIZE_N, BLOCK_SIZE_K), shared_b
    )
    smem_a = gl.allocate_shared_memory(
        a_ptr.type.element_ty, [NUM_BUFFERS, BLOCK_SIZE_M, BLOCK_SIZE_K], shared_a
    )
    smem_b = gl.allocate_shared_memory(
        b_ptr.type.element_ty, [NUM_BUFFERS, BLOCK_SIZE_N, BLOCK_SIZE_K], shared_b
    )
    num_loads = 0
    num_computes = 0
    acc = gl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=gl.float32, layout=wmma)
    zeros = gl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=gl.float32, layout=wmma)
    a_scale = gl.amd.cdna4.buffer_load(a_scale_ptr, offs_a_scale)
    b_scale = gl.amd.cdna4.buffer_load(b_scale_ptr, offs_b_scale)
    for _ in gl.static_range(NUM_BUFFERS - 1):
        tdm.async_load(
            a_desc,
            [pid_m * BLOCK_SIZE_M, num_loads * BLOCK_SIZE_K],
            smem_a.index(num_loads % NUM_BUFFERS),
        )
        tdm.async_load(
            b_desc,
            [pid_n * BLOCK_SIZE_N, num_loads * BLOCK_SIZE_K],
            smem_b.index(num_loads % NUM_BUFFERS),
        )
        num_loads += 1
    tdm.async_wait((NUM_BUFFERS - 2) * 2)
    cur_a = smem_a.index(num_computes % NUM_BUFFERS).load(dot_a)
    cur_b = smem_b.index(num_computes % NUM_BUFFERS).permute((1, 0)).load(dot_b)
    smem_scale_a.store(a_scale)
    smem_scale_b.store(b_scale)
    for _ in range(gl.cdiv(K, BLOCK_SIZE_K) - (NUM_BUFFERS - 1)):
        cur_a_scale = smem_scale_a.load(gl.SliceLayout(1, wmma))
        cur_b_scale = smem_scale_b.load(gl.SliceLayout(0, wmma))
        acc = _scaled_step(acc, cur_a, cur_b, zeros, cur_a_scale, cur_b_scale)
        tdm.async_load(
            a_desc,
            [pid_m * BLOCK_SIZE_M, num_loads * BLOCK_SIZE_K],
            smem_a.index(num_loads % NUM_BUFFERS),
        )
        tdm.async_load(
            b_desc,
            [pid_n * BLOCK_SIZE_N, num_loads * BLOCK_SIZE_K],
            smem_b.index(num_loads % NUM_BUFFERS),
        )
        tdm.async_wait((NUM_BUFFERS - 2) * 2)
        num_loads += 1
        next_a = smem_a.index((num_computes + 1) % NUM_BUFFERS).load(dot_a)
        next_b = smem_b.index((num_computes + 1) % NUM_BUFFERS).permute((1, 0)).load(dot_b)
        a_scale_ptr += stride_ascale_k
        b_scale_ptr += stride_bscale_k
        a_scale = gl.amd.cdna4.buffer_load(a_scale_ptr, offs_a_scale)
        b_scale = gl.amd.cdna4.buffer_load(b_scale_ptr, offs_b_scale)
        smem_scale_a.store(a_scale)
        smem_scale_b.store(b_scale)
        cur_a = next_a
        cur_b = next_b
        num_computes += 1
    cur_a_scale = smem_scale_a.load(gl.SliceLayout(1, wmma))
    cur_b_scale = smem_scale_b.load(gl.SliceLayout(0, wmma))
    acc = _scaled_step(acc, cur_a, cur_b, zeros, cur_a_scale, cur_b_scale)
    shared_c: gl.constexpr = gl.PaddedSharedLayout.with_identity_for(
        [[BLOCK_SIZE_N, 8]], [BLOCK_SIZE_M, BLOCK_SIZE_N], [1, 0]
    )
    smem_c = gl.allocate_shared_memory(
        c_ptr.type.element_ty, [BLOCK_SIZE_M, BLOCK_SIZE_N], shared_c
    )
    smem_c.store(acc.to(c_ptr.type.element_ty))
    gl.barrier()
    c_desc = tdm.make_tensor_descriptor(
        c_ptr, (M, N), (stride_cm, 1), (BLOCK_SIZE_M, BLOCK_SIZE_N), shared_c
    )
    tdm.async_store(c_desc, [pid_m * BLOCK_SIZE_M, pid_n * BLOCK_SIZE_N], smem_c)
    tdm.async_wait(0)
