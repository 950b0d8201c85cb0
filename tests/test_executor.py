"""The sweep executor: order, in-process = pool = Dask, checkpoint and resume, failures."""

import json
import os
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wgpsim.microbench.bandwidth as lds_bandwidth
import wgpsim.sweeps.executor as executor
from wgpsim.errors import ConfigError
from wgpsim.experiments import run_experiment
from wgpsim.sweeps.executor import Checkpoint, Execution, point_key, run_points

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "lds_bandwidth.yaml"
SMALL = {"burst_lengths": [1, 2, 4, 8], "report_burst": 8}


def slow_square(point):
    """Later points finish first: completion order is the reverse of submission order."""
    index, count = point
    time.sleep(0.002 * (count - index))
    return {"point": index, "square": index * index, "pid": os.getpid()}


def fail_at(point):
    index, bad = point
    if index == bad:
        raise ValueError(f"point {index} is bad")
    return {"point": index}


def interrupt_at(point):
    """Ctrl-C while running point ``bad``."""
    index, bad = point
    if index == bad:
        raise KeyboardInterrupt
    time.sleep(0.01)
    return {"point": index}


def first_of(point):
    return {"point": point[0]}


@pytest.fixture
def pool_always(monkeypatch):
    """Send every sweep to the pool after the two probe points, one point per task."""
    monkeypatch.setattr(executor, "INLINE_SECONDS", 0.0)
    monkeypatch.setattr(executor, "CHUNK_SECONDS", 1e-9)


def test_results_follow_the_points_in_a_pool(pool_always):
    points = [(i, 40) for i in range(40)]
    rows = run_points(slow_square, points, workers=2)
    assert [r["point"] for r in rows] == list(range(40))
    assert [r["square"] for r in rows] == [i * i for i in range(40)]
    # The first two points probe the pace in this process; the rest ran in two others.
    assert {r["pid"] for r in rows[:2]} == {os.getpid()}
    assert len({r["pid"] for r in rows[2:]} - {os.getpid()}) == 2


def test_small_sweeps_stay_in_process():
    rows = run_points(slow_square, [(i, 12) for i in range(12)], workers=2)
    assert {r["pid"] for r in rows} == {os.getpid()}


@given(st.lists(st.integers(-1000, 1000), unique=True, max_size=30))
@settings(max_examples=25, deadline=None)
def test_in_process_is_the_plain_map(values):
    assert run_points(abs, values, workers=1) == [abs(v) for v in values]


def test_chunks_cover_the_points_once_and_balance():
    todo = list(range(1000))
    for workers, pace in [(1, None), (2, None), (2, 0.001), (8, 0.5), (2, 10.0)]:
        chunks = executor._chunks(todo, workers, pace)
        assert [i for c in chunks for i in c] == todo
        assert len(chunks) >= min(len(todo), 4 * workers)
        if pace is not None:  # about CHUNK_SECONDS of work per task, at least one point
            assert max(map(len, chunks)) <= max(1, round(executor.CHUNK_SECONDS / pace))


def _lds(**kwargs):
    return run_experiment(CONFIG, overrides=SMALL, **kwargs).tables


def _assert_same_tables(a, b):
    assert list(a) == list(b)
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name], check_exact=True)


def test_pool_and_in_process_give_the_same_tables(pool_always):
    _assert_same_tables(_lds(workers=1), _lds(workers=2))


def test_dask_gives_the_same_tables():
    distributed = pytest.importorskip("distributed")
    start = time.perf_counter()
    try:
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        )
    except Exception as err:  # noqa: BLE001
        pytest.skip(f"no local Dask cluster: {err}")
    if time.perf_counter() - start > 10:
        cluster.close()
        pytest.skip("the local Dask cluster took too long to start")
    try:
        tables = _lds(scheduler=cluster.scheduler_address)
        points = [(i, 20) for i in range(20)]
        rows = run_points(slow_square, points, scheduler=cluster.scheduler_address)
        with pytest.raises(ValueError, match="point 7 is bad"):
            run_points(fail_at, [(i, 7) for i in range(10)], scheduler=cluster.scheduler_address)
    finally:
        cluster.close()
    _assert_same_tables(tables, _lds(workers=1))
    assert [r["point"] for r in rows] == list(range(20))


