"""Scratch ops (convert_layout, reduce, scan, ...) as LDS ops of the kernel model: the reader
gives each its source and result tensors, the attributes that size its scratch and its scratch
buffer, in the cache .ttgir (every such op) and in the post-allocation module (``buffer`` None
where Triton gave the op no scratch). Truth: real Triton 3.9.0 gfx1250 compiles (tests/corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wgpsim.frontend.model import SCRATCH_LDS_OPS
from wgpsim.frontend.ttgir import read_ttgir_file
from wgpsim.kernel.report import kernel_report

CORPUS = Path(__file__).parent / "corpus" / "fixtures"


def _scratch(path: Path):
    return [op for op in read_ttgir_file(path).ops if op.direction == "scratch"]


def test_a_column_sum_reads_as_a_reduce_and_a_convert_layout():
    reduce, cvt = _scratch(CORPUS / "col_sum_fp32" / "kernel.ttgir")
    assert (reduce.op, reduce.name, reduce.buffer) == ("tt.reduce", "%0", "scratch:%0")
    assert reduce.tensor.shape == (128, 64) and reduce.tensor.dtype == "f32"
    assert reduce.result.shape == (64,) and "slice" in reduce.result.encoding_text
    assert reduce.attr("axis") == 0 and reduce.attr("operands") == 1
    assert reduce.attr("elem_types") == ("f32",)
    assert reduce.memdesc is None and reduce.loc is not None
    assert (
        cvt.op == "ttg.convert_layout" and cvt.tensor.encoding_text == reduce.result.encoding_text
    )
    assert cvt.result.encoding_text == "#blocked1" and cvt.attr("use_padded_scratch_shmem") is False
    assert cvt.src_encoding == cvt.tensor.encoding_text and cvt.dst_encoding == "#blocked1"


@pytest.mark.parametrize("case", ["col_sum_fp32", "softmax_fp16", "attention_fwd_d128"])
def test_the_same_scratch_ops_before_and_after_allocation(case):
    """The cache .ttgir and the post-allocation module list the same scratch ops; after
    allocation an op has a buffer exactly when Triton gave it an allocation.offset."""
    before = _scratch(CORPUS / case / "kernel.ttgir")
    after = _scratch(CORPUS / case / "kernel.alloc.mlir")
    assert [(o.op, o.loc.line, o.attrs) for o in before] == [
        (o.op, o.loc.line, o.attrs) for o in after
    ]
    assert before and all(o.buffer == f"scratch:{o.name}" for o in before)
    text = (CORPUS / case / "kernel.alloc.mlir").read_text()
    given = text.count("allocation.size")
    assert sum(o.buffer is not None for o in after) == given


def test_scratch_ops_are_reported_never_dropped():
    """Until their traffic is lowered, the report lists every scratch op among its ops and in
    ``not_modelled`` with its source line; none is a not-modelled note of the reader."""
    rep = kernel_report(CORPUS / "softmax_fp16" / "kernel.ttgir")
    rows = [op for op in rep.ops if op["op"] in SCRATCH_LDS_OPS]
    assert [op["op"] for op in rows] == ["tt.reduce", "tt.reduce"]
    listed = {(n["op"], n["loc"]) for n in rep.not_modelled}
    assert all((op["op"], op["loc"]) in listed and op["loc"] for op in rows)
    assert not any(n.op in SCRATCH_LDS_OPS for n in rep.model.not_modelled)
