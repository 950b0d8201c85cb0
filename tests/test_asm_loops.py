"""The assembly's loops against LLVM's own loop annotations (``; =>This Inner Loop Header``,
``; in Loop: Header=...``, which the verbose listing prints from MachineLoopInfo) on every
stored gfx1250 compile: each loop header lies in a body `loops` finds, and each body found holds
an annotated block. A block placed before the block that branches to it (an ``s_endpgm`` exit
block, LLVM's out-of-line ``execz`` blocks) is no loop (heldout_bmm_rank3_masked: .LBB0_9)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wgpsim.frontend.amdgcn_loops import loops

TESTS = Path(__file__).resolve().parent
LISTINGS = sorted(
    [*TESTS.glob("corpus*/fixtures/*/kernel.amdgcn"), *TESTS.glob("fixtures/*/*/*.amdgcn"),
     *TESTS.parent.glob("examples/kernels/*/*.amdgcn")]
)  # fmt: skip


@pytest.mark.parametrize("path", LISTINGS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_loops_are_llvms_loops(path):
    lines = path.read_text().splitlines()
    headers = [n for n, t in enumerate(lines, 1) if re.match(r"^\.LBB\w+:.*Loop Header", t)]
    annotated = [n for n, t in enumerate(lines, 1) if re.search(r"Loop Header|in Loop:", t)]
    bodies = loops("\n".join(lines))
    assert all(any(b.lines[0] <= h <= b.lines[1] for b in bodies) for h in headers)
    if annotated:
        assert all(any(b.lines[0] <= n <= b.lines[1] for n in annotated) for b in bodies)


def test_an_exit_block_before_its_branch_is_no_loop():
    listing = TESTS / "corpus_others" / "fixtures" / "heldout_bmm_rank3_masked" / "kernel.amdgcn"
    text = listing.read_text()
    assert re.search(r"^\.LBB0_9:.*\n.*\n\s+s_endpgm", text, re.M)  # the exit block
    assert re.search(r"s_cbranch_scc1 \.LBB0_9", text)  # the branch to it, placed after it
    assert [b.label for b in loops(text)] == [".LBB0_5"]
