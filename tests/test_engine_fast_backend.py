"""The fast engine's kernels built ahead of time (``wgpsim.engine._fast_backend``): the same
results as numba's JIT, a call of other argument types served by the JIT, no numba in a process
that has the built module, and no build where none can succeed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from wgpsim.engine import _fast_backend as backend
from wgpsim.engine import fast
from wgpsim.hw.config import load_hardware
from wgpsim.packaged import hardware_path
from wgpsim.trace.generate import streaming_trace
from wgpsim.trace.trace import TraceBuilder

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built():
    """The built kernels of this checkout (built here if missing: half a minute)."""
    if backend.compiler() is None:
        pytest.skip("no C compiler: the fast engine runs on numba's JIT")
    found = backend.load() or backend.build(fast._exemplar_runs)
    assert found is not None, backend._paths()[2].with_suffix(".failed").read_text()
    return found


def _traces():
    """Traces that reach every path of the loop: conflicts, waits, barriers, clocks, drift."""
    yield streaming_trace(4, 32, "ds_load_b128", lambda w: w * 16384, timed=True)
    yield streaming_trace(8, 6, "ds_load_tr16_b128", lambda w: (w % 3) * 65536, timed=True)
    rng = np.random.default_rng(7)
    b = TraceBuilder(8)
    for w in range(8):
        for i in range(12):
            op = ("ds_load_b32", "ds_store_b64", "ds_load_b128")[i % 3]
            step = {"ds_load_b32": 4, "ds_store_b64": 8, "ds_load_b128": 16}[op]
            put = b.store if op.startswith("ds_store") else b.load
            put(w, op, step * rng.integers(0, 4096 // step, 32))
            if i % 4 == 3:
                b.wait_ds(w, 1)
    b.barrier()
    yield b.build()


def _same(a, b) -> None:
    assert (a.total_cycles, a.passes, a.bank_cycles) == (b.total_cycles, b.passes, b.bank_cycles)
    assert a.partition_stall_cycles == b.partition_stall_cycles
    assert a.port_busy_cycles == b.port_busy_cycles
    assert a.clocks.cycle.tolist() == b.clocks.cycle.tolist()
    assert a.events().equals(b.events())
    assert np.array_equal(a.op_log, b.op_log)


@pytest.mark.parametrize("target", ["mi450", "mi450 with an LDS per pair", "gfx942"])
def test_built_kernels_give_the_jits_results(built, monkeypatch, target):
    hw = load_hardware(hardware_path("gfx942")) if target == "gfx942" else load_hardware()
    if target.endswith("pair"):
        hw = hw.with_lds_per_pair()
    for trace in _traces():
        runs = []
        for kernels in (built, backend._jit()):
            monkeypatch.setattr(backend, "_active", [kernels])
            r = fast.run(trace, hw, record_events=True, record_ops=True, seed=3)
            runs.append(r)
        _same(*runs)


def test_every_exemplar_type_is_built_and_other_types_go_to_the_jit(built):
    # one variant each: every shipped config and the loop's what-ifs pass the same types
    assert {k: len(v) for k, v in built.table.items()} == dict.fromkeys(backend.KERNELS, 1)
    trace = streaming_trace(2, 4, "ds_load_b128", lambda w: w * 512)
    args = (trace.op, trace.warp, trace.arg, trace.addr, np.int64(2), np.int64(0))
    rules = (np.int64(320 * 1024), fast._CODES, fast._PER_OP, np.float64(1e9))
    assert backend.type_key((*args, *rules)) in built.table["rows_are_valid"]
    wide = (trace.op.astype(np.int64), *args[1:])  # int64 op codes: no variant was built
    assert backend.type_key((*wide, *rules)) not in built.table["rows_are_valid"]
    assert built.rows_are_valid(*wide, *rules) is True
    assert built.rows_are_valid(*wide, np.int64(1024), *rules[1:]) is False  # beyond the LDS


def test_a_process_with_the_built_engine_never_imports_numba(built):
    probe = (
        "import sys\n"
        "from wgpsim.cli import main\n"
        "code = main(['kernel', 'examples/kernels/matmul', '--loop-timing', '--engine', 'fast'])\n"
        "print(code, 'numba' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.stderr.splitlines()[-1] == "0 False", done.stderr


def test_no_build_without_a_compiler_or_after_a_failure(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    ran = []
    monkeypatch.setattr(backend, "compiler", lambda: None)
    assert backend.build(lambda: ran.append(1)) is None
    monkeypatch.setattr(backend, "compiler", lambda: "/usr/bin/cc")
    failed = backend._paths()[2].with_suffix(".failed")
    failed.parent.mkdir(parents=True)
    failed.write_text("LinkError: no linker\n")
    assert backend.build(lambda: ran.append(1)) is None
    assert ran == []  # neither recorded nor compiled anything
    assert not backend.built_present()


def test_the_jit_mode_never_loads_a_built_module(monkeypatch):
    monkeypatch.setenv("WGPSIM_FAST_KERNELS", "jit")
    monkeypatch.setattr(backend, "_active", [])
    assert not backend.built_present()
    assert backend.kernels(exemplars=lambda: pytest.fail("built in jit mode")) is backend._jit()


@pytest.mark.parametrize("op", ["ds_load_b32", "ds_load_b64", "ds_load_b128", "ds_store_b16"])
def test_bank_conflict_count_is_the_same_from_either_statement(op, monkeypatch):
    """``measures.banks`` counts bank conflicts on the compiled pass table once the fast engine
    is ready, on the reference rules otherwise: the same number on random lane addresses."""
    from wgpsim.engine import auto
    from wgpsim.measures.banks import bank_conflict_cycles

    rng = np.random.default_rng(11)
    b = TraceBuilder(4)
    put = b.store if op.startswith("ds_store") else b.load
    width = {"ds_load_b32": 4, "ds_load_b64": 8, "ds_load_b128": 16, "ds_store_b16": 2}[op]
    for w in range(4):
        for _ in range(16):
            put(w, op, width * rng.integers(0, 2048, 32))
    trace, hw = b.build(), load_hardware()
    counts = []
    for ready in (True, False):
        monkeypatch.setattr(auto, "fast_ready", lambda ready=ready: ready)
        counts.append(bank_conflict_cycles(trace, hw))
    assert counts[0] == counts[1] > 0
