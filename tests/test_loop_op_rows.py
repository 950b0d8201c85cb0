"""Each row of a kernel's loop table belongs to one op of its report (``KernelFigures.loop_op``),
so the HTML ops table's ``exposed/iter`` and ``wgpsim diff``'s per-op loop columns are filled."""

from pathlib import Path

from wgpsim.kernel.diff import diff_figures
from wgpsim.kernel.figures import kernel_figures

MATMUL = Path(__file__).resolve().parents[1] / "examples" / "kernels" / "matmul"


def test_every_loop_row_is_found_from_its_report_op():
    # examples/kernels/matmul: a Triton matmul whose loop holds two local_store (no SSA name,
    # labelled by kind and index) and two named local_load
    fig = kernel_figures(MATMUL, suggest=False)
    found = [fig.loop_op(op) for op in fig.report.ops]
    rows = [r["op"] for r in fig.loop["ops"]]
    assert sorted(r["op"] for r in found if r is not None) == sorted(rows)
    assert len(rows) == 4


def test_diff_fills_the_per_op_exposed_cycles():
    fig = kernel_figures(MATMUL, suggest=False)
    exposed = [row["figures"]["exposed"]["old"] for row in diff_figures(fig, fig).ops]
    assert sum(e is not None for e in exposed) == 4
