"""What a Triton 3.9.0 TTGIR module may contain: the dialects and ops the reader accepts, and the
attribute kinds of Triton's layouts (those `wgpsim.layout` reads, and those it knows of but does
not model). Anything else is an unknown op or attribute: the reader stops with one line.

>>> "ttg.local_load" in KNOWN_OPS, "ttg.local_laod" in KNOWN_OPS
(True, False)
>>> "amd_mfma" in MODELLED_KINDS, "nvmma_shared" in UNMODELLED_KINDS
(True, True)
"""

from __future__ import annotations

from wgpsim.frontend.model import SCRATCH_LDS_OPS
from wgpsim.layout.notation import _SPECS

#: Dialects whose ops the reader takes on trust (arithmetic, control flow, LLVM, ROCDL).
OPEN_DIALECTS = frozenset(
    {
        "arith",
        "math",
        "cf",
        "llvm",
        "rocdl",
        "gpu",
        "ub",
        "builtin",
        "func",
        "index",
        "proton",
        "proton_gpu",
        "vector",
    }
)

#: Ops of Triton's own dialects (tt, ttg, amdg) and of scf that Triton 3.9.0 prints.
KNOWN_OPS = frozenset(
    """
    scf.for scf.if scf.while scf.yield scf.condition scf.execute_region scf.index_switch
    tt.addptr tt.advance tt.assert tt.atomic_cas tt.atomic_rmw tt.bitcast tt.broadcast tt.call
    tt.cat tt.clampf tt.descriptor_gather tt.descriptor_load tt.descriptor_reduce
    tt.descriptor_scatter tt.descriptor_store tt.dot tt.dot_scaled tt.elementwise_inline_asm
    tt.expand_dims tt.extern_elementwise tt.fp_to_fp tt.func tt.gather tt.get_num_programs
    tt.get_program_id tt.histogram tt.int_to_ptr tt.join tt.load tt.make_range
    tt.make_tensor_descriptor tt.make_tensor_ptr tt.map_elementwise tt.mulhiui tt.precise_divf
    tt.precise_sqrt tt.print tt.ptr_to_int tt.reduce tt.reduce.return tt.reshape tt.return
    tt.scan tt.scan.return tt.splat tt.split tt.store tt.trans tt.unsplat
    ttg.async_commit_group ttg.async_copy_global_to_local ttg.async_wait ttg.barrier
    ttg.convert_layout ttg.fp4_to_fp ttg.global_scratch_alloc ttg.inline_asm ttg.local_alloc
    ttg.local_dealloc
    ttg.local_gather ttg.local_load ttg.local_scatter ttg.local_store ttg.local_atomic_scatter_rmw
    ttg.mask ttg.mask.return ttg.memdesc_index ttg.memdesc_reinterpret ttg.memdesc_reshape
    ttg.memdesc_subslice ttg.memdesc_trans ttg.predicate_stage ttg.warp_id ttg.warp_return
    ttg.warp_specialize ttg.warp_specialize.partitions ttg.warp_yield
    amdg.arrive_barrier amdg.async_copy_local_to_global amdg.async_copy_mbarrier_arrive
    amdg.async_tdm_copy_global_to_local amdg.async_tdm_copy_local_to_global
    amdg.async_tdm_fused_copy_global_to_local amdg.async_tdm_gather amdg.async_tdm_intrinsic_wait
    amdg.async_tdm_scatter amdg.async_tdm_wait amdg.async_wait amdg.buffer_atomic_cas
    amdg.buffer_atomic_rmw amdg.buffer_load amdg.buffer_load_to_local amdg.buffer_store
    amdg.bypass_lds_load amdg.cluster_barrier_arrive amdg.cluster_barrier_wait amdg.concat
    amdg.cond_barrier amdg.extract_slice amdg.in_thread_transpose amdg.init_barrier
    amdg.local_load_packed_transposed amdg.masked_load amdg.masked_store amdg.scaled_upcast_fp4
    amdg.scaled_upcast_fp8 amdg.tdm_prefetch amdg.update_tensor_descriptor amdg.wait_barrier
    amdg.instruction_sched_hint amdg.sched_barrier amdg.memory_counter_wait
    """.split()  # noqa: SIM905
)

#: Triton's own dialects: an op of these not in KNOWN_OPS is an unknown op.
CLOSED_DIALECTS = frozenset({"scf", "tt", "ttg", "amdg"})

#: `#ttg.<kind>` layouts `wgpsim.layout.notation` reads.
MODELLED_KINDS = frozenset(_SPECS)  # the kinds notation.parse builds
#: Layouts Triton 3.9.0 prints that wgpsim knows of and does not model (ops using them are
#: listed as not modelled).
UNMODELLED_KINDS = (
    frozenset(
        {
            "slice",
            "amd_mfma",
            "nvidia_mma",
            "nvmma_shared",
            "shared_linear",
            "amd_rotating_shared",
            "shared_memory",
            "cga_layout",
            "cta_layout",
        }
    )
    - MODELLED_KINDS
)

#: Ops that may need an LDS scratch buffer (Triton's allocator gives them one): the kernel
#: model's scratch ops, and ops with scratch the model does not lower (their LDS instructions are
#: not modelled). Not ``amdg.in_thread_transpose``: it moves elements between one lane's
#: registers, and Triton 3.9.0 gives it no scratch (no ``allocation.offset`` on any of the 11
#: gfx942/gfx950 compiles of ``tests/corpus_others`` that hold it).
SCRATCH_OPS = frozenset(SCRATCH_LDS_OPS) | {
    "ttg.warp_specialize",
    "tt.print",
    "tt.assert",
}
