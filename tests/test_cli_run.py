"""``wgpsim run``: the seed's table from the shipped config, files, errors, atomic writes."""

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_lds_bandwidth import SEED

from wgpsim.cli import main

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "lds_bandwidth.yaml"
FAST = ["--set", "burst_lengths=[4, 16, 32]"]


def _run(capsys, *argv):
    code = main(["run", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """The shipped config, as a user runs it (module-scoped: the full sweep runs once)."""
    import contextlib
    import io
    import os

    out_dir = tmp_path_factory.mktemp("lds")
    stdout = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(stdout):
            code = main(["run", "configs/lds_bandwidth.yaml", "--json", "--out", str(out_dir)])
    finally:
        os.chdir(cwd)
    return code, json.loads(stdout.getvalue()), out_dir


def test_json_rows_match_the_seed(full_run):
    code, rows, _ = full_run
    assert code == 0
    assert [r["layout"] for r in rows] == ["plain", "partitioned"]
    assert set(rows[0]) == {
        "layout",
        "cycles",
        "lds_bytes",
        "raw_bytes_per_cycle",
        "steady_bytes_per_cycle",
        "peak_bytes_per_cycle",
        "fixed_cycles",
        "r_squared",
        "speedup",
        "bank_conflict_cycles",
        "bank_conflict_rate",
    }
    plain, part = rows
    for row, (cycles, lds, raw, steady, peak) in [
        (plain, SEED["plain"]),
        (part, SEED["partitioned"]),
    ]:
        assert row["cycles"] == pytest.approx(cycles, rel=0.01)
        assert row["lds_bytes"] == lds
        assert row["raw_bytes_per_cycle"] == pytest.approx(raw, rel=0.01)
        assert row["steady_bytes_per_cycle"] == pytest.approx(steady, rel=0.01)
        assert row["peak_bytes_per_cycle"] == peak
    assert part["speedup"] == pytest.approx(1.65, abs=0.02)
    assert abs(plain["fixed_cycles"] - part["fixed_cycles"]) <= 2


def test_files_written(full_run):
    _, rows, out_dir = full_run
    names = sorted(p.name for p in out_dir.iterdir())
    assert names == [
        "bandwidth_vs_burst.png",
        "checkpoint.jsonl",
        "fit.csv",
        "results.csv",
        "sweep.csv",
    ]
    results = pd.read_csv(out_dir / "results.csv")
    assert results["cycles"].tolist() == [r["cycles"] for r in rows]
    sweep = pd.read_csv(out_dir / "sweep.csv")
    assert {
        "layout",
        "burst",
        "bytes",
        "cycles",
        "raw_bytes_per_cycle",
        "partition_conflict_cycles",
        "bank_conflict_cycles",
    } <= set(sweep.columns)
    assert (out_dir / "bandwidth_vs_burst.png").read_bytes()[:4] == b"\x89PNG"


def test_rich_table_parquet_and_default_out_dir(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "160")
    code, out, err = _run(capsys, CONFIG, "--parquet", *FAST)
    assert code == 0, err
    assert "steady B/cycle" in out and "64 KiB" in out and "96 KiB" in out
    out_dir = tmp_path / "results" / "lds_bandwidth"
    assert (out_dir / "results.parquet").is_file() and (out_dir / "sweep.parquet").is_file()
    assert pd.read_parquet(out_dir / "sweep.parquet")["burst"].unique().tolist() == [4, 16, 32]


def test_set_and_hw_change_the_model(capsys, tmp_path):
    from test_lds_bandwidth import narrow_ports

    from wgpsim.hw import load_hardware

    narrow = narrow_ports(128)
    hw = load_hardware(ROOT / "configs" / "mi450.yaml").with_overrides(**narrow)
    (tmp_path / "narrow.yaml").write_text(yaml.safe_dump(hw.to_dict()))
    runs = {}
    for name, extra in {
        "hw": ["--hw", tmp_path / "narrow.yaml"],
        "set": ["--set", "hardware_overrides=" + yaml.safe_dump(narrow, default_flow_style=True)],
    }.items():
        code, out, err = _run(capsys, CONFIG, "--json", "--out", tmp_path / name, *FAST, *extra)
        assert code == 0, err
        runs[name] = {r["layout"]: r for r in json.loads(out)}
    for rows in runs.values():
        assert rows["plain"]["steady_bytes_per_cycle"] == pytest.approx(128, rel=0.02)
        assert rows["partitioned"]["steady_bytes_per_cycle"] == pytest.approx(256, rel=0.02)
    assert runs["hw"] == runs["set"]


def _bad_config(tmp_path, **changes):
    raw = yaml.safe_load(CONFIG.read_text())
    raw["hardware"] = str(CONFIG.parent / raw["hardware"])
    raw.update(changes)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            {"burst_lenghts": [1, 2]},
            "field 'burst_lenghts': unknown field; did you mean 'burst_lengths'?",
        ),
        ({"kind": "lds_bandwith"}, "field 'kind': unknown kind 'lds_bandwith'"),
        ({"burst_lengths": [1, 512], "report_burst": 512}, "does not fit in the LDS"),
        ({"layouts": {"x": "#ttg.nonsense<{}>"}}, "field 'layouts.x': "),
    ],
)
def test_bad_config_is_one_line_exit_2_and_writes_nothing(capsys, tmp_path, changes, message):
    path = _bad_config(tmp_path, **changes)
    out_dir = tmp_path / "out"
    code, out, err = _run(capsys, path, "--out", out_dir)
    assert code == 2
    assert out == ""
    lines = err.splitlines()  # one line per problem: both candidates are too big at 512
    assert len(lines) == (2 if message == "does not fit in the LDS" else 1), err
    assert all(line.startswith(f"wgpsim: error: {path}: ") for line in lines), err
    assert message in err
    assert not out_dir.exists()


