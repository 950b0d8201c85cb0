"""``wgpsim kernel ROOT --all`` and ``wgpsim diff`` on a cache root mixing chips (review 2, #2):
each kernel is simulated on its own ``ttg.target``'s hardware file, as a one-kernel report is;
``--target`` names one file for all and a note names the kernels compiled for another chip; an
unreadable kernel makes the exit status 1 (a CI gate must not pass silently). The kernels are
Triton 3.9.0 compiles: ``tests/corpus_others/{gfx950,gfx942}`` (wave64) and
``examples/kernels/matmul`` (gfx1250, wave32)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wgpsim.cli import main

TESTS = Path(__file__).resolve().parent
SOFTMAX = "corpus_others/{}/fixtures/tutorial_softmax/kernel.ttgir"
MATMUL = TESTS.parent / "examples" / "kernels" / "matmul"


@pytest.fixture
def root(tmp_path) -> Path:
    for target in ("gfx950", "gfx942"):
        (tmp_path / "a" / f"H_{target}").mkdir(parents=True)
        shutil.copy(TESTS / SOFTMAX.format(target), tmp_path / "a" / f"H_{target}" / "sm.ttgir")
    shutil.copytree(MATMUL, tmp_path / "a" / "H_mm")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    return tmp_path


def _run(capsys, *argv) -> tuple[int, str]:
    code = main([*map(str, argv)])
    return code, capsys.readouterr().out


def test_all_reads_each_kernel_on_its_own_target(root, capsys):
    code, out = _run(capsys, "kernel", root / "a", "--all", "--json")
    rows = json.loads(out)["kernels"]
    assert code == 0 and all(r["error"] is None for r in rows)
    assert sorted(r["target"] for r in rows) == ["hip:gfx1250", "hip:gfx942", "hip:gfx950"]


def test_all_with_target_names_the_foreign_kernels_and_fails_on_unreadable(root, capsys):
    code, out = _run(capsys, "kernel", root / "a", "--all", "--target", "gfx950")
    assert code == 1  # the gfx1250 (wave32) matmul cannot be read on the wave64 file
    assert "1 unreadable (exit 1)" in out.splitlines()[0]
    (note,) = [line for line in out.splitlines() if line.startswith("note: simulated on gfx950")]
    assert "matmul (hip:gfx1250)" in note and "(hip:gfx942)" in note
    assert "(hip:gfx950)" not in note.split(":", 2)[2]


def test_diff_of_gfx9_roots_gates_on_their_own_targets(root, capsys):
    code, out = _run(capsys, "diff", root / "a", root / "b", "--fail-on", "exposed>+5%")
    assert code == 0 and "unreadable" not in out
    assert "no regression under exposed>+5%" in out


def test_diff_with_an_unreadable_kernel_exits_1(root, capsys):
    (root / "b" / "H_gfx942" / "sm.ttgir").write_text("module {\n")
    argv = ("diff", root / "a", root / "b", "--no-loop", "--fail-on", "lds_bytes>+0")
    code, out = _run(capsys, *argv)
    assert code == 1
    assert "FAILED: 1 input(s) unreadable, not compared (exit 1)" in out
    assert "no regression" not in out


def test_one_kernel_on_another_chips_file_says_so(capsys):
    """A gfx950 compile reported on gfx942's file (``--target``) says where it was compiled
    for; on its own target no note."""
    kernel = TESTS / SOFTMAX.format("gfx950")
    code, out = _run(capsys, "kernel", kernel, "--target", "gfx942")
    assert code == 0
    assert "note: compiled for hip:gfx950, simulated on gfx942's hardware file" in out
    code, out = _run(capsys, "kernel", kernel)
    assert code == 0 and "note: compiled for" not in out and "hardware: gfx950" in out


def test_one_kernel_on_a_file_of_another_wave_size_names_both(capsys):
    """A wave32 gfx1250 compile on gfx942's wave64 file: one line naming the kernel's target
    and lanes and the file's, exit 2 (it said "the trace has 32 lanes", of no trace the user
    gave)."""
    assert main(["kernel", str(MATMUL), "--target", "gfx942"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "matmul was compiled for hip:gfx1250 with 32 lanes per warp; gfx942's" in err
