"""The checks of ``tests/test_corpus_others.py`` that fail today, with their causes: the work
queue of issue 23. Each entry is ``(kernel, check): cause``; the test of that pair is
``xfail(strict=True)``, so a fix that makes it pass fails the run until its entry is removed
here. ``python benchmarks/kernel_corpus_check.py`` prints what each check finds today."""

#: issue 23 cause 1: the ds_* that Triton's tt.scan lowers through LDS scratch (its partials and
#: ds_bpermute_b32 shuffles) are not lowered (convert_layout, tt.reduce and atomics are)
SCRATCH_OPS = "scratch ds_* of tt.scan are not lowered (cause 1)"
#: issue 23 cause 2: wgpsim's allocation has no scratch buffers, so its total stays below
#: ttg.shared and a scratch buffer has no offset
SCRATCH_SIZE = "Triton's scratch (reduce / scan / convert_layout) is not sized or placed (cause 2)"
#: issue 23 cause 3: ttg.async_copy_global_to_local becomes global loads + ds_store_b128 in a
#: pipelined loop on gfx1250; the stores have no op to be matched to
ASYNC_STORES = "async-copy ds_store_b128 of the pipelined loop are not modelled (cause 3)"
ROWPERM = "row-permuting padded layout on a B operand: TypeError 'NoneType' object is not iterable"
TWO_BANDS = (
    "the K/V buffers of the causal loop's two bands (one inlined function, two loops) are not "
    "reused: wgpsim places them 18400 B higher (55200 B against ttg.shared 36800)"
)
REPEATED_NAMES = (
    "the SSA name %3 repeats in three regions (the descriptor store's local_alloc in each copy "
    "of the flattened loop's epilogue): wgpsim's allocation refuses ('buffer names must be "
    "unique') and places nothing, so no op is lowered"
)

PADDED_CVT = (
    "a convert_layout with amdgpu.use_padded_scratch_shmem: its padded scratch is not sized, "
    "so the LDS total is unknown (None)"
)

XFAIL: dict[tuple[str, str], str] = {
    ("flaggems_cumsum", "ds"): SCRATCH_OPS + " (tt.scan: 12 ds_bpermute_b32 too)",
    ("heldout_attn_causal_descriptor", "lds_bytes"): TWO_BANDS,
    ("heldout_attn_causal_descriptor", "offsets"): TWO_BANDS,
    ("heldout_bmm_rank3_masked", "ds"): (
        ASYNC_STORES + "; and in loop .LBB0_9, 8 ds_load_tr16_b128 the assembly puts on the A "
        "load's line, whose op has none left (cause 5)"
    ),
    ("heldout_padded_rowperm_b", "clean"): ROWPERM,
    ("heldout_padded_rowperm_b", "local_load"): ROWPERM,
    ("heldout_padded_rowperm_b", "lds_bytes"): ROWPERM,
    ("heldout_padded_rowperm_b", "offsets"): ROWPERM,
    ("heldout_padded_rowperm_b", "ds"): ROWPERM,
    ("tutorial_grouped_gemm", "ds"): (
        "in loop .LBB0_5 (the tile loop around the K loop) 8 ds_load_tr16_b128 have no "
        "source line (.loc 0) and are not matched: 56 of 64 ds_*"
    ),
    ("tutorial_descriptor_persistent_matmul", "local_load"): REPEATED_NAMES,
    ("tutorial_descriptor_persistent_matmul", "lds_bytes"): REPEATED_NAMES,
    ("tutorial_descriptor_persistent_matmul", "offsets"): REPEATED_NAMES,
    ("tutorial_descriptor_persistent_matmul", "ds"): REPEATED_NAMES,
    ("vllm_prefix_prefill", "lds_bytes"): PADDED_CVT,
}
