"""``run``/``search`` with another chip's hardware, and ``run configs/*.yaml`` (review 2, #10 and
#15): the shipped configs are the AMD blog's MI450 experiments; on gfx950/gfx942 one that cannot
run there is one line naming the experiment and what the chip lacks, exit 2, nothing written
(gemm_128x128 once wrote a table of infeasible candidates with exit 0), and one that can (the
layout search) runs in the chip's terms; among several configs the hardware files kept in
configs/ are skipped with a note."""

from __future__ import annotations

from pathlib import Path

import pytest

from wgpsim.cli import main
from wgpsim.cli.run import experiment_configs

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize(
    ("config", "target", "lacks"),
    [("gemm_128x128", "gfx950", "32 lanes per warp"),
     ("lds_bandwidth", "gfx942", "more than the 65536 bytes of LDS")],
)  # fmt: skip
def test_an_mi450_experiment_that_cannot_run_is_one_line_and_exit_2(
    tmp_path, capsys, config, target, lacks
):
    out = tmp_path / "out"
    argv = ["run", str(CONFIGS / f"{config}.yaml"), "--target", target, "--out", str(out)]
    assert main([*argv, "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the AMD blog's MI450 experiment" in err[0]
    assert f"on {target} (hip:{target})" in err[0] and lacks in err[0]
    assert not out.exists()


def test_the_layout_search_config_runs_on_gfx942_in_its_terms(tmp_path, capsys):
    """The search runs on a gfx9 chip (amd_mfma, its own loads, no partitions); the config's
    MI450 reference candidates (WMMA ctaLayouts) are left out, and the first line says so."""
    out = tmp_path / "out"
    argv = ["run", str(CONFIGS / "layout_search.yaml"), "--target", "gfx942", "--out", str(out)]
    assert main([*argv, "--workers", "1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("gfx942 (hip:gfx942): wave64, amd_mfma") and "no transposed" in first
    assert "4 reference candidates are MI450 WMMA ctaLayouts: left out" in first
    assert (out / "winners.csv").is_file()


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
