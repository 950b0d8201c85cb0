"""``wgpsim kernel --plot``'s LDS map counts every stage of a double buffer as read: the
report lowers a stage-indexed local_load at stage 0 only, but the same op reads stage 1 in the
next iteration (review 2, item 15). The shipped matmul (a 2-stage pipelined Triton GEMM,
stage index loop-carried) and attention (computed index) have no byte left "not read"."""

from __future__ import annotations

from pathlib import Path

import pytest

from wgpsim.hw import load_hardware
from wgpsim.kernel.lowering import carried_stage, computed_stage
from wgpsim.kernel.report import kernel_report
from wgpsim.plots.lds_map import _read_bytes, _segments, buffer_pieces

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernels"


@pytest.mark.parametrize("name", ["matmul", "attention"])
def test_every_stage_of_a_staged_buffer_is_read(name):
    report, hw = kernel_report(EXAMPLES / name), load_hardware()
    staged = {
        low.op.buffer
        for low in report.lowerings
        if low.lowering is not None
        and (computed_stage(low.op) or carried_stage(low.op) is not None)
    }
    assert staged and all(report.model.buffer(b).stages >= 2 for b in staged)
    reads = _read_bytes(report, hw)
    for label, off, size in buffer_pieces(report):
        if label.split("[")[0] in staged:
            unread = [s for s in _segments(off, off + size, reads, 256) if s[2] == "none"]
            assert not unread, (label, unread[:3])
