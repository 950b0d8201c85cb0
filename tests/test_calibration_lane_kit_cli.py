"""The lane-pair kit (gfx942/gfx950) through the MI450 verbs: ``calibrate predict`` and
``calibrate fit`` refuse it in one line naming ``calibrate lanes`` (they crashed with an
AttributeError: the MI450 span model has no trace for a lane-pair probe); ``calibrate lanes``
without data says to run run_probes.py on the device; ``compare --figure`` draws the measured
and simulated extra cycles of the fixture device (gfx950's published phases)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from wgpsim.cli import main
from wgpsim.packaged import hardware_path

FIXTURES = Path(__file__).parent / "fixtures" / "calibration"


@pytest.fixture
def kit(tmp_path: Path) -> Path:
    kit = tmp_path / "kit950"
    shutil.copytree(FIXTURES / "gfx950_kit", kit)
    return kit


@pytest.mark.parametrize("verb", ["predict", "fit"])
def test_mi450_verbs_refuse_a_lane_pair_kit_in_one_line(kit, tmp_path, capsys, verb):
    shutil.copy(FIXTURES / "gfx950_measurements.csv", kit / "measurements.csv")
    if verb == "predict":
        argv = ["calibrate", "predict", str(kit), "--out", str(tmp_path / "p.csv")]
    else:
        argv = ["calibrate", "fit", str(kit / "measurements.csv"), "--manifest",
                str(kit / "manifest.json")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "gfx950 lane-pair kit" in err and f"wgpsim calibrate lanes {kit}" in err
    assert not (tmp_path / "p.csv").exists()


def test_lanes_without_measurements_says_run_the_probes_first(kit, capsys):
    assert main(["calibrate", "lanes", str(kit)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"run python {kit}/run_probes.py on the gfx950" in err


def test_runner_docstring_sends_lane_kits_to_calibrate_lanes():
    from wgpsim.calibration import probe_runner

    doc = probe_runner.__doc__
    assert "calibrate fit" in doc and "MI450 (gfx1250) kit only" in doc
    lanes = doc.index("wgpsim calibrate lanes DIR")
    assert lanes < doc.index("wgpsim calibrate fit DIR")


def test_compare_figure_of_a_lane_pair_kit(kit, tmp_path, capsys):
    if not hardware_path("gfx950").is_file():
        pytest.skip("no packaged gfx950 hardware file in this tree")
    shutil.copy(FIXTURES / "gfx950_measurements.csv", kit / "measurements.csv")
    counters = str(FIXTURES / "gfx950_counter_collection.csv")
    figure = tmp_path / "lanes.png"
    argv = ["compare", str(kit / "measurements.csv"), "--counters", counters, "--figure",
            str(figure)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"figure: {figure}" in out
    assert figure.stat().st_size > 10_000 and figure.read_bytes()[:4] == b"\x89PNG"
