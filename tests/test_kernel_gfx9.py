"""``wgpsim kernel`` on gfx942 and gfx950 compiles (issue 27): the module's ``ttg.target`` picks
the packaged hardware file (``--hw`` overrides it), the loop timing runs on wave64 traces, and
a chip with one LDS partition gets no partition what-if. The fixtures are Triton 3.9.0 compiles
(``tests/corpus_others/gfx950``, ``gfx942``); every check of every fixture is in
``tests/test_corpus_others.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wgpsim.cli import main

ROOT = Path(__file__).resolve().parent / "corpus_others"


def _kernel(capsys, *argv) -> dict:
    code = main(["kernel", *map(str, argv), "--loop-timing", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("target", ["gfx950", "gfx942"])
def test_the_module_target_picks_the_hardware_and_no_partition_what_if(capsys, target):
    fixture = ROOT / target / "fixtures" / "tutorial_softmax"
    doc = _kernel(capsys, fixture / "kernel.ttgir")
    assert doc["target"] == f"hip:{target}"
    expected = json.loads((fixture / "expected.json").read_text())
    assert doc["lds_bytes"] == expected["ttg_shared"] == 32  # the compile's ttg.shared
    loop = doc["loop_timing"]
    assert set(loop["what_ifs"]) == {"ideal_banks", "no_lds"}
    # wave64: the reduction's scratch is read by 8 warps of 64 lanes
    assert loop["num_warps"] == 8 and loop["cycles_per_iteration"] > 0


def test_mi450_keeps_its_partition_what_if(capsys):
    doc = _kernel(capsys, ROOT / "fixtures" / "tutorial_softmax" / "kernel.ttgir")
    assert "separate_partitions" in doc["loop_timing"]["what_ifs"]


def test_hw_overrides_the_module_target(capsys):
    """``--hw`` wins over ``ttg.target``: the gfx950 compile read on gfx942's file uses gfx942's
    32 banks for every instruction (gfx950 reads 64 banks wide with ds_read_b128)."""
    path = ROOT / "gfx950" / "fixtures" / "tutorial_matmul_fp16" / "kernel.ttgir"
    own = _kernel(capsys, path)
    other = _kernel(capsys, path, "--hw", "wgpsim/hw/gfx942.yaml")
    assert (
        own["loop_timing"]["cycles_per_iteration"] != other["loop_timing"]["cycles_per_iteration"]
    )


def test_a_target_without_a_hardware_file_is_one_line(capsys, tmp_path):
    text = (ROOT / "gfx942" / "fixtures" / "tutorial_softmax" / "kernel.ttgir").read_text()
    path = tmp_path / "k.ttgir"
    path.write_text(text.replace('"hip:gfx942"', '"hip:gfx90a"'))
    code = main(["kernel", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "hip:gfx90a" in err and "no hardware file" in err
    assert len(err.strip().splitlines()) == 1