def test_bad_set_and_missing_files(capsys, tmp_path):
    code, _, err = _run(capsys, CONFIG, "--out", tmp_path / "o", "--set", "warps")
    assert code == 2 and "--set 'warps': expected key=value" in err
    code, _, err = _run(capsys, tmp_path / "nope.yaml")
    assert code == 2 and "nope.yaml: no such file" in err
    code, _, err = _run(capsys, CONFIG, "--hw", tmp_path / "nohw.yaml")
    assert code == 2 and "nohw.yaml: no such hardware file" in err
    assert not (tmp_path / "o").exists()


def test_interrupted_write_leaves_no_half_written_file(capsys, tmp_path, monkeypatch):
    import wgpsim.plots.bandwidth as plots

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(plots, "bandwidth_vs_burst", interrupted)
    out_dir = tmp_path / "out"
    code, _, err = _run(capsys, CONFIG, "--out", out_dir, *FAST)
    assert code == 130 and "interrupted" in err
    # No result of a run that did not finish is in the directory: only its stage's checkpoint,
    # kept for --resume, which then writes every file.
    assert [str(p.relative_to(out_dir)) for p in out_dir.rglob("*")] == [
        ".wgpsim-partial",
        ".wgpsim-partial/checkpoint.jsonl",
    ]
    monkeypatch.undo()
    code, _, err = _run(capsys, CONFIG, "--out", out_dir, "--resume", *FAST)
    assert code == 0, err
    names = sorted(p.name for p in out_dir.iterdir())
    assert names == [
        "bandwidth_vs_burst.png",
        "checkpoint.jsonl",
        "fit.csv",
        "results.csv",
        "sweep.csv",
    ]
    assert pd.read_csv(out_dir / "sweep.csv")["burst"].nunique() == 3


def test_progress_bar_on_a_terminal_only(capsys, tmp_path, monkeypatch):
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, _, err = _run(capsys, CONFIG, "--out", tmp_path / "a", *FAST)
    assert code == 0 and "lds_bandwidth:" in err and "/6 " in err
    code, _, err = _run(capsys, CONFIG, "--out", tmp_path / "b", "--json", *FAST)
    assert code == 0 and err == ""


