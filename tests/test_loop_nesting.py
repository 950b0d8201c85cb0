"""A loop body that holds an inner loop (tutorial 08's grouped GEMM: the tile loop around the
K loop, a real Triton 3.9.0 gfx1250 compile in ``tests/corpus_others``): the ``ds_*`` inside
the inner loop belong to the inner TTGIR loop's ops; those after it to the remainder and the
peeled epilogue, whose B load LLVM left without a source line (``.loc 0``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from wgpsim.frontend.amdgcn_loops import loops
from wgpsim.frontend.sources import read_kernel
from wgpsim.kernel.loop.matching import ttgir_loop
from wgpsim.kernel.loop.program import loop_program

FIXTURE = Path(__file__).resolve().parent / "corpus_others" / "fixtures" / "tutorial_grouped_gemm"


def test_the_tile_loop_matches_inner_loop_remainder_and_unlined_epilogue():
    kernel = read_kernel(FIXTURE / "kernel.ttgir")
    bodies = {b.label: b for b in loops(kernel.assembly)}
    outer, inner = bodies[".LBB0_5"], bodies[".LBB0_9"]
    inner_loop = ttgir_loop(kernel, inner)[0]
    assert inner_loop is not None and outer.lines[0] < inner.lines[0] < outer.lines[1]
    prog = loop_program(kernel, kernel.assembly, loop=".LBB0_5")
    assert prog.unmatched == ()
    lds = [s for s in prog.steps if s.what == "lds"]
    assert Counter(s.asm[-1] for s in lds) == Counter(outer.counts(("ds",)))
    ops = {op.index: op for op in kernel.ops}
    within = [s for s in lds if inner.lines[0] <= s.line <= inner.lines[1]]
    assert within and all(inner_loop in ops[s.op_index].loops for s in within)
    unlined = [s for s in lds if s.loc.endswith(":0")]
    assert len(unlined) == 8 and {s.asm[-1] for s in unlined} == {"ds_load_tr16_b128"}
    # the epilogue's B load: a local_load after the K loop (in the tile loop, not the K loop)
    (epilogue,) = {s.op_index for s in unlined}
    assert ops[epilogue].op == "ttg.local_load" and inner_loop not in ops[epilogue].loops
    assert ops[epilogue].loops and all(s.line > inner.lines[1] for s in unlined)
