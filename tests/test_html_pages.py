"""The HTML pages without a browser: a kernel whose Python source cannot be found still lists
its lines with their LDS ops; the source shown is the file's own text at the op's line (the
location Triton wrote into the shipped compile); values are escaped; the instructions carry
their grouping marks in the op table and the source annotations; a kernel compiled for another
chip says so in the text report's words; one LDS partition (gfx942/gfx950) shows no partition
columns, as the text report does."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from wgpsim.cli.kernel import format_report
from wgpsim.html.kernel_page import kernel_page
from wgpsim.html.page import esc, table
from wgpsim.hw.config import target_hardware
from wgpsim.hw.grouping_sources import instructions_text
from wgpsim.kernel.figures import kernel_figures

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "kernels"
OTHERS = ROOT / "tests" / "corpus_others"
SOFTMAX = str(OTHERS / "{}" / "fixtures" / "tutorial_softmax" / "kernel.ttgir")
PARTITION_HEADS = ("partition stall cycles", "partitions A|B", "pairs co-located")


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


def _annotations(page: str) -> list[str]:
    return re.findall(r'<span class="ann">   # ([^<]*)</span>', page)


def test_the_source_annotations_mark_each_instruction_as_the_op_table_does():
    """Each source line's annotation names its ops' instructions in `instructions_text`'s
    words (``16 x ds_load_b128[d]``), and the marks' legend follows the source."""
    fig = kernel_figures(EXAMPLES / "gemm_tdm_standard", loop=False, suggest=False)
    page = kernel_page(fig)
    notes = " ".join(_annotations(page))
    for op in fig.report.ops:
        assert esc(instructions_text(op)) in notes
    assert "16 x ds_load_b128[d]" in notes and "1 x tensor_load_to_lds[a]" in notes
    source = page[page.index('id="k-source"') : page.index('id="k-ops"')]
    assert "[d] stated by a document or vendor source" in source


def test_a_kernel_on_another_chips_file_says_so_in_the_text_reports_words():
    fig = kernel_figures(SOFTMAX.format("gfx950"), target_hardware("hip:gfx942"), loop=False)
    note = fig.report.foreign_note()
    assert note.startswith("note: compiled for hip:gfx950, simulated on gfx942's hardware file")
    assert f'<p class="note foreign">{esc(note)}</p>' in kernel_page(fig)
    assert note in format_report(fig.report).splitlines()
    own = kernel_figures(SOFTMAX.format("gfx950"), loop=False)
    assert own.report.foreign_note() is None
    assert 'class="note foreign"' not in kernel_page(own)


def test_one_lds_partition_shows_no_partition_columns():
    """gfx950 (one partition): the op table has none of the partition columns and no op
    draws the partitions its SIMD pairs touch; MI450 (five) has them all."""
    one = kernel_page(kernel_figures(SOFTMAX.format("gfx950"), loop=False, suggest=False))
    five = kernel_page(kernel_figures(EXAMPLES / "gemm_tdm_standard", loop=False, suggest=False))
    for head in PARTITION_HEADS:
        assert f"<th>{esc(head)}</th>" not in one
        assert f"<th>{esc(head)}</th>" in five
    assert "Partitions each SIMD pair touches" not in one
    assert "Partitions each SIMD pair touches" in five
    assert "One LDS partition on this chip: no partition conflicts" in one


def _loop_head(page: str) -> list[str]:
    (head,) = re.findall(r"<h3>Ops in the loop</h3><table[^>]*><thead><tr>(.*?)</tr>", page)
    return re.findall(r"<th>([^<]*)</th>", head)


def test_a_timed_loop_on_one_partition_has_no_partition_stall_column():
    mm = OTHERS / "gfx950" / "fixtures" / "flaggems_mm_bf16" / "kernel.ttgir"
    one = kernel_page(kernel_figures(mm, suggest=False))
    assert _loop_head(one) == [
        "op", "kind", "instr/iter", "exposed", "share %", "latency", "bank conflict"
    ]  # fmt: skip
    five = kernel_page(kernel_figures(EXAMPLES / "gemm_tdm_standard", suggest=False))
    assert _loop_head(five)[-2:] == ["bank conflict", "partition stall"]