def test_help_lists_the_options(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    for option in ("--out", "--json", "--parquet", "--hw", "--set", "--workers", "--scheduler"):
        assert option in out
    assert "--resume" in out


def test_resume_computes_only_the_missing_points(capsys, tmp_path, monkeypatch):
    import wgpsim.microbench.bandwidth as lds

    out_dir = tmp_path / "out"
    code, first, err = _run(capsys, CONFIG, "--json", "--out", out_dir, *FAST, "--workers", "1")
    assert code == 0, err
    sweep = (out_dir / "sweep.csv").read_text()
    checkpoint = out_dir / "checkpoint.jsonl"
    lines = checkpoint.read_text().splitlines()
    assert len(lines) == 6  # 2 layouts x 3 bursts, one line per finished point
    checkpoint.write_text("\n".join(lines[:2]) + "\n" + lines[2][:10])  # interrupted mid-line
    (out_dir / "sweep.csv").unlink()

    ran = []
    real = lds.measure_point
    monkeypatch.setattr(lds, "measure_point", lambda cfg, p: ran.append(p) or real(cfg, p))
    code, again, err = _run(capsys, CONFIG, "--json", "--out", out_dir, *FAST, "--resume")
    assert code == 0, err
    assert again == first and (out_dir / "sweep.csv").read_text() == sweep
    assert len(ran) == 4
    # Without --resume everything runs again.
    ran.clear()
    code, _, err = _run(capsys, CONFIG, "--json", "--out", out_dir, *FAST)
    assert code == 0 and len(ran) == 6


def test_workers_and_scheduler_errors(capsys, tmp_path):
    # how quickly it gives up is measured by benchmarks/response_times.py, not asserted here
    out_dir = tmp_path / "out"
    code, out, err = _run(capsys, CONFIG, "--out", out_dir, "--scheduler", "tcp://127.0.0.1:1")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("wgpsim: error: scheduler tcp://127.0.0.1:1: cannot connect within")
    code, _, err = _run(capsys, CONFIG, "--out", out_dir, "--scheduler", "nohost")
    assert code == 2 and "scheduler nohost: not an address" in err and err.count("\n") == 1
    code, _, err = _run(capsys, CONFIG, "--out", out_dir, "--set", "execution.workers=0")
    assert code == 2 and "--set execution.workers: 0 is out of range" in err
    assert not out_dir.exists()
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(CONFIG), "--workers", "0"])
    assert exit_.value.code == 2 and "--workers: '0': expected a whole number >= 1" in (
        capsys.readouterr().err
    )


def test_workers_do_not_change_the_results(capsys, tmp_path):
    rows = {}
    for workers in ("1", "2"):
        out_dir = tmp_path / workers
        code, out, err = _run(
            capsys, CONFIG, "--json", "--out", out_dir, *FAST, "--workers", workers
        )
        assert code == 0, err
        rows[workers] = (json.loads(out), (out_dir / "sweep.csv").read_text())
    assert rows["1"] == rows["2"]


@pytest.mark.parametrize("config", ["gemm_128x128.yaml", "lds_bandwidth.yaml"])
def test_tables_keep_every_column_at_80_columns(config, tmp_path):
    """COLUMNS=80: the table splits into column groups (the key column repeated); every column
    header and every candidate stays visible and no line is wider than 80."""
    import os
    import subprocess
    import sys

    from wgpsim.experiments import run_experiment

    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "wgpsim", "run", str(ROOT / "configs" / config), "--out", "o"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    ).stdout
    table = out.split("\nwrote ")[0]
    assert max(len(line) for line in table.splitlines()) <= 80
    display = run_experiment(ROOT / "configs" / config).display
    long = [c for c in display.columns if display[c].map(lambda v: len(str(v))).max() > 40]
    for column in display.columns:
        assert (f"{column}:" if column in long else column) in table, column
    for key in display.iloc[:, 0]:
        assert key in table
