"""``run``/``search`` with another chip's hardware, and ``run configs/*.yaml`` (review 2, #10 and
#15): the shipped configs are the AMD blog's MI450 experiments, so on gfx950/gfx942 each is one
line naming the experiment and what the chip lacks, exit 2, nothing written (gemm_128x128 once
wrote a table of infeasible candidates with exit 0); among several configs the hardware files
kept in configs/ are skipped with a note."""

from __future__ import annotations

from pathlib import Path

import pytest

from wgpsim.cli import main
from wgpsim.cli.run import experiment_configs

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize(
    ("config", "lacks"),
    [("gemm_128x128", "32 lanes per warp"), ("layout_search", "does not have ds_load_b128"),
     ("lds_bandwidth", "more than the 163840 bytes of LDS")],
)  # fmt: skip
def test_an_mi450_experiment_on_gfx950_is_one_line_and_exit_2(tmp_path, capsys, config, lacks):
    out = tmp_path / "out"
    argv = ["run", str(CONFIGS / f"{config}.yaml"), "--target", "gfx950", "--out", str(out)]
    assert main([*argv, "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the AMD blog's MI450 experiment" in err[0]
    assert "on gfx950 (hip:gfx950)" in err[0] and lacks in err[0]
    assert not out.exists()


def test_search_on_gfx942_says_so(capsys):
    assert main(["search", str(CONFIGS / "layout_search.yaml"), "--target", "gfx942"]) == 2
    err = capsys.readouterr().err
    assert "MI450 experiment" in err and "gfx942 (hip:gfx942)" in err


def test_the_configs_folder_glob_skips_the_hardware_files(capsys):
    paths = sorted(CONFIGS.glob("*.yaml"))
    kept = experiment_configs(paths)
    assert {p.stem for p in kept} == {"gemm_128x128", "layout_search", "lds_bandwidth", "lds_drift"}
    notes = capsys.readouterr().err.splitlines()
    assert sorted(n.split("skipped ")[1].split(":")[0] for n in notes) == [
        str(CONFIGS / f"{n}.yaml") for n in ("gfx942", "gfx950", "mi450")
    ]


def test_hardware_files_alone_are_refused(capsys):
    assert main(["run", str(CONFIGS / "gfx950.yaml")]) == 2
    assert "this is a hardware file, not an experiment config: use --hw" in capsys.readouterr().err
    assert main(["run", str(CONFIGS / "gfx950.yaml"), str(CONFIGS / "mi450.yaml")]) == 2
    assert "no experiment config among the files given" in capsys.readouterr().err
