"""One regression case per defect of issue 15 (each found as a traceback, an echoed file, a
lost result or a trusted config), in the order the issue lists them."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli

from wgpsim.errors import ConfigError
from wgpsim.experiments import run_experiment
from wgpsim.sweeps.executor import SCHEDULER_ENV, run_points

ROOT = Path(__file__).resolve().parents[2]
LDS = ROOT / "configs" / "lds_bandwidth.yaml"
SMALL = ["--set", "burst_lengths=[4, 8]", "--set", "report_burst=8", "--workers", "1"]


# -- security ------------------------------------------------------------------------------------
def test_a_config_file_cannot_name_a_scheduler(tmp_path):
    config = tmp_path / "shared.yaml"
    config.write_text(LDS.read_text() + "\nexecution: {scheduler: 'tcp://127.0.0.1:8786'}\n")
    outcome = run_cli("run", config, "--out", tmp_path / "out")
    outcome.assert_one_line("field 'execution.scheduler'", "--scheduler", SCHEDULER_ENV)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match="cannot name a Dask scheduler"):
        run_experiment(LDS, overrides={"execution": {"scheduler": "tcp://h:1"}})


def test_the_scheduler_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(SCHEDULER_ENV, "nohost")
    outcome = run_cli("run", LDS, "--out", tmp_path / "out")
    outcome.assert_one_line("scheduler nohost: not an address")


def test_inproc_scheduler_is_refused_at_once():
    with pytest.raises(ConfigError, match="no scheduler of this process listens there"):
        run_points(abs, [1], scheduler="inproc://x")
    run_cli("run", LDS, "--scheduler", "inproc://127.0.0.1/1/1").assert_one_line("inproc://")


def test_an_error_never_prints_a_files_contents(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("password: hunter2-" + "x" * 200 + "\nsecond line of the file\n")
    trace = ROOT / "examples" / "traces" / "bank_conflict.jsonl"
    for argv in (
        ("replay", trace, "--hw", secret),
        ("run", LDS, "--hw", secret, "--out", tmp_path / "out"),
        ("run", secret, "--out", tmp_path / "out"),
    ):
        outcome = run_cli(*argv)
        outcome.assert_one_line(str(secret.name))
        assert "hunter2" not in outcome.err


# -- one line, exit 2, for every bad input -------------------------------------------------------
BLOCKED = (
    "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], "
    "order = [1, 0]}>"
)
SWIZZLED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
TRACE = ROOT / "examples" / "traces" / "bank_conflict.jsonl"


def test_deep_nesting_is_one_line(tmp_path):
    deep = "[" * 5000 + "]" * 5000
    run_cli(
        "layout", "show", f"#ttg.blocked<{{sizePerThread = {deep}}}>", "--shape", "4x4"
    ).assert_one_line("nested deeper than")
    config = tmp_path / "deep.yaml"
    config.write_text(f"kind: lds_bandwidth\nwarps: {deep}\n")
    run_cli("run", config, "--out", tmp_path / "out").assert_one_line("nested deeper than")
    trace = tmp_path / "deep.jsonl"
    trace.write_text(f'{{"warp": 0, "op": "ds_load_b128", "addr": {deep}}}\n')
    run_cli("replay", trace).assert_one_line("deep.jsonl:1", "nested too deeply")


def test_integers_of_thousands_of_digits(tmp_path):
    huge = "9" * 5000
    trace = tmp_path / "big.jsonl"
    trace.write_text(f'{{"warp": 0, "op": "delay", "cycles": {huge}}}\n')
    run_cli("replay", trace).assert_one_line("big.jsonl:1", "5000 digits")
    run_cli("replay", TRACE, "--set", f"timing.lds_latency={huge}").assert_one_line("5000 digits")
    run_cli("run", LDS, "--set", f"warps={huge}", "--out", tmp_path / "o").assert_one_line(
        "5000 digits"
    )
    blocked = BLOCKED.replace("[1, 8]", f"[1, {huge}]")
    run_cli("layout", "show", blocked, "--shape", "4x4").assert_one_line("5000 digits")


def test_a_config_that_is_not_utf8(tmp_path):
    config = tmp_path / "latin1.yaml"
    config.write_bytes("kind: lds_bandwidth\nname: caf\u00e9\n".encode("latin-1"))
    run_cli("run", config, "--out", tmp_path / "o").assert_one_line("not UTF-8", "offset")
    run_cli("replay", TRACE, "--hw", config).assert_one_line("not UTF-8")


def test_a_list_where_a_name_is_expected(tmp_path):
    run_cli("run", LDS, "--set", "kind=[a]", "--out", tmp_path / "o").assert_one_line(
        "--set kind: ", "['a']"
    )


def test_a_distributed_layout_as_a_shared_candidate(tmp_path):
    run_cli("run", LDS, "--set", f"layouts.bad={BLOCKED}", "--out", tmp_path / "o").assert_one_line(
        "layouts.bad must be a shared-memory layout, got blocked"
    )
    gemm = ROOT / "configs" / "gemm_128x128.yaml"
    run_cli(
        "run", gemm, "--set", f"candidates.standard.a={BLOCKED}", "--out", tmp_path / "o"
    ).assert_one_line("candidates.standard.a", "expected a shared-memory layout")


def test_ownership_by_simd_pair_on_the_readme_layout(tmp_path):
    readme = (
        "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], "
        "[8, 0], [16, 0]], warp = [], block = []}>"
    )  # one warp: only pair A owns elements, the legend still names both pairs
    out = tmp_path / "pairs.png"
    outcome = run_cli(
        "layout", "plot", "--layout", readme, "--shape", "32x8", "--by", "simd_pair", "--out", out
    )
    assert outcome.code == 0 and out.stat().st_size > 0


def test_a_closed_stdout(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "wgpsim", "replay", str(TRACE)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        close_fds=True,
        preexec_fn=lambda: __import__("os").close(1),
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "stdout is closed" in done.stderr


def test_corrupt_parquet_is_one_line(tmp_path):
    from wgpsim.trace.generate import streaming_trace
    from wgpsim.trace.io import write_trace

    good = write_trace(
        streaming_trace(2, 40, "ds_load_b128", [0, 8192], 16), tmp_path / "t.parquet"
    )
    data = bytearray(good.read_bytes())
    for name, damaged in {
        "garbage.parquet": b"not parquet at all\n",
        "cut.parquet": bytes(data[: len(data) // 2]),
        "flipped.parquet": bytes(data[:200])
        + bytes(b ^ 0xFF for b in data[200:400])
        + bytes(data[400:]),
    }.items():
        (tmp_path / name).write_bytes(damaged)
        outcome = run_cli("replay", tmp_path / name)
        outcome.assert_ok_or_one_line()


def test_set_values_beginning_with_a_hash_are_values(tmp_path):
    outcome = run_cli(
        "run",
        LDS,
        "--set",
        f"distributed={BLOCKED}",
        *SMALL,
        "--set",
        "report_burst=8",
        "--out",
        tmp_path / "o",
        "--json",
    )
    assert outcome.code == 0, outcome.err


def test_huge_or_endless_hardware_files(tmp_path):
    run_cli("replay", TRACE, "--hw", "/dev/zero").assert_one_line("/dev/zero", "too big")


def test_sizes_are_refused_before_allocating(tmp_path):
    for field in ("lds_latency", "queue_depth", "issue_interval"):
        run_cli("replay", TRACE, "--set", f"timing.{field}=1000000000").assert_one_line(
            f"timing.{field}", "valid: 1.."
        )
    for shape, reason in (("16384x16384", "more than any LDS holds"), ("4096x4096", "LDS")):
        run_cli(
            "lower", "--shared", SWIZZLED, "--dst", BLOCKED, "--shape", shape, "--dtype", "fp16"
        ).assert_one_line(reason)
    run_cli(
        "layout", "plot", "--layout", BLOCKED, "--shape", "4096x1024", "--out", tmp_path / "big.png"
    ).assert_one_line("too many to draw")
    delay = tmp_path / "delay.jsonl"
    delay.write_text('{"warp": 0, "op": "delay", "cycles": 9223372036854775000}\n')
    run_cli("replay", delay).assert_one_line("delay.jsonl:1", "valid: at most")


def test_every_experiment_field_has_a_range(tmp_path):
    for item, field in (
        ("warps=100000", "warps"),
        ("seed=-1", "seed"),
        ("burst_lengths=[1, 1000000]", "burst_lengths"),
        ("drift={seeds: 100000000}", "drift.seeds"),
    ):
        key = item.split("=")[0]  # the error names the --set that gave the value
        where = f"--set {key}: " + (f"field '{field}': " if field != key else "")
        run_cli("run", LDS, "--set", item, "--out", tmp_path / "o").assert_one_line(
            where, "valid: "
        )


# -- nothing lost --------------------------------------------------------------------------------
def _checkpoint_lines(out):
    return (out / "checkpoint.jsonl").read_text().splitlines()


def test_a_failing_run_keeps_the_checkpoint(tmp_path):
    out = tmp_path / "out"
    assert run_cli("run", LDS, *SMALL, "--out", out, "--json").code == 0
    before = _checkpoint_lines(out)
    results = (out / "results.csv").read_text()
    # A fit that fails after the sweep (fp32 repeats elements at bursts 1 and 2) ...
    run_cli(
        "run",
        LDS,
        "--set",
        "dtype=fp32",
        "--set",
        "burst_lengths=[1, 2]",
        "--set",
        "report_burst=2",
        "--workers",
        "1",
        "--out",
        out,
    ).assert_one_line("burst_lengths")
    # ... and a bad config keep the old lines, beside the old results.
    run_cli("run", LDS, "--set", "warps=0", "--out", out).assert_one_line("warps")
    assert _checkpoint_lines(out)[: len(before)] == before
    assert (out / "results.csv").read_text() == results
    gemm = ROOT / "configs" / "gemm_128x128.yaml"
    run_cli("run", gemm, "--set", "candidates.standard.a=[1]", "--out", out).assert_one_line(
        "candidates.standard.a"
    )
    assert _checkpoint_lines(out)[: len(before)] == before


def test_two_runs_into_one_out_are_refused(tmp_path):
    from wgpsim.sweeps.executor import Checkpoint

    out = tmp_path / "out"
    holder = Checkpoint(out / "checkpoint.jsonl", lock=True)
    holder.acquire()  # another run, sweeping into `out`
    try:
        run_cli("run", LDS, *SMALL, "--out", out).assert_one_line("another wgpsim run")
    finally:
        holder.close()
    assert run_cli("run", LDS, *SMALL, "--out", out, "--json").code == 0
    assert not list(out.glob(".*lock"))


def test_resume_works_from_any_directory(tmp_path, monkeypatch):
    import wgpsim.microbench.bandwidth as lds

    out = tmp_path / "out"
    monkeypatch.chdir(ROOT)
    assert run_cli("run", "configs/lds_bandwidth.yaml", *SMALL, "--out", out, "--json").code == 0
    ran = []
    real = lds.measure_point
    monkeypatch.setattr(lds, "measure_point", lambda *a: ran.append(a) or real(*a))
    monkeypatch.chdir(ROOT / "configs")
    outcome = run_cli("run", "lds_bandwidth.yaml", *SMALL, "--out", out, "--json", "--resume")
    assert outcome.code == 0 and ran == []


def test_candidate_names_become_files_only_when_safe(tmp_path):
    out = tmp_path / "out"
    layouts = f'layouts={{"a/b": "{SWIZZLED}"}}'
    run_cli("run", LDS, "--set", layouts, "--out", out).assert_one_line("'layouts.a/b'")
    gemm = ROOT / "configs" / "gemm_128x128.yaml"
    run_cli("run", gemm, "--set", "candidates={../x: {}}", "--out", out).assert_error_lines(
        "'candidates.../x': a candidate name becomes a file name"
    )
    assert not out.exists()


def test_lower_plot_is_written_atomically(tmp_path, monkeypatch):
    import wgpsim.plots.ownership as ownership

    def interrupted(fig, path):
        Path(path).write_bytes(b"half a png")
        raise KeyboardInterrupt

    monkeypatch.setattr(ownership, "save", interrupted)
    readme_dst = (
        "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], "
        "[8, 0], [16, 0]], warp = [], block = []}>"
    )
    shared = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>"
    outcome = run_cli(
        "lower",
        "--shared",
        shared,
        "--dst",
        readme_dst,
        "--shape",
        "32x8",
        "--dtype",
        "bf16",
        "--plot",
        tmp_path / "panels.png",
    )
    assert outcome.code == 130
    assert list(tmp_path.iterdir()) == []


def test_a_parquet_trace_under_a_memory_cap(tmp_path, monkeypatch):
    import wgpsim.inputs as inputs
    from wgpsim.trace.generate import streaming_trace
    from wgpsim.trace.io import write_trace

    path = write_trace(streaming_trace(4, 2000, "ds_load_b128", [0, 8192, 16384, 24576], 16, step=0),
                       tmp_path / "big.parquet")  # fmt: skip
    monkeypatch.setattr(inputs, "available_memory", lambda: 1 << 20)  # as under `ulimit -v`
    run_cli("replay", path).assert_one_line("big.parquet", "rows needs", "MiB")
    jsonl = write_trace(streaming_trace(4, 2000, "ds_load_b128", [0, 8192, 16384, 24576], 16, step=0),
                        tmp_path / "big.jsonl")  # fmt: skip
    run_cli("replay", jsonl).assert_one_line("big.jsonl", "MiB")


def test_parquet_with_damaged_names_is_one_line(tmp_path):
    """Found by the fuzz suite: a flipped byte in a column name or the schema metadata made
    pyarrow raise UnicodeDecodeError."""
    from wgpsim.trace.generate import streaming_trace
    from wgpsim.trace.io import write_trace

    path = write_trace(streaming_trace(2, 6, "ds_load_b128", [0, 8192], 16), tmp_path / "t.parquet")
    data = path.read_bytes()
    for name in (b"warp", b"wgpsim.labels", b"ARROW:schema"):
        at = data.rfind(name)
        if at >= 0:
            damaged = data[:at] + b"\x80" + data[at + 1 :]
            (tmp_path / "d.parquet").write_bytes(damaged)
            run_cli("replay", tmp_path / "d.parquet").assert_ok_or_one_line()


# -- left over after the first pass (session 3) ----------------------------------------------------
def test_every_problem_of_a_config_is_reported_at_once(tmp_path):
    out = tmp_path / "out"
    assert run_cli("run", LDS, *SMALL, "--out", out, "--json").code == 0
    kept = {p.name: p.read_bytes() for p in out.iterdir()}
    config = tmp_path / "bad.yaml"
    text = LDS.read_text().replace("warps: 4 ", "warps: 64 ").replace("hardware_overrides: {}", "")
    config.write_text(
        text + "hardware_overrides: {timing: {lds_latency: -1, queue_depth: 0}}\n"
        "drift: {seeds: 1}\nexecution: {workers: 0}\n"
    )
    lines = run_cli("run", config, "--set", "seed=x", "--out", out).assert_error_lines()
    name = str(config)
    assert sorted(lines) == sorted(
        f"wgpsim: error: {line}"
        for line in (
            f"{name}: field 'warps': 64 is out of range (valid: 1..32)",
            f"{name}: field 'hardware_overrides.timing.lds_latency': must be a positive integer "
            "(valid: 1..65536), got -1",
            f"{name}: field 'hardware_overrides.timing.queue_depth': must be a positive integer "
            "(valid: 1..1024), got 0",
            f"{name}: field 'drift.seeds': 1 is out of range (valid: 2..10000)",
            f"{name}: field 'execution.workers': 0 is out of range (valid: 1..1024)",
            "--set seed: expected an integer, got str 'x'",
        )
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == kept  # nothing written
    # Two bad candidates of a GEMM config, and a layout_search config: each problem, a line each.
    gemm = ROOT / "configs" / "gemm_128x128.yaml"
    lines = run_cli(
        "run",
        gemm,
        "--set",
        "candidates.standard.a=[1]",
        "--set",
        "candidates.swizzled.cta_layout={warps_per_cta: [3, 3]}",
        "--set",
        "stages=0",
        "--out",
        out,
    ).assert_error_lines()
    assert len(lines) == 3 and "--set stages: 0 is out of range (valid: 1..16)" in lines[0]
    search = ROOT / "configs" / "layout_search.yaml"
    outcome = run_cli("run", search, "--set", "stages=0", "--set", "swizzle_depth=-1")
    assert len(outcome.assert_error_lines("--set stages: ", "--set swizzle_depth: ")) == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == kept


def test_an_unknown_flag_gets_the_verbs_usage(capsys):
    from wgpsim.cli import main

    for argv, verb, valid in (
        (["run", str(LDS), "--bogus"], "wgpsim run", "--workers"),
        (["layout", "show", "x", "--shape", "4x4", "--wrkers"], "wgpsim layout show", "--shape"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        err = capsys.readouterr().err
        assert exit_.value.code == 2 and err.startswith(f"usage: {verb} "), err
        last = err.splitlines()[-1]
        assert last.startswith(f"{verb}: error: unrecognized flag '{argv[-1]}'"), last
        assert "valid flags: --help, " in last and valid in last
    with pytest.raises(SystemExit):
        main(["run", str(LDS), "--wrkers", "2"])
    assert "(did you mean '--workers'?)" in capsys.readouterr().err


def test_search_refuses_bad_flags_before_it_searches(monkeypatch):
    import wgpsim.search.layout_search as layout_search

    def never(*args, **kwargs):
        raise AssertionError("the search ran on a bad config")

    monkeypatch.setattr(layout_search, "search", never)
    block = ("search", "--block", "128x128x64", "--warps", "4")
    run_cli(*block, "--lds-budget", "-3").assert_one_line(
        "--lds-budget: -3 is out of range (valid: 1..16777216)"
    )
    lines = run_cli(*block, "--stages", "0", "--top", "0").assert_error_lines()
    assert lines == [
        "wgpsim: error: --stages: 0 is out of range (valid: 1..16)",
        "wgpsim: error: --top: 0 is out of range (valid: 1..1000000)",
    ]
    run_cli(*block, "--set", "stages=abc").assert_one_line(
        "--set stages: expected an integer, got str 'abc'"
    )
    run_cli("search", LDS).assert_one_line(
        f"{LDS}: field 'kind': this is a kind: lds_bandwidth config", "wgpsim run"
    )
    # A block whose operands cannot be in the LDS (2 x (4096 x 4096 x 2) x 2 B = 128 MiB, 320 KiB
    # of LDS) is refused before an enumeration that took minutes to find nothing.
    run_cli("search", "--block", "4096x4096x4096", "--warps", "16").assert_one_line(
        "--block: 4096x4096x4096 fp16 with 2 stages needs at least 134,217,728 B",
        "more than the 327,680 B LDS",
    )


def test_set_names_the_hardware_field_it_set():
    run_cli("run", LDS, "--set", "timing.lds_latency=abc").assert_one_line(
        "--set timing.lds_latency: must be a positive integer (valid: 1..65536), got 'abc'"
    )
    run_cli("run", LDS, "--set", "timing.lds_latncy=40").assert_one_line(
        "--set timing.lds_latncy: cannot override an unknown field (did you mean 'lds_latency'?)"
    )


def test_search_out_writes_its_tables_atomically(tmp_path):
    out = tmp_path / "search"
    fixed = [
        "--set",
        "cta_layout={register: [[0, 1], [0, 2], [2, 0]], warp: [[2, 4], [1, 0]]}",
        "--set",
        "a={partitioned: auto, partition_layout: {padded: [[64, 8]]}}",
    ]
    argv = ("search", "--block", "128x128x64", "--warps", "4", "--top", "1", *fixed)
    outcome = run_cli(*argv, "--workers", "1", "--json", "--out", out)
    assert outcome.code == 0, outcome.err
    names = {p.name for p in out.iterdir()}
    assert {"results.csv", "pareto.csv", "winners.csv", "counts.csv"} <= names
    assert not [n for n in names if n.startswith(".")]  # no temporary left
    import json

    import pandas as pd

    printed = json.loads(outcome.out)
    assert printed["results"][0]["cycles"] == pd.read_csv(out / "results.csv")["cycles"][0]
    assert printed["written"] and all(Path(p).parent == out for p in printed["written"])
    assert run_cli(*argv, "--json").code == 0  # without --out nothing is written anywhere


def test_a_reader_that_leaves_a_rich_table_is_not_an_error():
    import os
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader has left before the first line (`| head -0`)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "wgpsim", "replay", str(TRACE), "--engine", "des"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_lower_warps_names_the_warps_the_layout_spans():
    readme_dst = (
        "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], "
        "[8, 0], [16, 0]], warp = [], block = []}>"
    )
    run_cli(
        "lower",
        "--shared",
        SWIZZLED,
        "--dst",
        readme_dst,
        "--shape",
        "32x8",
        "--dtype",
        "bf16",
        "--warps",
        "3",
    ).assert_one_line("--warps 3: the dst layout spans 1 warp (", "give --warps 1")


def test_a_tritonparse_trace_of_odd_shapes_is_one_line(tmp_path):
    cases = {
        "payload.ndjson": '{"event_type": "compilation", "payload": 5}\n',
        "meta.ndjson": '{"event_type": "compilation", "payload": {"metadata": 3}}\n',
        "files.ndjson": '{"event_type": "compilation", "payload": {"file_content": {"k.ttgir": 5}}}\n',
        "deep.ndjson": "[" * 100_000 + "\n",
        "digits.ndjson": '{"event_type": "compilation", "n": ' + "9" * 5000 + "}\n",
    }
    expected = {
        "payload.ndjson": "payload.ndjson:1: the compilation's payload is not a mapping",
        "meta.ndjson": "meta.ndjson:1: the compilation's metadata is not a mapping",
        "files.ndjson": "carries no .ttgir in file_content",
        "deep.ndjson": "deep.ndjson:1: nested too deeply",
        "digits.ndjson": "digits.ndjson:1: an integer of 5000 digits",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        run_cli("kernel", tmp_path / name).assert_one_line(expected[name])
    (tmp_path / "latin1.ndjson").write_bytes(b"\xff\xfe\n")
    run_cli("kernel", tmp_path / "latin1.ndjson").assert_one_line("not UTF-8 text")
    (tmp_path / "x.ndjson.gz").write_text("not gzip")
    run_cli("kernel", tmp_path / "x.ndjson.gz").assert_one_line("not a readable gzip file")


def test_replay_seed_out_of_range_is_one_line():
    drift = ["--set", "drift.model=uniform", "--set", "drift.jitter_cycles=4"]
    run_cli("replay", TRACE, *drift, "--seed", "-1").assert_one_line(
        "--seed -1: out of range (valid: 0..4294967295)"
    )


def test_init_into_empty_text_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_cli("init", "").assert_one_line("argument dir: empty text")
    assert not list(tmp_path.iterdir())  # nothing written into the working directory


def test_odd_set_keys_name_their_flag():
    run_cli("run", LDS, "--set", "a..b=1").assert_one_line(
        "--set 'a..b': a key is field names joined by dots"
    )
    run_cli("run", LDS, "--set", "hardware_overrides.timing=[1]").assert_one_line(
        "--set hardware_overrides.timing: must be a mapping, got [1]"
    )
    search = ROOT / "configs" / "layout_search.yaml"
    run_cli("run", search, "--set", "references.x=5").assert_one_line(
        "--set references.x: expected a mapping with cta_layout, a, b; got 5"
    )


def test_a_malformed_padded_list_makes_its_candidate_infeasible(tmp_path):
    # found by the config fuzz (2026-12-03): `padded: [[128], 16]` inside a partition_layout
    # raised a TypeError; now the candidate is reported as one that cannot be built, and why
    config = ROOT / "configs" / "gemm_128x128.yaml"
    spec = "{partitioned: auto, partition_layout: {padded: [[128], 16]}}"
    outcome = run_cli(
        "run", config, "--set", f"candidates.swizzled_auto.b={spec}", "--out", tmp_path / "out"
    )
    assert outcome.code == 0, outcome.err[-2000:]
    results = (tmp_path / "out" / "results.csv").read_text()
    assert "intervals must be [interval, padding] pairs, got [[128], 16]" in results
