"""LDS ops inside inlined helpers (``tests/fixtures/inlined``: real Triton 3.9.0 gfx1250
compiles, each helper called twice) and inlined Triton library code (``tl.argmax``'s reduce in
``tests/corpus_others``): the assembly puts their ``ds_*`` under the helper's (or
``standard.py``'s) ``.loc``, with the call sites in the listing's inlined-at comment; the loop
matching follows that chain to the op the TTGIR locates there."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from wgpsim.frontend.amdgcn_loops import loops
from wgpsim.frontend.sources import read_kernel
from wgpsim.kernel.loop.program import loop_program, pick_body

HERE = Path(__file__).resolve().parent
CASES = sorted(p for p in (HERE / "fixtures" / "inlined").iterdir() if p.is_dir() and
               not p.name.startswith("__"))  # fmt: skip


def _main_loop(kernel, asm: str) -> int:
    bodies = loops(asm)
    return bodies.index(pick_body(asm))


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_every_ds_of_an_inlined_helper_goes_to_the_op_of_its_call_site(case):
    """All ds_* of the loop are matched, each to an op whose line is a frame of the
    instruction's inlined-at chain and whose call sites are the frames after it."""
    kernel = read_kernel(case)
    asm = kernel.assembly
    body = loops(asm)[_main_loop(kernel, asm)]
    prog = loop_program(kernel, asm, loop=_main_loop(kernel, asm))
    assert prog.unmatched == ()
    by_index = {op.index: op for op in kernel.ops}
    lines = {i.line: i for i in body.instructions if i.kind == "ds"}
    lds = [s for s in prog.steps if s.what == "lds"]
    assert Counter(s.asm[-1] for s in lds) == Counter(body.counts(("ds",)))
    for step in lds:
        instr, op = lines[step.line], by_index[step.op_index]
        assert len(instr.frames) == 2  # the helper's line, then the call site
        at = instr.frames.index((op.loc.short.split(":")[0], op.loc.line))
        assert op.loc.callers == instr.frames[at + 1 :]


def test_a_helper_called_twice_is_matched_by_call_site_not_by_order():
    """Swap the two call sites of the Gluon helper's loads in the listing's comments (as if
    LLVM had scheduled the second call's loads first): each load now goes to the other op."""
    case = next(c for c in CASES if c.name == "gluon_helpers")
    kernel = read_kernel(case)
    a, b = (op for op in kernel.ops if op.op == "ttg.local_load")
    (_, at_a), (_, at_b) = a.loc.callers[0], b.loc.callers[0]
    swap = {f":{at_a}:": f":{at_b}:", f":{at_b}:": f":{at_a}:"}
    asm = re.sub(rf"@\[ kernels\.py(:{at_a}:|:{at_b}:)", lambda m: "@[ kernels.py" +
                 swap[m.group(1)], kernel.assembly)  # fmt: skip
    loop = _main_loop(kernel, asm)
    first, swapped = (
        [s.op_index for s in loop_program(kernel, text, loop=loop).steps if s.what == "lds"
         and s.asm[-1].startswith("ds_load")]
        for text in (kernel.assembly, asm)
    )  # fmt: skip
    assert first[0] == a.index and set(first) == {a.index, b.index}
    assert swapped == [b.index if i == a.index else a.index for i in first]


def test_a_library_reduce_is_attributed_to_its_callers_line():
    """tl.argmax's reduce: its ds_* are under ``standard.py``'s lines, inlined at the user's
    line 73, where the TTGIR locates the tt.reduce; each is matched to it, or (while its
    scratch traffic has no lowering) unmatched naming it and the chain, never 'no op'."""
    kernel = read_kernel(HERE / "corpus_others" / "fixtures" / "flaggems_argmax" / "kernel.ttgir")
    (reduce,) = (op for op in kernel.ops if op.op == "tt.reduce")
    prog = loop_program(kernel, kernel.assembly)
    mine = [s for s in prog.steps if s.op_index == reduce.index]
    assert len(mine) + len(prog.unmatched) == 8  # the loop's 8 ds_store/ds_load
    for u in prog.unmatched:
        assert u.loc.startswith("standard.py:") and u.loc.endswith("@ flaggems.py:73")
        assert "tt.reduce" in u.reason and "no TTGIR LDS op" not in u.reason


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_the_report_compares_a_helper_line_with_its_inlined_instructions(case):
    """Per source line, wgpsim's instructions (prologue, loop and epilogue ops of the helper's
    line together) equal the assembly's under that line, whichever call site inlined them."""
    from wgpsim.kernel.report import kernel_report

    asm = kernel_report(case).extras["assembly"]
    assert asm["lines"] and asm["matching_lines"] == len(asm["lines"])
