"""Scratch sizes and the whole allocation from the cache .ttgir alone, against real Triton
3.9.0 gfx1250 compiles: tests/fixtures/scratch (reductions over either axis, argmax, cumsum,
histograms, gathers (within a warp and across warps), atomics, reductions of tl.dot results, two-operand scans, a layer norm,
Gluon convert_layouts, 4 and 8 warps; ``regenerate.py`` there
makes them again), the corpus (tests/corpus) and the examples (examples/kernels).

Truth per op: the ``allocation.size`` Triton printed on the op in the post-allocation module
(``expected.json``, read with a regular expression; 0 where it printed none). Truth per
kernel: every buffer's ``allocation.offset`` and ``ttg.shared``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wgpsim.frontend.ssa_scopes import original_name
from wgpsim.frontend.ttgir import read_ttgir_file
from wgpsim.hw.scratch import cvt_needs_shared_memory, scratch_bytes
from wgpsim.kernel.lowering import allocate_kernel

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = sorted(p for p in (ROOT / "tests" / "fixtures" / "scratch").iterdir() if p.is_dir())
CORPUS = sorted(p for p in (ROOT / "tests" / "corpus" / "fixtures").iterdir() if p.is_dir())
EXAMPLES = sorted(p for p in (ROOT / "examples" / "kernels").iterdir() if p.is_dir())


def _pair(d: Path) -> tuple[Path, Path]:
    """(cache .ttgir, post-allocation module) of a fixture or example directory."""
    if (d / "kernel.ttgir").exists():
        return d / "kernel.ttgir", d / "kernel.alloc.mlir"
    ttgir = next(d.glob("*.ttgir"))
    return ttgir, d / ttgir.name.replace(".ttgir", ".post.mlir")


def _triton_sizes(d: Path) -> list[tuple[str, int]]:
    """Per scratch op of the module, in order: (op, Triton's scratch bytes, 0 for none)."""
    data = json.loads((d / "expected.json").read_text())
    given = {(b["op"], b["line"]): b["size"] for b in data["buffers"] if b["size"] is not None}
    post = read_ttgir_file(d / "kernel.alloc.mlir")
    ops = [op for op in post.ops if op.direction == "scratch"]
    assert len(given) == sum((op.op, op.line) in given for op in ops)  # every one matched
    return [(op.op, given.get((op.op, op.line), 0)) for op in ops]


def test_the_fixtures_are_there():
    assert len(SCRATCH) >= 36 and len(CORPUS) >= 60 and len(EXAMPLES) >= 10


@pytest.mark.parametrize("d", SCRATCH, ids=lambda d: d.name)
def test_scratch_bytes_per_op_equal_tritons(d):
    kernel = read_ttgir_file(d / "kernel.ttgir")
    mine = [
        (op.op, scratch_bytes(op, kernel.threads_per_warp))
        for op in kernel.ops
        if op.direction == "scratch"
    ]
    assert mine == _triton_sizes(d)


def test_the_scratch_fixtures_cover_every_kind():
    """Each kind of scratch op, and both answers of each rule, occur in the fixtures."""
    seen: dict[str, set[bool]] = {}
    for d in SCRATCH:
        for op, size in _triton_sizes(d):
            seen.setdefault(op, set()).add(size > 0)
    assert seen["tt.reduce"] == seen["ttg.convert_layout"] == seen["tt.gather"] == {True, False}
    assert seen["amdg.buffer_atomic_rmw"] == {True, False}
    assert seen["tt.scan"] == seen["tt.histogram"] == seen["tt.atomic_rmw"] == {True}
    assert seen["tt.atomic_cas"] == {True}


def test_a_conversion_within_a_warp_needs_no_lds():
    """A row sum's result moving from a slice of registers to lanes (the corpus row sum, fp32):
    through LDS (5 register<->lane transpositions); the same tensor back is the same layout."""
    kernel = read_ttgir_file(CORPUS[0].parent / "row_sum_fp32" / "kernel.ttgir")
    cvt = next(op for op in kernel.ops if op.op == "ttg.convert_layout")
    assert cvt_needs_shared_memory(cvt.tensor, cvt.result)
    assert not cvt_needs_shared_memory(cvt.tensor, cvt.tensor)


def _placed(kernel, offsets) -> dict[tuple, tuple[int, ...] | None]:
    """Buffer offsets keyed by (op, source line, n-th such buffer on the line)."""
    out, seen = {}, {}
    for b in kernel.buffers:
        key = (b.op, b.loc.line if b.loc else None)
        seen[key] = seen.get(key, 0) + 1
        found = offsets(b)
        if found is not None:
            out[(*key, seen[key])] = tuple(found)
    return out


@pytest.mark.parametrize("d", SCRATCH + CORPUS + EXAMPLES, ids=lambda d: d.name)
def test_allocation_from_the_ttgir_alone_equals_tritons(d):
    """Every buffer (explicit and scratch) at Triton's offset, and the LDS total equal to
    ``ttg.shared``, from the cache .ttgir alone."""
    ttgir, post_path = _pair(d)
    kernel, post = read_ttgir_file(ttgir), read_ttgir_file(post_path)
    alloc = allocate_kernel(kernel)
    want = _placed(post, lambda b: b.offsets)
    assert _placed(kernel, lambda b: alloc.wgpsim_offsets.get(b.name)) == want
    assert alloc.lds_bytes == post.ttg_shared


PADDED = [d for d in SCRATCH if d.name.startswith("cvt_padded_attr_")]


@pytest.mark.parametrize("d", PADDED, ids=lambda d: d.name)
def test_a_padded_conversion_is_sized_as_triton_3_9_sizes_it(d):
    """``amdgpu.use_padded_scratch_shmem`` on a conversion (compiled from a TTGIR carrying
    it): Triton 3.9.0 ignores it and gives the swizzled buffer. wgpsim reads the attribute and
    sizes the buffer as Triton does, which is not the padded repShape of older Triton (a 64x64
    fp32 transpose: 16384 B, not 33 x 32 x 4 = 4224 B)."""
    kernel = read_ttgir_file(d / "kernel.ttgir")
    cvts = [op for op in kernel.ops if op.op == "ttg.convert_layout"]
    assert cvts and all(op.attr("use_padded_scratch_shmem") for op in cvts)
    sizes = [scratch_bytes(op, kernel.threads_per_warp) for op in cvts]
    assert sizes == [size for op, size in _triton_sizes(d) if op == "ttg.convert_layout"]
    assert (
        all(sizes)
        and allocate_kernel(kernel).lds_bytes
        == json.loads((d / "expected.json").read_text())["ttg_shared"]
    )


def test_the_padded_fixtures_are_there():
    assert len(PADDED) == 3


def test_ops_that_reuse_an_ssa_name_get_buffers_of_their_own():
    """MLIR reuses a name in sibling regions: vLLM's prefix prefill has a ``%m_ij`` reduce in
    each of its two loops. Each gets its own scratch buffer, so the allocation places them all
    and its total is ``ttg.shared`` (16384 B; before, the two shared one name and the total was
    unknown)."""
    d = ROOT / "tests" / "corpus_others" / "fixtures" / "vllm_prefix_prefill"
    kernel = read_ttgir_file(d / "kernel.ttgir")
    reduces = [
        op for op in kernel.ops if op.op == "tt.reduce" and original_name(op.name) == "%m_ij"
    ]
    assert len(reduces) == 2 and reduces[0].buffer != reduces[1].buffer
    names = [b.name for b in kernel.buffers]
    assert len(names) == len(set(names))
    assert allocate_kernel(kernel).lds_bytes == read_ttgir_file(d / "kernel.alloc.mlir").ttg_shared
