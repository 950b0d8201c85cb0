"""`wgpsim kernel` on the corpus of real Triton 3.9.0 gfx1250 compiles (tests/corpus, issue 11):
every case through the kernel report, from the cache .ttgir (wgpsim allocates from the
module's liveness) and from the post-allocation dump (the module's offsets). Per op, the
instructions per warp equal what the assembly of the op's probe holds; every buffer lies at
Triton's offsets; lds_bytes equals ttg.shared."""

from __future__ import annotations

import pytest

corpus = pytest.importorskip("corpus")

from wgpsim.kernel.report import kernel_report  # noqa: E402

CASES = corpus.cases() if hasattr(corpus, "cases") else {}
ACCESS_OPS = ("ttg.local_load", "amdg.local_load_packed_transposed", "ttg.local_store",
              "ttg.local_alloc")  # fmt: skip


@pytest.fixture(scope="module")
def reports():
    return {
        name: (kernel_report(c.dir / "kernel.ttgir"), kernel_report(c.dir))
        for name, c in CASES.items()
    }


def test_corpus_is_there():
    assert len(CASES) >= 50


@pytest.mark.parametrize("name", list(CASES))
def test_allocation_equals_triton(name, reports):
    """Every buffer at Triton's offsets and the LDS total equal to ttg.shared from the cache
    .ttgir alone (wgpsim sizes the scratch and allocates); the same with the post-allocation
    module's scratch sizes."""
    cache, allocated = reports[name]
    case = CASES[name]
    want = {b["name"]: b["offsets"] for b in case.buffers}
    explicit = {b["name"] for b in cache.buffers if b["kind"] == "explicit"}
    mine = {b["name"]: b["wgpsim_offsets"] for b in cache.buffers if b["kind"] == "explicit"}
    assert mine == {k: v for k, v in want.items() if k in explicit}
    merged = {b["name"].removeprefix("scratch:"): b["wgpsim_offsets"] for b in allocated.buffers}
    # (expected.json misses the scratch of a tt.reduce, whose allocation.offset Triton prints
    # on the closing line of its region; wgpsim reads it, so it may hold more buffers)
    assert {k: merged.get(k) for k in want} == want
    assert allocated.lds_bytes == allocated.ttg_shared == case.ttg_shared
    assert cache.lds_bytes == case.ttg_shared  # scratch sized and placed from the .ttgir alone
    scratch = [b for b in cache.buffers if b["kind"] == "scratch" and b["wgpsim_offsets"]]
    assert [b["wgpsim_offsets"] for b in scratch] == [
        merged[b["name"].removeprefix("scratch:")] for b in scratch
    ]


@pytest.mark.parametrize("name", list(CASES))
def test_instructions_per_op_equal_the_assembly(name, reports):
    _, rep = reports[name]
    mine = [op for op in rep.ops if op["op"] in ACCESS_OPS]
    theirs = CASES[name].accesses
    assert [op["op"] for op in mine] == [a.op for a in theirs]
    got = [op["instructions"] for op, a in zip(mine, theirs, strict=True) if a.instructions]
    want = [a.instructions for a in theirs if a.instructions]
    assert got == want


def test_how_many_ops_are_checked(reports):
    """The ops held against their probes' assembly: all 164 of the 66 compiles match."""
    checked = matched = 0
    for name, (_, rep) in reports.items():
        mine = [op for op in rep.ops if op["op"] in ACCESS_OPS]
        for op, a in zip(mine, CASES[name].accesses, strict=True):
            if a.instructions:
                checked += 1
                matched += op["instructions"] == a.instructions
    assert checked >= 164 and matched == checked
