"""How fast each timing engine simulates: LDS passes per CPU second, beside a floor and a baseline.

A plain script (not a test): ``python benchmarks/engine_throughput.py [--warps 8] [--loads 20000]
[--repeat 5] [--baseline f206180]``. The trace streams conflict-free ``ds_load_b128`` in every
warp, pairs on separate partitions and, as a second case, on one partition (so the arbiter both
grants in parallel and serializes). Add an engine name to ``ENGINES`` (a module
``wgpsim.engine.<name>``) to compare it with ``des``.

Timed (CPU seconds, ``time.process_time``; the best of ``--repeat`` runs: the machine is shared,
so the best run is the least disturbed one):

- each engine's ``run(trace, hw)`` (passes per CPU-s, and ``vs des``);
- the read-every-address floor: a compiled loop that only sums every address of the trace once;
  ``x floor`` is the engine's time over it (issue 18's target: within 10x);
- the baseline: the fast engine of commit ``--baseline`` (issue 18's "today", f206180), exported
  with ``git archive`` and run in a child process on the same trace in the same run (its numba
  cache is kept beside the export, so only its first run compiles); ``vs base`` is passes per
  CPU-s over the baseline's (target: 2x);
- validation of a fresh trace (one not checked before: a ``Trace`` remembers it was valid), per
  million rows: ``wgpsim.trace.validate`` (numpy), the fast engine's ``validate`` (one compiled
  sweep, what ``simulate(engine="fast")`` runs) and the baseline's ``validate``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import time

import numpy as np
from numba import njit
from revision import measure_at

from wgpsim.engine import simulate
from wgpsim.hw import load_hardware
from wgpsim.trace.trace import TraceBuilder
from wgpsim.trace.validate import validate

BASELINE = "f206180"
ENGINES = ["des", "fast"]


def streaming_trace(num_warps: int, loads: int, shared_partition: bool):
    """Every warp: ``loads`` back-to-back b128 loads of 512 B, a wait_ds every 32 loads."""
    hw = load_hardware()
    lanes = 16 * np.arange(hw.wgp.warp_size)
    row_bytes = 512 * 32
    b = TraceBuilder(num_warps)
    b.barrier()
    for w in range(num_warps):
        pair = hw.pair_of_warp(w)
        base = (w // 2) * row_bytes + (0 if shared_partition else pair * hw.partitions.size)
        b.clock(w, "start")
        block = base + 512 * (np.arange(loads)[:, None] % 32) + lanes
        for start in range(0, loads, 32):
            b.loads(w, "ds_load_b128", block[start : start + 32])
            b.wait_ds(w, 16)
        b.wait_ds(w, 0)
    b.barrier()
    for w in range(num_warps):
        b.clock(w, "end")
    return b.build()


def best_cpu(run, repeat: int) -> tuple[float, object]:
    """The shortest CPU time of ``repeat`` calls of ``run()``, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.process_time()
        result = run()
        best = min(best, time.process_time() - t0)
    return best, result


@njit(cache=True)
def read_every_address(addr):
    """The floor: every address of the trace read once (summed)."""
    total = 0
    for r in range(addr.shape[0]):
        for lane in range(addr.shape[1]):
            total += addr[r, lane]
    return total


def fresh(trace):
    """A copy of ``trace`` that has not been validated (a Trace remembers that it was)."""
    return dataclasses.replace(trace)


def validation_cpu(trace, check, lds_bytes: int, repeat: int) -> float:
    """Best CPU seconds of ``check(fresh trace, lds_bytes)``; the copies are made untimed."""
    best = float("inf")
    for _ in range(repeat):
        copy = fresh(trace)
        t0 = time.process_time()
        check(copy, lds_bytes)
        best = min(best, time.process_time() - t0)
    return best


