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

XFAIL: dict[tuple[str, str], str] = {
    ("flaggems_cumsum", "ds"): SCRATCH_OPS + " (tt.scan: 12 ds_bpermute_b32 too)",
    ("heldout_bmm_rank3_masked", "ds"): (
        ASYNC_STORES + "; and in loop .LBB0_9, 8 ds_load_tr16_b128 the assembly puts on the A "
        "load's line, whose op has none left (cause 5)"
    ),
    ("tutorial_grouped_gemm", "ds"): (
        "in loop .LBB0_5 (the tile loop around the K loop) 8 ds_load_tr16_b128 have no "
        "source line (.loc 0) and are not matched: 56 of 64 ds_*"
    ),
}
