"""The ``auto`` engine: ``des`` for a process's first small traces, ``fast`` beyond, the same
cycles either way (the AMD blog's 323 cycles for the plain layout at four warps)."""

from __future__ import annotations

import pytest

from wgpsim.engine import auto, simulate
from wgpsim.hw.config import load_hardware
from wgpsim.trace.generate import streaming_trace


@pytest.fixture
def seed_plain():
    # the AMD blog's microbenchmark, all four rows in partition 0: 4 warps x 32 b128 loads,
    # 2 passes each (16 lanes x 16 B = 256 B per pass) = 256 passes
    return streaming_trace(4, 32, "ds_load_b128", lambda w: w * 16384, timed=True)


def test_small_traces_run_on_the_reference(seed_plain, monkeypatch):
    """Without a built fast engine (numba's JIT only), loading fast costs more than des."""
    monkeypatch.setenv("WGPSIM_FAST_KERNELS", "jit")
    monkeypatch.setattr(auto, "_sent", [0])
    monkeypatch.delitem(__import__("sys").modules, "wgpsim.engine.fast", raising=False)
    r = simulate(seed_plain, engine="auto")
    assert (r.engine, r.measurement(), r.passes) == ("des", 323, 256)
    assert auto._sent == [256]


def test_beyond_the_budget_the_compiled_engine_runs(seed_plain, monkeypatch):
    monkeypatch.setattr(auto, "_sent", [auto.DES_PASSES - 255])  # 256 more passes do not fit
    r = simulate(seed_plain, engine="auto")
    assert (r.engine, r.measurement(), r.passes) == ("fast", 323, 256)


def test_most_passes_counts_lane_groups(seed_plain):
    # 128 LDS rows x 2 lane groups; barriers and clock reads have none
    assert auto.most_passes(seed_plain, load_hardware()) == 256


def test_fast_cache_hint_reads_numba_cache_dir_alone_when_set(tmp_path, monkeypatch):
    """With ``NUMBA_CACHE_DIR`` set numba uses that directory only, so the checkout's own
    ``__pycache__`` does not count: an empty directory means a compile."""
    from wgpsim.engine.auto import fast_cache_present

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert fast_cache_present() is False
    index = tmp_path / "wgpsim" / "engine" / "_fast_loop.run_loop-60.py311.nbi"
    index.parent.mkdir(parents=True)
    index.write_bytes(b"")
    assert fast_cache_present() is True


def test_a_built_fast_engine_takes_every_trace(seed_plain, monkeypatch):
    """A built fast engine loads in a millisecond, without numba: auto sends even a process's
    first small trace there, and a report or loop decides for it up front."""
    from wgpsim.engine import _fast_backend

    monkeypatch.setattr(auto, "_sent", [0])
    monkeypatch.delitem(__import__("sys").modules, "wgpsim.engine.fast", raising=False)
    monkeypatch.setattr(_fast_backend, "built_present", lambda: True)
    assert auto.upfront(1) == "fast"
    r = simulate(seed_plain, engine="auto")
    assert (r.engine, r.measurement(), r.passes) == ("fast", 323, 256)
    assert auto._sent == [0]
    monkeypatch.setattr(_fast_backend, "built_present", lambda: False)
    monkeypatch.delitem(__import__("sys").modules, "wgpsim.engine.fast", raising=False)
    assert auto.upfront(1) == "des"
