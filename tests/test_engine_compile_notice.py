"""The fast engine says when numba compiles it (a cold cache), and is silent when the cache is
warm (``wgpsim.engine._compile_notice``). Each case runs in a fresh interpreter: the message is
about a process's first call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wgpsim.engine import simulate
from wgpsim.engine._compile_notice import MESSAGE, SECONDS
from wgpsim.trace.generate import streaming_trace

ROOT = Path(__file__).resolve().parents[1]
NOTICE = MESSAGE.split("(")[0]
SIMULATE = (
    "from wgpsim.engine import simulate\n"
    "from wgpsim.trace.generate import streaming_trace\n"
    "trace = streaming_trace(4, 32, 'ds_load_b128', lambda w: w * 16384, timed=True)\n"
    "r = simulate(trace, engine='fast')\n"
    "print(r.measurement())\n"
)


def _simulate_in_fresh_process(**env: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-c", SIMULATE],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "323"  # the seed microbenchmark's measurement
    return done


def test_warm_cache_prints_nothing():
    trace = streaming_trace(4, 32, "ds_load_b128", lambda w: w * 16384, timed=True)
    simulate(trace, engine="fast")  # warm it
    assert NOTICE not in _simulate_in_fresh_process().stderr


@pytest.mark.slow
def test_cold_cache_prints_one_line_then_none(tmp_path):
    cold = _simulate_in_fresh_process(NUMBA_CACHE_DIR=str(tmp_path))
    assert [line for line in cold.stderr.splitlines() if NOTICE in line] == [
        MESSAGE.format(seconds=SECONDS)
    ]
    assert NOTICE not in _simulate_in_fresh_process(NUMBA_CACHE_DIR=str(tmp_path)).stderr
