"""How fast each timing engine simulates: LDS passes per wall-clock second.

A plain script (not a test): ``python benchmarks/engine_throughput.py [--warps 8] [--loads 20000]``.
The trace streams conflict-free ``ds_load_b128`` in every warp, pairs on separate partitions and,
as a second case, on one partition (so the arbiter both grants in parallel and serializes).
Add an engine name to ``ENGINES`` (a module ``wgpsim.engine.<name>``) to compare it with ``des``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from wgpsim.engine import simulate
from wgpsim.hw import load_hardware
from wgpsim.trace.trace import TraceBuilder

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warps", type=int, default=8)
    parser.add_argument("--loads", type=int, default=20000, help="loads per warp")
    args = parser.parse_args()
    print(f"{args.warps} warps x {args.loads} ds_load_b128")
    for engine in ENGINES:  # compile (or load the compiled cache) outside the timings
        simulate(streaming_trace(2, 2, False), engine=engine)
    print(
        f"{'case':<18}{'engine':<8}{'passes':>10}{'cycles':>10}{'wall s':>9}{'passes/s':>12}{'vs des':>8}"
    )
    for shared in (False, True):
        trace = streaming_trace(args.warps, args.loads, shared)
        case = "one partition" if shared else "two partitions"
        base_rate = None
        for engine in ENGINES:
            t0 = time.perf_counter()
            result = simulate(trace, engine=engine)
            wall = time.perf_counter() - t0
            rate = result.passes / wall
            base_rate = base_rate or rate
            print(
                f"{case:<18}{engine:<8}{result.passes:>10}{result.total_cycles:>10}"
                f"{wall:>9.2f}{rate:>12,.0f}{rate / base_rate:>8.2f}"
            )


if __name__ == "__main__":
    main()
