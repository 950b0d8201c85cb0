"""Issue 24's regression cases for what a run leaves behind: an output directory written as a
whole (a full disk, a file size limit, a kill), and Ctrl-C / SIGTERM ending every verb with one
line and 130 / 143, each run as a user runs the CLI."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_runner import run_child, run_cli

ROOT = Path(__file__).resolve().parents[2]


# -- 2. an output directory is written as a whole ----------------------------------------------
LDS = ROOT / "configs" / "lds_bandwidth.yaml"
SMALL = ["--set", "burst_lengths=[4, 8]", "--set", "report_burst=8", "--workers", "1"]
SEARCH = ["search", "--block", "32x32x32", "--warps", "1"]


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (hidden ones too) and its bytes."""
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*") if p.is_file()
    }


def _full_disk(*args, **kwargs):
    raise OSError(28, "No space left on device")  # ENOSPC


@pytest.mark.parametrize(
    "argv, rerun",
    [
        (["run", LDS, *SMALL], ["--set", "burst_lengths=[4, 16]", "--set", "report_burst=16"]),
        (SEARCH, ["--lds-budget", "65536"]),
    ],
    ids=["run", "search"],
)
def test_a_failed_rerun_leaves_the_previous_results(tmp_path, monkeypatch, argv, rerun):
    import wgpsim.sweeps.kinds as experiments

    out = tmp_path / "out"
    assert run_cli(*argv, "--out", out).code == 0
    before = snapshot(out)
    assert "checkpoint.jsonl" in before and any(name.endswith(".png") for name in before)
    monkeypatch.setattr(experiments, "_save_figure", _full_disk)  # the disk fills at a figure
    run_cli(*argv, *rerun, "--out", out).assert_one_line("No space left on device")
    assert snapshot(out) == before  # no new table beside the old figures, no stray file


def test_a_failed_first_run_leaves_nothing(tmp_path, monkeypatch):
    import wgpsim.sweeps.kinds as experiments

    monkeypatch.setattr(experiments, "_save_figure", _full_disk)
    run_cli("run", LDS, *SMALL, "--out", tmp_path / "out").assert_one_line("No space left")
    assert not (tmp_path / "out").exists()


def _limited(*argv: object, fsize: int, cwd: Path) -> subprocess.CompletedProcess:
    """``wgpsim ARGV`` in a child whose files may not grow past ``fsize`` bytes (a full disk)."""
    return run_child(*argv, cwd=cwd, limits={resource.RLIMIT_FSIZE: fsize})


def test_a_file_size_limit_mixes_nothing(tmp_path):
    """A real write past RLIMIT_FSIZE (EFBIG; Python ignores SIGXFSZ): the figure (64 kB) does
    not fit in 16 kB; the tables and the checkpoint did."""
    out = tmp_path / "out"
    assert run_cli("run", LDS, *SMALL, "--out", out).code == 0
    before = snapshot(out)
    done = _limited("run", LDS, *SMALL[:2], "--set", "report_burst=4", "--workers", "1",
                    "--out", out, fsize=16_000, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2 and done.stderr.startswith("wgpsim: error: "), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert snapshot(out) == before


def test_calibrate_probes_under_a_file_size_limit_leaves_no_kit(tmp_path):
    done = _limited("calibrate", "probes", "--out", "kit", fsize=4_000, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "kit").exists()


def test_init_writes_every_file_or_none(tmp_path):
    (tmp_path / "study" / "traces" / "bank_conflict.jsonl").mkdir(parents=True)  # in the way
    run_cli("init", tmp_path / "study", "--force").assert_one_line(
        "bank_conflict.jsonl: is a directory"
    )
    assert [p.name for p in (tmp_path / "study").rglob("*") if p.is_file()] == []


def test_what_a_killed_run_left_is_cleared_by_the_next(tmp_path):
    """kill -9 or SIGTERM mid-write leaves the stage (a half-written table, an atomic_write
    temporary); the next run, with or without --resume, clears it and writes the whole result."""
    out = tmp_path / "out"
    assert run_cli("run", LDS, *SMALL, "--out", out).code == 0
    before = snapshot(out)
    stage = out / ".wgpsim-partial"
    stage.mkdir()
    (stage / "results.csv").write_text("half a tab")
    (stage / ".results.csv.x1y2.csv").write_text("")
    (stage / "checkpoint.jsonl").write_text('{"sweep": "cut sho')
    assert run_cli("run", LDS, *SMALL, "--out", out, "--resume").code == 0
    assert snapshot(out) == before


def test_sigterm_during_a_run_leaves_nothing_a_later_run_trips_on(tmp_path):
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "wgpsim", "run", str(LDS), *SMALL, "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(2.5)  # started, usually mid-sweep or mid-write on this machine
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=120)
        assert child.returncode == 143 and err == b"wgpsim: terminated\n", err
        left = [str(p.relative_to(out)) for p in out.rglob("*")] if out.exists() else []
        assert set(left) <= {".wgpsim-partial", ".wgpsim-partial/checkpoint.jsonl"}, left
    else:
        child.wait()
    again = subprocess.run(argv + ["--resume"], env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "bandwidth_vs_burst.png", "checkpoint.jsonl", "fit.csv", "results.csv", "sweep.csv"
    ]  # fmt: skip


# -- 6. Ctrl-C always ends with `wgpsim: interrupted` and 130 ---------------------------------
class _Swallowed:
    """An object whose teardown is interrupted: Python can only report that as "Exception
    ignored" (as when Ctrl-C lands in matplotlib's figure teardown)."""

    def __del__(self) -> None:
        raise KeyboardInterrupt


