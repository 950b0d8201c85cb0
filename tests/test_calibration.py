"""The calibration kit end to end without a device: measurements the model predicts with changed
constants, plus seeded noise, fit back to those constants within their standard errors; the
model compared with itself has no error; the CLI verbs and the runner's argument parsing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from wgpsim.calibration.compare import compare
from wgpsim.calibration.fit import fit_constants, predict
from wgpsim.calibration.measurements import read_measurements, write_measurements
from wgpsim.calibration.probes import catalogue, probe, read_manifest, write_manifest
from wgpsim.cli import main
from wgpsim.hw.config import HardwareConfig, load_hardware

ROOT = Path(__file__).resolve().parents[1]

#: the device the test pretends to have: the brief's changed constants
TRUTH = {
    "timing.lds_latency": 40,
    "timing.barrier_latency": 15,
    "passes.lane_grouping": "triton",
}
NOISE_CYCLES = 2.0  # standard deviation of the seeded Gaussian noise, rounded to whole cycles
REPEATS = 3


@pytest.fixture(scope="module")
def noisy():
    """Three noisy runs of every probe on the TRUTH device (seeded)."""
    frame = predict(catalogue(), load_hardware().with_overrides(**TRUTH))
    frame = frame.loc[frame.index.repeat(REPEATS)].reset_index(drop=True)
    noise = np.random.default_rng(17).normal(0, NOISE_CYCLES, len(frame)).round()
    frame["cycles"] = np.maximum(frame["cycles"] + noise, 0).astype(int)
    return frame


@pytest.fixture(scope="module")
def fitted(noisy):
    return fit_constants(noisy, catalogue())


def test_round_trip_recovers_the_changed_constants(fitted):
    c = fitted.constants
    for key, truth in (("timing.lds_latency", 40), ("timing.barrier_latency", 15)):
        const = c[key]
        assert const.identified and const.stderr > 0
        # within two standard errors (a 95 % band: the noise is seeded, so this is fixed)
        assert abs(const.value - truth) <= 2 * const.stderr, (key, const.value, const.stderr)
        assert const.written == truth
    clock = c["timing.clock_latency"]  # unchanged from the shipped 4
    assert abs(clock.value - 4) <= 2 * clock.stderr and clock.written == 4
    grouping = c["passes.lane_grouping"]
    assert grouping.written == "triton" and grouping.previous == "blog"
    assert dict(grouping.rss)["blog"] > 100 * dict(grouping.rss)["triton"]
    assert c["banks.count"].written == 64
    interval = c["timing.issue_interval"]  # the issue probes: 92 cycles at 1, 123 at 2 (x64)
    assert interval.identified and interval.written == 1 and "issue" in interval.families
    # the residuals are the noise: their RMS is the noise's standard deviation (2 cycles, the
    # rounding adds 1/12), and sigma estimates it
    assert 1.7 < fitted.sigma < 2.4
    assert (fitted.families["rms_residual"] < 3).all()


def test_constants_the_probes_cannot_separate_are_left_alone():
    """The bandwidth sweep alone sees only clock + lds + barrier latency as one sum."""
    probes = [p for p in catalogue() if p.family == "bandwidth"]
    truth = load_hardware().with_overrides(**{"timing.lds_latency": 40})
    fit = fit_constants(predict(probes, truth), probes, discrete=())
    for key in ("timing.lds_latency", "timing.barrier_latency", "timing.clock_latency"):
        assert not fit.constants[key].identified
        assert fit.constants[key].written == load_hardware().timing.__dict__[key.split(".")[1]]


def test_port_rate_is_the_blogs(fitted):
    """The shipped model's plain sweep at 4 warps streams at 256 B/cycle, partitioned 512
    (the AMD blog's table: 255.4 and 509.8 measured); here under the triton grouping, whose
    b128 halves conflict on contiguous rows, the plain sweep halves to 128."""
    rates = load_hardware()
    fit = fit_constants(predict(catalogue(), rates), catalogue(), discrete=())
    row = fit.port_rates.set_index(["layout", "warps"])
    assert row.loc[("plain", 4), "rate"] == pytest.approx(256, rel=1e-6)
    assert row.loc[("partitioned", 4), "rate"] == pytest.approx(512, rel=1e-6)
    noisy_rates = fitted.port_rates.set_index(["layout", "warps"])
    assert noisy_rates.loc[("plain", 4), "model_rate"] == pytest.approx(128, rel=1e-6)


def test_compare_of_the_model_with_itself_has_no_error():
    per_probe, per_family = compare(predict(catalogue()), catalogue())
    assert len(per_probe) == len(catalogue())
    assert (per_probe["ratio"] == 1.0).all() and (per_family["mape_percent"] == 0.0).all()


def test_compare_sees_a_changed_latency():
    measured = predict(
        [probe("round_trip_b64_x1")], load_hardware().with_overrides(**{"timing.lds_latency": 40})
    )
    per_probe, _ = compare(measured, [probe("round_trip_b64_x1")])
    # model 4 + 1 + 56 = 61 against 4 + 1 + 40 = 45: 16 / 45 = 35.6 %
    assert per_probe["simulated"][0] == 61 and per_probe["measured"][0] == 45
    assert per_probe["error_percent"][0] == pytest.approx(100 * 16 / 45)


def test_cli_probes_predict_fit_compare(tmp_path, noisy, capsys):
    kit = tmp_path / "kit"
    assert main(["calibrate", "probes", "--out", str(kit)]) == 0
    assert len(list((kit / "probes").glob("*.py"))) == len(catalogue())
    assert read_manifest(kit / "manifest.json") == catalogue()
    write_measurements(noisy, kit / "measurements.csv")
    capsys.readouterr()
    out = tmp_path / "fitted.yaml"
    code = main(
        [
            "calibrate",
            "fit",
            str(kit / "measurements.csv"),
            "--manifest",
            str(kit / "manifest.json"),
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["constants"]["timing.lds_latency"]["written"] == 40
    hw = HardwareConfig.from_yaml(out)
    assert (hw.timing.lds_latency, hw.timing.barrier_latency) == (40, 15)
    assert hw.passes.lane_grouping == "triton"
    text = out.read_text()
    assert "# fit: bandwidth, round_trip" in text and "measurements: 40." in text
    predicted = tmp_path / "predicted.csv"
    assert main(["calibrate", "predict", str(kit), "--hw", str(out), "--out", str(predicted)]) == 0
    capsys.readouterr()
    assert (
        main(
            [
                "compare",
                str(predicted),
                "--manifest",
                str(kit / "manifest.json"),
                "--hw",
                str(out),
                "--json",
                "--figure",
                str(tmp_path / "c.png"),
            ]
        )
        == 0
    )
    tables = json.loads(capsys.readouterr().out)
    assert all(f["mape_percent"] == 0 for f in tables["families"])
    assert (tmp_path / "c.png").stat().st_size > 1000


@pytest.mark.parametrize(
    "content, message",
    [
        ("probe,warp\nx,0\n", "missing column 'cycles'"),
        ("probe,warp,cycles\nbanks_s4,0,-3\n", "row 2 column 'cycles'"),
        ("probe,warp,cycles\nbank_s4,0,60\n", "not in the manifest (did you mean 'banks_s4'?)"),
        ("probe,warp,cycles\nbanks_s4,3,60\n", "has 1 warps, row 2 names warp 3"),
    ],
)
def test_bad_measurements_are_one_line(tmp_path, capsys, content, message):
    write_manifest(catalogue(), tmp_path / "manifest.json")
    (tmp_path / "m.csv").write_text(content)
    assert main(["compare", str(tmp_path / "m.csv")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_bad_manifest_is_one_line(tmp_path, capsys):
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {
                "version": 1,
                "probes": [
                    {
                        "name": "banks_s4",
                        "family": "banks",
                        "warps": 1,
                        "params": {"stride": 8, "loads": 4},
                    }
                ],
            }
        )
    )
    (tmp_path / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    assert main(["compare", str(tmp_path / "m.csv")]) == 2
    assert "parameters differ" in capsys.readouterr().err


def test_runner_imports_and_parses_without_a_gpu(tmp_path):
    """run_probes.py is the standard library until it launches: --list works anywhere."""
    assert main(["calibrate", "probes", "--out", str(tmp_path), "--family", "banks"]) == 0
    done = subprocess.run(
        [sys.executable, str(tmp_path / "run_probes.py"), "--list"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("banks_s") == 8
    bad = subprocess.run(
        [sys.executable, str(tmp_path / "run_probes.py"), "--repeats", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "--repeats must be >= 1" in bad.stderr
    # issue 25: without torch, one line saying what to install, not a ModuleNotFoundError
    script = str(tmp_path / "run_probes.py")
    no_torch = subprocess.run(
        [
            sys.executable,
            "-c",
            "import runpy, sys; sys.modules['torch'] = None; "
            f"sys.argv = [{script!r}]; runpy.run_path({script!r}, run_name='__main__')",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert no_torch.returncode == 2, no_torch.stderr
    assert no_torch.stderr.count("\n") == 1 and "Traceback" not in no_torch.stderr
    assert no_torch.stderr.startswith("run_probes: torch: not installed; install PyTorch")
    from wgpsim.calibration import probe_runner

    args = probe_runner.parse_args(["--dir", str(tmp_path), "--probe", "banks_s4"])
    records = probe_runner.selected(probe_runner.read_manifest(args.dir), args.probe)
    assert [r["name"] for r in records] == ["banks_s4"]


def test_measurements_round_trip(tmp_path):
    frame = predict([probe("barrier_w4_x1")])
    write_measurements(frame, tmp_path / "m.csv")
    back = read_measurements(tmp_path / "m.csv")
    # barrier: clock_latency + one barrier_latency = 4 + 7 = 11 per warp (shipped config)
    assert back["cycles"].tolist() == [11, 11, 11, 11]


def test_bandwidth_probes_are_the_experiments_microbenchmark():
    """The bandwidth probes' traces (bases fixed by the probes: 0 and the partition size) time
    as the lds_bandwidth experiment does, whose buffers the allocator places (4 warps: 75, 131,
    323 plain and 71, 99, 195 partitioned at bursts 1, 8, 32)."""
    from wgpsim.experiments import run_experiment

    result = run_experiment(
        ROOT / "configs" / "lds_bandwidth.yaml",
        overrides=["burst_lengths=[1, 8, 32]", "report_burst=32"],
    )
    sweep = result.tables["sweep"]
    expected = {(r.layout, r.burst): r.cycles for r in sweep.itertuples()}
    probes = [probe(f"bandwidth_{layout}_w4_b{burst}") for layout, burst in expected]
    got = predict(probes).groupby("probe")["cycles"].max()
    assert {(p.param("layout"), p.param("burst")): got[p.name] for p in probes} == expected
    assert expected[("plain", 32)] == 323 and expected[("partitioned", 32)] == 195


@pytest.mark.parametrize(
    "argv, message",
    [
        (["calibrate", "probes", "--out", "{tmp}/kit", "--family", "bank"], "--family bank"),
        (
            ["calibrate", "fit", "{tmp}/m.csv", "--manifest", "{tmp}/none.json"],
            "none.json: no such manifest",
        ),
        (["calibrate", "predict", "{tmp}", "--out", "{tmp}/p.csv"], "no such manifest"),
        (["compare", "{tmp}/m.csv", "--figure", "{tmp}/c.gif"], "must end in .png"),
        (
            [
                "calibrate",
                "fit",
                "{tmp}/m.csv",
                "--manifest",
                "{tmp}/kit.json",
                "--out",
                "{tmp}/f.yaml",
                "--set",
                "timing.queue_depth=2",
            ],
            "put the change in that file",
        ),
        (["compare", "{tmp}/bad.json", "--manifest", "{tmp}/kit.json"], "bad.json: not valid JSON"),
    ],
)
def test_bad_arguments_are_one_line(tmp_path, capsys, argv, message):
    (tmp_path / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    (tmp_path / "bad.json").write_text("{not json")
    write_manifest(catalogue(), tmp_path / "kit.json")
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_fit_and_compare_say_what_their_percentages_are_of(tmp_path, noisy, capsys):
    """Issue 25: `calibrate fit` and `compare` printed different percentages for one family
    without saying why: the fit's is over every measurement against the fitted constants, the
    compare's over probe medians against the hardware file given; each output says which."""
    kit = tmp_path / "kit"
    assert main(["calibrate", "probes", "--out", str(kit)]) == 0
    write_measurements(noisy, kit / "measurements.csv")
    fitted_yaml = tmp_path / "fitted.yaml"
    m, manifest = str(kit / "measurements.csv"), str(kit / "manifest.json")
    capsys.readouterr()
    assert main(["calibrate", "fit", m, "--manifest", manifest, "--out", str(fitted_yaml)]) == 0
    fit_text = capsys.readouterr().out
    assert "per family, against the FITTED constants" in fit_text
    assert (
        "mean over every measurement, each warp of each run, of |residual| / measured" in fit_text
    )
    assert main(["compare", m, "--manifest", manifest, "--hw", str(fitted_yaml)]) == 0
    compare_text = capsys.readouterr().out
    assert f"per family, against {fitted_yaml} (mape_percent: mean over probes" in compare_text
    assert "each probe's median span" in compare_text
    # the two measures differ on noisy data (medians remove most of the noise)
    families = {}
    for text, key in ((fit_text, "fit"), (compare_text, "compare")):
        table = text.split("per family, against", 1)[1].splitlines()[2:]
        for line in table:
            parts = line.split()
            if parts and parts[0] == "barrier":
                families[key] = float(parts[-1])
    assert families["fit"] != families["compare"]
