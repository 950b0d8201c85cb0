"""Peak memory of loading and replaying a 1 M-instruction trace with the fast engine.

A plain script (not a test): ``python benchmarks/memory.py [--instructions 1000000]``.
It generates a streaming trace (8 warps of back-to-back ``ds_load_b128``, a ``wait_ds`` every
32 loads), writes it to Parquet in a temporary directory, then, in a fresh child process so
that generating it does not count, reads it back and replays it with ``engine="fast"``.
Reported: the Python-heap peak (tracemalloc, which sees numpy arrays but not Arrow's buffers)
and the process's peak resident set (VmHWM) after the imports and after the replay.
Target: load + replay under 200 MB.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

MB = 1 << 20


def make_trace(instructions: int, warps: int = 8):
    """``instructions`` LDS loads over ``warps`` warps (pairs on separate partitions)."""
    from wgpsim.hw import load_hardware
    from wgpsim.trace.trace import TraceBuilder

    hw = load_hardware()
    lanes = 16 * np.arange(hw.wgp.warp_size)
    loads = instructions // warps
    b = TraceBuilder(warps)
    for w in range(warps):
        base = (w // 2) * 16384 + hw.pair_of_warp(w) * hw.partitions.size
        block = base + 512 * (np.arange(loads)[:, None] % 32) + lanes
        for start in range(0, loads, 32):
            b.loads(w, "ds_load_b128", block[start : start + 32])
            b.wait_ds(w, 16)
        b.wait_ds(w, 0)
    return b.build()


def _max_rss_mb() -> float:
    """This process's peak resident set: VmHWM (reset by exec, unlike ru_maxrss, which a
    child inherits from the parent it was forked from), else ru_maxrss."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    line = next(x for x in status.splitlines() if x.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def measure(path: Path) -> dict:
    """Load ``path`` and replay it with the fast engine (in this process); peak figures."""
    from wgpsim.engine import simulate
    from wgpsim.trace.io import read_trace

    simulate(make_trace(64), engine="fast")  # compile or load the compiled cache first
    rss_before = _max_rss_mb()
    tracemalloc.start()
    t0 = time.perf_counter()
    trace = read_trace(path)
    t1 = time.perf_counter()
    result = simulate(trace, engine="fast")
    t2 = time.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "rows": len(trace),
        "passes": result.passes,
        "cycles": result.total_cycles,
        "trace_mb": sum(a.nbytes for a in (trace.warp, trace.op, trace.arg, trace.addr)) / MB,
        "tracemalloc_peak_mb": peak / MB,
        "rss_after_imports_mb": rss_before,
        "rss_peak_mb": _max_rss_mb(),
        "load_s": t1 - t0,
        "replay_s": t2 - t1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instructions", type=int, default=1_000_000)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the child's job
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return
    from wgpsim.trace.io import write_trace

    with tempfile.TemporaryDirectory() as tmp:
        path = write_trace(make_trace(args.instructions), Path(tmp) / "trace.parquet")
        size = path.stat().st_size / MB
        child = subprocess.run(
            [sys.executable, __file__, "--measure", str(path)],
            check=True,
            capture_output=True,
            text=True,
        )
    m = json.loads(child.stdout)
    print(f"trace: {m['rows']:,} rows, {m['passes']:,} passes, {m['cycles']:,} cycles")
    print(f"  Parquet file {size:.1f} MB, in memory {m['trace_mb']:.1f} MB (columns)")
    print(f"  load {m['load_s']:.2f} s, replay {m['replay_s']:.2f} s (fast engine)")
    print(f"  tracemalloc peak (load + replay):   {m['tracemalloc_peak_mb']:7.1f} MB")
    print(f"  peak RSS after imports and warm-up: {m['rss_after_imports_mb']:7.1f} MB")
    print(f"  peak RSS after load + replay:       {m['rss_peak_mb']:7.1f} MB")
    growth = m["rss_peak_mb"] - m["rss_after_imports_mb"]
    print(f"  RSS growth of load + replay:        {growth:7.1f} MB (target < 200 MB)")


if __name__ == "__main__":
    main()
