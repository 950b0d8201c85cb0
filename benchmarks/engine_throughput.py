"""How fast each timing engine simulates: LDS passes per wall-clock second.

A plain script (not a test): ``python benchmarks/engine_throughput.py [--warps 8] [--loads 20000]
[--repeat 3]``. The trace streams conflict-free ``ds_load_b128`` in every warp, pairs on separate
partitions and, as a second case, on one partition (so the arbiter both grants in parallel and
serializes). Add an engine name to ``ENGINES`` (a module ``wgpsim.engine.<name>``) to compare it
with ``des``.

Timed: each engine's ``run(trace, hw)``, the best of ``--repeat`` runs (the machine is shared, so
the best run is the least disturbed one). ``simulate()`` also validates the trace, the same work
for every engine; it is timed once and shown separately, with the ratio it leaves
(``vs des, simulate``).
"""

from __future__ import annotations

import argparse
import importlib
import time

import numpy as np

from wgpsim.engine import simulate
from wgpsim.hw import load_hardware
from wgpsim.trace.trace import TraceBuilder
from wgpsim.trace.validate import validate

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


def best_wall(run, repeat: int) -> tuple[float, object]:
    """The shortest of ``repeat`` timed calls of ``run()``, and its result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warps", type=int, default=8)
    parser.add_argument("--loads", type=int, default=20000, help="loads per warp")
    parser.add_argument("--repeat", type=int, default=3, help="runs per engine (best is shown)")
    args = parser.parse_args()
    hw = load_hardware()
    print(f"{args.warps} warps x {args.loads} ds_load_b128, best of {args.repeat}")
    for engine in ENGINES:  # compile (or load the compiled cache) outside the timings
        simulate(streaming_trace(2, 2, False), engine=engine)
    print(
        f"{'case':<16}{'engine':<7}{'passes':>8}{'cycles':>8}{'run s':>8}{'passes/s':>11}"
        f"{'vs des':>8}{'validate s':>11}{'vs des, simulate':>17}"
    )
    for shared in (False, True):
        trace = streaming_trace(args.warps, args.loads, shared)
        case = "one partition" if shared else "two partitions"
        check, _ = best_wall(lambda: validate(trace, hw.partitions.lds_bytes), args.repeat)  # noqa: B023
        base = None
        for engine in ENGINES:
            module = importlib.import_module(f"wgpsim.engine.{engine}")
            wall, result = best_wall(lambda: module.run(trace, hw), args.repeat)  # noqa: B023
            base = base or wall
            print(
                f"{case:<16}{engine:<7}{result.passes:>8}{result.total_cycles:>8}{wall:>8.3f}"
                f"{result.passes / wall:>11,.0f}{base / wall:>8.1f}{check:>11.3f}"
                f"{(base + check) / (wall + check):>17.1f}"
            )


if __name__ == "__main__":
    main()
