"""The HTML pages without a browser: a kernel whose Python source cannot be found still lists
its lines with their LDS ops; the source shown is the file's own text at the op's line (the
location Triton wrote into the shipped compile); values are escaped."""

from __future__ import annotations

import shutil
from pathlib import Path

from wgpsim.html.kernel_page import kernel_page
from wgpsim.html.page import table
from wgpsim.kernel.figures import kernel_figures

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "kernels"


def test_source_lines_are_the_files_own_text():
    fig = kernel_figures(EXAMPLES / "gemm_tdm_standard", loop=False, suggest=False)
    page = kernel_page(fig)
    text = (EXAMPLES / "kernels.py").read_text().splitlines()
    for op in fig.report.ops:
        line = int(op["loc"].split(":")[1])
        assert f'<span class="lds">{line:5d}  ' in page
        shown = text[line - 1].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert shown.replace('"', "&quot;").replace("'", "&#x27;") in page


def test_a_kernel_without_its_source_lists_the_lines(tmp_path, monkeypatch):
    shutil.copytree(EXAMPLES / "gemm_tdm_standard", tmp_path / "entry")
    monkeypatch.chdir(tmp_path)  # examples/kernels/kernels.py is not reachable from here
    page = kernel_page(kernel_figures(tmp_path / "entry", loop=False, suggest=False))
    assert "cannot be read here: the lines only" in page
    assert "<td>75</td>" not in page and '<td class="num">75</td>' in page  # line 75's row
    assert "16 x ds_load_b128" in page


def test_values_are_escaped():
    assert "&lt;script&gt;" in table(("x",), [("<script>",)])
    assert "<script>" not in table(("x",), [("<script>",)])


def test_the_op_table_marks_each_instruction_with_its_groupings_source():
    """As the text report does: ``[d]`` after a grouping a document states, ``[a]`` after an
    assumed one, and the legend saying so under the table."""
    fig = kernel_figures(EXAMPLES / "matmul", loop=False, suggest=False)
    page = kernel_page(fig)
    for op in fig.report.ops:
        for name, kind in op["grouping_sources"].items():
            mark = {"document": "[d]", "assumption": "[a]", "measured": "[m]"}.get(kind, "")
            assert f"{op['instructions'][name]} x {name}{mark}" in page
    assert "[d] stated by a document or vendor source" in page