def test_bad_scheduler_fails_fast_with_one_line(tmp_path):
    for address, message in [
        ("nonsense", "not an address"),
        ("tcp://127.0.0.1:1", "cannot connect within"),
    ]:
        # how quickly: benchmarks/response_times.py (a wall-clock bound is flaky under load)
        with pytest.raises(ConfigError, match=f"^scheduler {address}: {message}") as err:
            run_points(abs, [1, 2], scheduler=address, checkpoint=Checkpoint(tmp_path / "c"))
        assert "\n" not in str(err.value)
        assert not (tmp_path / "c").exists()  # nothing written before the connection


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_resume_after_truncation_gives_the_same_tables(tmp_path, monkeypatch):
    checkpoint = tmp_path / "checkpoint.jsonl"
    full = _lds(workers=1, checkpoint=checkpoint)
    lines = _lines(checkpoint)
    assert len(lines) == 2 * len(SMALL["burst_lengths"])
    assert {line["sweep"] for line in lines} == {"lds_bandwidth"}
    # Cut the file in the middle of a line, as an interrupted run would.
    data = checkpoint.read_bytes()
    checkpoint.write_bytes(data[: len(data) // 2])
    kept = len(checkpoint.read_text().splitlines()) - 1  # the last line is cut short

    ran = []
    real = lds_bandwidth.measure_point

    def counting(cfg, point):
        ran.append(point)
        return real(cfg, point)

    monkeypatch.setattr(lds_bandwidth, "measure_point", counting)
    resumed = _lds(workers=1, checkpoint=checkpoint, resume=True)
    _assert_same_tables(full, resumed)
    assert len(ran) == len(lines) - kept
    assert {tuple(json.loads(line["key"])) for line in lines[kept:]} == set(ran)
    # A second resume computes nothing; a run without resume starts the file again.
    ran.clear()
    _assert_same_tables(full, _lds(workers=1, checkpoint=checkpoint, resume=True))
    assert ran == []
    _lds(workers=1, checkpoint=checkpoint)
    assert len(ran) == len(lines) and len(_lines(checkpoint)) == len(lines)


def test_a_changed_config_does_not_reuse_old_points(tmp_path):
    checkpoint = tmp_path / "checkpoint.jsonl"
    _lds(workers=1, checkpoint=checkpoint)
    narrow = {**SMALL, "hardware_overrides.timing.lds_latency": 40}
    changed = run_experiment(CONFIG, overrides=narrow, checkpoint=checkpoint, resume=True)
    fresh = run_experiment(CONFIG, overrides=narrow, workers=1)
    _assert_same_tables(changed.tables, fresh.tables)
    # The run succeeded: the checkpoint keeps its lines only (2 candidates x the bursts).
    lines = _lines(checkpoint)
    assert len(lines) == 2 * len(SMALL["burst_lengths"])
    assert len({line["fingerprint"] for line in lines}) == 1


def test_a_failing_point_keeps_the_finished_ones(tmp_path):
    path = tmp_path / "checkpoint.jsonl"
    points = [(i, 5) for i in range(10)]
    with pytest.raises(ValueError, match="point 5 is bad"):
        run_points(fail_at, points, workers=1, checkpoint=Checkpoint(path), desc="f")
    assert [line["result"]["point"] for line in _lines(path)] == [0, 1, 2, 3, 4]
    # Resuming with the same function retries only what is missing (and fails there again).
    with pytest.raises(ValueError, match="point 5 is bad"):
        run_points(fail_at, points, workers=1, checkpoint=Checkpoint(path, resume=True), desc="f")
    assert len(_lines(path)) == 5


def test_a_failing_point_in_a_pool_keeps_every_other_point(tmp_path, pool_always):
    path = tmp_path / "checkpoint.jsonl"
    points = [(i, 19) for i in range(20)]
    with pytest.raises(ValueError, match="point 19 is bad"):
        run_points(fail_at, points, workers=2, checkpoint=Checkpoint(path), desc="f")
    # Every other point was running or done when the last one failed: all are kept.
    assert sorted(line["result"]["point"] for line in _lines(path)) == list(range(19))


def test_progress_counts_every_point_including_resumed_ones(tmp_path):
    counts = []

    def progress(items, *, total, desc):
        counts.append((total, desc, sum(1 for _ in items)))
        return []

    path = tmp_path / "c.jsonl"
    run_points(abs, [1, 2, 3], workers=1, progress=progress, checkpoint=Checkpoint(path))
    run_points(
        abs, [1, 2, 3, 4], workers=1, progress=progress, checkpoint=Checkpoint(path, resume=True)
    )
    assert counts == [(3, "points", 3), (4, "points", 4)]


def test_point_keys_are_canonical_and_unique():
    assert point_key({"b": 1, "a": [2, 3]}) == point_key({"a": (2, 3), "b": 1})
    with pytest.raises(ValueError, match="same key"):
        run_points(abs, [(1, 2), [1, 2]], workers=1)


def test_execution_section_of_the_config(monkeypatch):
    seen = []
    real = executor.run_points

    def spy(fn, points, **kwargs):
        seen.append((kwargs["workers"], kwargs["scheduler"]))
        return real(fn, points, **{**kwargs, "workers": 1, "scheduler": None})

    monkeypatch.setattr(executor, "run_points", spy)
    run_experiment(CONFIG, overrides={**SMALL, "execution": {"workers": 3}})
    run_experiment(CONFIG, overrides={**SMALL, "execution.workers": 3}, workers=2)
    run_experiment(CONFIG, overrides=SMALL, scheduler="tcp://h:1")
    assert seen == [(3, None), (2, None), (None, "tcp://h:1")]
    for changes, message in [
        (
            {"execution.wrkers": 2},
            "field 'execution.wrkers': unknown field; did you mean 'workers'",
        ),
        ({"execution.workers": 0}, "field 'execution.workers': 0 is out of range"),
        ({"execution": 4}, "field 'execution': expected a mapping"),
        ({"execution.scheduler": "tcp://h:1"}, "field 'execution.scheduler': a config file cannot"),
    ]:
        with pytest.raises(ConfigError, match=f": {message}"):
            run_experiment(CONFIG, overrides={**SMALL, **changes})
    with pytest.raises(ConfigError, match="--workers 0: must be >= 1"):
        run_experiment(CONFIG, workers=0)


def test_execution_map_is_run_points(tmp_path):
    assert Execution(workers=1).map(slow_square, [(1, 1)], desc="x")[0]["square"] == 1
    execution = Execution(workers=1, checkpoint=Checkpoint(tmp_path / "c.jsonl"))
    assert execution.map(abs, [-1], desc="x", save=False) == [1]  # results that are not JSON
    assert not (tmp_path / "c.jsonl").exists()
    with pytest.raises(
        TypeError, match="sweep 'y': result of point \"1\" cannot go in the checkpoint"
    ):
        execution.map(Path, ["1"], desc="y")


@pytest.mark.parametrize("workers", [1, 2])
def test_an_interrupted_sweep_keeps_what_it_finished(tmp_path, pool_always, workers):
    path = tmp_path / "checkpoint.jsonl"
    points = [(i, 30) for i in range(60)]
    # the workers are stopped, not drained: the points after 30 are not all in the checkpoint
    # (how quickly they stop: benchmarks/response_times.py)
    with pytest.raises(KeyboardInterrupt):
        run_points(interrupt_at, points, workers=workers, checkpoint=Checkpoint(path), fp="x")
    kept = {line["result"]["point"] for line in _lines(path)}
    assert 30 not in kept and len(kept) >= 2
    assert not kept >= set(range(31, 60))  # drained, it would have finished all the others
    if workers == 1:
        assert kept == set(range(30))
    # Resuming (same fingerprint) computes only the rest and gives the uninterrupted result.
    checkpoint = Checkpoint(path, resume=True)
    rows = run_points(first_of, points, workers=1, checkpoint=checkpoint, fp="x")
    assert rows == [{"point": i} for i in range(60)]
    assert sorted(line["result"]["point"] for line in _lines(path)) == list(range(60))
