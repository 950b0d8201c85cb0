"""The AMD blog's LDS bandwidth microbenchmark as a Gluon kernel.

Each warp reads its own row of a [NUM_WARPS, N] fp16 tensor out of LDS with back-to-back
ds_load_b128 (8 fp16 per lane), bracketed by a barrier and an ``s_get_shader_cycles_u64``
clock read on each side. With 4 warps and N = 8192 the tensor is 64 KiB and each warp issues
32 loads; the plain layout takes one 64 KiB buffer, the partitioned one (rows alternate
between two partitions) two 32 KiB buffers, the second pushed to the 64 KiB boundary: 96 KiB.
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.amd.gfx1250 import PartitionedSharedLayout

from . import Case, signature


@gluon.jit
def lds_bandwidth(
    out_ptr, cycles_ptr, N: gl.constexpr, NUM_WARPS: gl.constexpr, SHARED: gl.constexpr
):
    layout: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [NUM_WARPS, 1], [1, 0])
    smem = gl.allocate_shared_memory(gl.float16, [NUM_WARPS, N], SHARED)
    gl.barrier()
    start = gl.inline_asm("s_get_shader_cycles_u64 $0", "=s", [], gl.int64)
    x = smem.load(layout)
    gl.barrier()
    stop = gl.inline_asm("s_get_shader_cycles_u64 $0", "=s", [], gl.int64)
    rows = gl.arange(0, NUM_WARPS, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, N, layout=gl.SliceLayout(0, layout))
    gl.store(out_ptr + rows[:, None] * N + cols[None, :], x)
    gl.store(cycles_ptr, stop - start)


_PLAIN = gl.SwizzledSharedLayout(1, 1, 1, [1, 0])
#: rows alternate between two partitions (row w -> partition w % 2), as configs/lds_bandwidth.yaml
_PARTITIONED = PartitionedSharedLayout(2, 2, 0, _PLAIN)


def _case(name, shared, warps=4, n=8192, note=""):
    ce = dict(N=n, NUM_WARPS=warps, SHARED=shared)
    sig = signature("out_ptr:*fp16 cycles_ptr:*i64", ce)
    return Case(name, lds_bandwidth, sig, ce, warps, ("bandwidth",), note)


CASES = [
    _case("lds_bandwidth_plain", _PLAIN, note="64 KiB, one buffer at offset 0"),
    _case(
        "lds_bandwidth_partitioned", _PARTITIONED, note="2 x 32 KiB, the second at 64 KiB: 96 KiB"
    ),
    _case("lds_bandwidth_plain_burst8", _PLAIN, n=2048, note="8 loads per warp"),
    _case(
        "lds_bandwidth_partitioned_w8",
        PartitionedSharedLayout(2, 4, 0, _PLAIN),
        warps=8,
        n=4096,
        note="8 warps, 64 KiB",
    ),
]