def measure_fast(warps: int, loads: int, repeat: int) -> dict:
    """CPU seconds of the fast engine (whichever ``wgpsim`` is imported) per case: its run and
    its validation of a fresh trace (the numpy one if it has none of its own)."""
    from wgpsim.engine import fast

    hw = load_hardware()
    check = getattr(fast, "validate", validate)
    fast.run(streaming_trace(2, 2, False), hw)  # compile (or load the cache) untimed
    check(streaming_trace(2, 2, False), hw.partitions.lds_bytes)
    out = {}
    for shared in (False, True):
        trace = streaming_trace(warps, loads, shared)
        run, result = best_cpu(lambda: fast.run(trace, hw), repeat)  # noqa: B023
        lds = hw.partitions.lds_bytes
        out[str(shared)] = {
            "run": run,
            "passes": result.passes,
            "validate": validation_cpu(trace, check, lds, repeat),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warps", type=int, default=8)
    parser.add_argument("--loads", type=int, default=20000, help="loads per warp")
    parser.add_argument("--repeat", type=int, default=5, help="runs per engine (best is shown)")
    parser.add_argument("--baseline", default=BASELINE, help="commit of the baseline engine")
    args = parser.parse_args()
    hw = load_hardware()
    base = measure_at(
        args.baseline,
        "engine_throughput",
        f"measure_fast({args.warps}, {args.loads}, {args.repeat})",
    )
    print(
        f"{args.warps} warps x {args.loads} ds_load_b128, CPU seconds, best of {args.repeat}; "
        f"load average {os.getloadavg()[0]:.1f}; baseline: the fast engine of {args.baseline}"
    )
    for engine in ENGINES:  # compile (or load the compiled cache) outside the timings
        simulate(streaming_trace(2, 2, False), engine=engine)
    print(
        f"{'case':<16}{'engine':<9}{'passes':>8}{'cycles':>8}{'CPU s':>8}{'passes/s':>12}"
        f"{'vs des':>8}{'x floor':>8}{'vs base':>8}"
    )
    for shared in (False, True):
        trace = streaming_trace(args.warps, args.loads, shared)
        case = "one partition" if shared else "two partitions"
        floor, _ = best_cpu(lambda: read_every_address(trace.addr), args.repeat)  # noqa: B023
        des = None
        for engine in ENGINES:
            module = importlib.import_module(f"wgpsim.engine.{engine}")
            cpu, result = best_cpu(lambda: module.run(trace, hw), args.repeat)  # noqa: B023
            des = des or cpu
            rate = result.passes / cpu
            vs_base = ""
            if engine == "fast" and base:
                b = base[str(shared)]
                vs_base = f"{rate / (b['passes'] / b['run']):>7.2f}x"
            print(
                f"{case:<16}{engine:<9}{result.passes:>8}{result.total_cycles:>8}{cpu:>8.4f}"
                f"{rate:>12,.0f}{des / cpu:>8.1f}{cpu / floor:>7.1f}x{vs_base:>8}"
            )
        if base:
            b = base[str(shared)]
            print(
                f"{case:<16}{'base':<9}{b['passes']:>8}{'':>8}{b['run']:>8.4f}"
                f"{b['passes'] / b['run']:>12,.0f}{des / b['run']:>8.1f}{b['run'] / floor:>7.1f}x"
            )
        print(f"{case:<16}{'floor':<9}{'':>8}{'':>8}{floor:>8.4f}")
    trace = streaming_trace(args.warps, args.loads, False)
    per = 1e6 / len(trace)
    lds = hw.partitions.lds_bytes
    from wgpsim.engine.fast import validate as compiled

    numpy_s = validation_cpu(trace, validate, lds, args.repeat) * per
    compiled_s = validation_cpu(trace, compiled, lds, args.repeat) * per
    line = f"validation of a fresh trace, CPU-s per 1 M rows: numpy {numpy_s:.3f}, fast {compiled_s:.4f}"
    if base:
        line += f", baseline {base['False']['validate'] * per:.3f}"
    print(line + f" ({len(trace):,} rows timed)")


if __name__ == "__main__":
    main()
