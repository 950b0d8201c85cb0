"""Reports name the chip they simulated (review 2, #7 and #8): the text report's header names
the hardware file, a gfx942 kernel's HTML page says gfx942, a chip without transposed loads
says so (not "turned off"), gfx9's LDS wait is spelled as its assembly spells it, a chip with
one LDS partition shows no SIMD-pair partition columns, and ``wgpsim lower --target gfx942``
never chooses an instruction gfx942 lacks. The kernel is a Triton 3.9.0 gfx942 compile
(``tests/corpus_others/gfx942``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wgpsim.cli import main

TESTS = Path(__file__).resolve().parent
GEMM942 = TESTS / "corpus_others" / "gfx942" / "fixtures" / "tutorial_grouped_gemm" / "kernel.ttgir"
MATMUL = TESTS.parent / "examples" / "kernels" / "matmul"


def _out(capsys, *argv) -> str:
    assert main([*map(str, argv)]) == 0
    return capsys.readouterr().out


def test_gfx942_text_report_names_its_hardware_and_hides_partitions(capsys):
    lines = _out(capsys, "kernel", GEMM942, "--loop-timing").splitlines()
    assert lines[1].startswith("hardware: gfx942 (hip:gfx942), ") and "gfx942.yaml" in lines[1]
    assert "partitions A|B" not in lines[2] and "coloc" not in lines[2]
    assert "ds_load_tr (the transposed load): absent: none on this chip" in lines
    assert any(line.startswith("wait_ds: cycles in s_waitcnt lgkmcnt(N)") for line in lines)
    assert not any("partition stall" in line for line in lines)


def test_mi450_keeps_its_partition_columns(capsys):
    lines = _out(capsys, "kernel", MATMUL).splitlines()
    assert lines[1].startswith("hardware: mi450 (hip:gfx1250), ")
    assert "partitions A|B" in lines[2] and "stall" in lines[2]


def test_json_model_spells_the_wait_of_the_chip(capsys):
    doc = json.loads(_out(capsys, "kernel", GEMM942, "--json"))
    assert "s_waitcnt lgkmcnt(0)" in doc["model"] and "s_wait_dscnt" not in doc["model"]


def test_html_page_names_the_chip(tmp_path, capsys):
    page = tmp_path / "r.html"
    _out(capsys, "kernel", GEMM942, "--html", page)
    text = page.read_text()
    assert "(gfx942)" in text and "MI450" not in text and "gfx1250" not in text


def test_help_says_the_module_target_is_the_default(capsys):
    for verb in ("kernel", "diff"):
        with pytest.raises(SystemExit):
            main([verb, "--help"])
        out = " ".join(capsys.readouterr().out.split())  # argparse wraps the help
        assert "(default: the module's target (else configs/mi450.yaml))" in out


B16 = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
MFMA_B = ("#ttg.dot_op<{opIdx = 1, parent = #ttg.amd_mfma<{version = 4, warpsPerCTA = [4, 1], "
          "instrShape = [32, 32, 16], isTransposed = true}>, kWidth = 8}>")  # fmt: skip


@pytest.mark.parametrize(("target", "instruction"), [("gfx950", "ds_read_b64_tr_b16"),
                                                     ("gfx942", "ds_read_u16")])  # fmt: skip
def test_lower_uses_the_targets_instructions(capsys, target, instruction):
    argv = ["lower", "--shared", B16, "--dst", MFMA_B, "--shape", "64x128", "--dtype", "fp16"]
    doc = json.loads(_out(capsys, *argv, "--target", target, "--json", "--simulate"))
    assert list(doc["counts_per_warp"]) == [instruction]
    assert doc["eligibility"] == ("valid" if target == "gfx950" else "absent")
