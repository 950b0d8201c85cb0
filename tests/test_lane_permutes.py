"""Lane permutes (``ds_bpermute_b32``: Triton's warp shuffles in tt.scan, tt.reduce, tt.gather
and a convert_layout within a warp) in real Triton 3.9.0 gfx1250 compiles: they go through the LDS crossbar without an
LDS memory access (LLVM's DS_1A1D_PERMUTE: mayLoad = 0, mayStore = 0), so wgpsim times them as
issue rows, never as unmatched LDS traffic, and the report lists every one in ``not_modelled``
at its op's source line."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from wgpsim.frontend.sources import read_kernel
from wgpsim.kernel.loop.program import loop_program
from wgpsim.kernel.report import kernel_report

TESTS = Path(__file__).resolve().parent
CASES = sorted(
    p.parent
    for p in [*TESTS.glob("fixtures/scratch/*/kernel.amdgcn"),
              *TESTS.glob("corpus_others/fixtures/*/kernel.amdgcn")]
    if "ds_bpermute" in p.read_text()
)  # fmt: skip
#: the ops Triton lowers with warp shuffles (a convert_layout within a warp: gather_axis0_fp32)
SHUFFLERS = ("tt.scan", "tt.reduce", "tt.gather", "ttg.convert_layout")
_PERMUTE = re.compile(r"^\s+(ds_(?:b?permute|swizzle)_\w+)", re.M)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_every_lane_permute_is_listed_and_timed_as_issue(case):
    listing = Counter(_PERMUTE.findall((case / "kernel.amdgcn").read_text()))
    assert listing  # the fixture holds some
    kernel = read_kernel(case / "kernel.ttgir")
    rows = [n for n in kernel_report(kernel).not_modelled if n["op"] in listing]
    got = Counter()
    for row in rows:
        got[row["op"]] += int(row["reason"].split()[0])
        op = next(op for op in kernel.ops if op.name == row["name"])  # the scan/reduce/gather
        assert op.op in SHUFFLERS and row["loc"] == op.loc.short
    assert got == listing
    prog = loop_program(kernel)
    body_permutes = Counter({m: n for m, n in prog.asm_counts.items() if m in listing})
    assert Counter(s.asm[-1] for s in prog.steps if s.what == "permute") == body_permutes
    assert not any(u.mnemonic in listing for u in prog.unmatched)


def test_the_cumsum_scan_has_its_twelve_permutes_at_its_line():
    (row,) = (n for n in kernel_report(TESTS / "corpus_others" / "fixtures" / "flaggems_cumsum" /
              "kernel.ttgir").not_modelled if n["op"] == "ds_bpermute_b32")  # fmt: skip
    assert (row["loc"], row["name"], row["reason"].split()[0]) == (
        "flaggems.py:88",
        "%result",
        "12",
    )