def test_an_interrupt_python_swallows_still_ends_with_130(tmp_path, monkeypatch):
    import wgpsim.sweeps.kinds as experiments

    drawn = experiments._save_figure

    def save(make, path):
        _Swallowed()  # collected at once: its KeyboardInterrupt is unraisable
        return drawn(make, path)

    monkeypatch.setattr(experiments, "_save_figure", save)
    outcome = run_cli("run", LDS, *SMALL, "--out", tmp_path / "out")
    assert outcome.code == 130 and outcome.err == "wgpsim: interrupted\n", outcome.err


def _ctrl_c_here() -> None:
    """SIGINT to this process; wgpsim's handler raises KeyboardInterrupt at once."""
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)  # not reached: the handler runs before the sleep


def _interrupted_set_name(make, path):
    """Ctrl-C while a class body binds a descriptor (matplotlib defining ``_AxesBase``):
    Python 3.11 reports it as ``RuntimeError: Error calling __set_name__``."""

    class Wrapper:
        def __set_name__(self, owner, name):
            _ctrl_c_here()

    type("Axes", (), {"get_yticklabels": Wrapper()})


def _interrupted_extension_init(make, path):
    """Ctrl-C while a C extension initialises (matplotlib's ft2font, numpy's multiarray): the
    import fails with ImportError, the interrupt as its cause."""
    try:
        _ctrl_c_here()
    except KeyboardInterrupt as err:
        raise ImportError("initialization failed") from err


@pytest.mark.parametrize("interrupted", [_interrupted_set_name, _interrupted_extension_init])
def test_an_interrupt_turned_into_another_error_still_ends_with_130(
    tmp_path, monkeypatch, interrupted
):
    """The failure the GEMM run below showed once under load: Ctrl-C while matplotlib was
    being imported reached wgpsim as a RuntimeError (or ImportError): a traceback, exit 1."""
    import threading

    import wgpsim.sweeps.kinds as experiments

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("wgpsim's signal handlers are installed from the main thread only")
    monkeypatch.setattr(experiments, "_save_figure", interrupted)
    outcome = run_cli("run", LDS, *SMALL, "--out", tmp_path / "out")
    assert outcome.code == 130 and outcome.err == "wgpsim: interrupted\n", outcome.err
    assert not (tmp_path / "out" / "results.csv").exists()


def test_ctrl_c_while_the_command_exits_ends_with_130():
    """A Ctrl-C after the verb's work, while ``entry`` runs the exit handlers (a worker pool's
    shutdown), is the one line and 130 too, not Python's "Exception ignored" report."""
    code = (
        "import atexit, os, signal, sys\n"
        "from wgpsim.cli import entry\n"
        "atexit.register(lambda: (os.kill(os.getpid(), signal.SIGINT), __import__('time').sleep(5)))\n"
        "sys.argv = ['wgpsim', 'init', '--help']\n"
        "entry()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (130, "wgpsim: interrupted\n"), done.stderr
    assert done.stdout.startswith("usage: wgpsim init")


def test_ctrl_c_at_any_moment_of_a_gemm_run(tmp_path):
    """SIGINT to a real `wgpsim run` of the GEMM config at moments spread over its run (start-up,
    candidates, figure drawing): 130 and the one line each time, nothing else on stderr."""
    argv = [sys.executable, "-m", "wgpsim", "run", str(ROOT / "configs" / "gemm_128x128.yaml"),
            "--workers", "1"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    sent = 0
    for i, delay in enumerate((0.8, 1.2, 1.6, 2.0)):  # the run takes about 2.4 CPU-s (engine: auto)
        child = subprocess.Popen([*argv, "--out", str(tmp_path / f"o{i}")], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
        time.sleep(delay)
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
            sent += 1
            _, err = child.communicate(timeout=120)
            assert child.returncode == 130 and err == "wgpsim: interrupted\n", (delay, err)
        else:
            child.communicate()
    assert sent >= 2


def test_sigterm_during_a_figure_write_leaves_no_temporary_file(kit, monkeypatch):
    import threading

    from matplotlib.figure import Figure

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("wgpsim's signal handlers are installed from the main thread only")

    def killed(self, path, **kwargs):
        Path(path).write_bytes(b"half a png")
        os.kill(os.getpid(), signal.SIGTERM)  # wgpsim's handler turns it into the clean-up

    monkeypatch.setattr(Figure, "savefig", killed)
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    outcome = run_cli("compare", kit / "m.csv", "--figure", kit / "c.png")
    assert outcome.code == 143 and outcome.err == "wgpsim: terminated\n", outcome.err
    assert sorted(p.name for p in kit.iterdir()) == ["m.csv", "manifest.json"]


def test_a_run_refused_by_the_lock_leaves_the_holders_stage_alone(tmp_path):
    from wgpsim.sweeps.executor import Checkpoint

    out = tmp_path / "out"
    holder = Checkpoint(out / ".wgpsim-partial" / "checkpoint.jsonl", lock=True,
                        lock_path=out / ".checkpoint.jsonl.lock")  # fmt: skip
    holder.acquire()
    try:
        (out / ".wgpsim-partial").mkdir()
        (out / ".wgpsim-partial" / "results.csv").write_text("the holder's table")
        run_cli("run", LDS, *SMALL, "--out", out).assert_one_line("another wgpsim run")
        assert (out / ".wgpsim-partial" / "results.csv").read_text() == "the holder's table"
    finally:
        holder.close()
