"""How a layout sweep scales: 1,000 shared-layout candidates on 1 and 2 local workers and Dask.

A plain script (not a test)::

    python benchmarks/sweep_scaling.py [--candidates 1000] [--burst 16] [--no-dask]

Each candidate is a shared layout for the seed's microbenchmark tensor ``[warps, N]`` (swizzled
vec/perPhase/maxPhase, padded intervals, partitioned numPartitions/numGroups/partitionDim
over swizzled inner layouts; 2, 4 and 8 warps), evaluated as ``wgpsim run`` evaluates one sweep
point of ``configs/lds_bandwidth.yaml``: layout -> addresses -> allocator -> trace -> the fast
engine, at one burst length. The same points go through ``wgpsim.sweeps.executor`` with
1 worker (in this process), 2 local worker processes, and a local Dask cluster of 2 worker
processes on loopback; the script checks that the three give the same rows, then prints the
wall times, throughput, speedup and parallel efficiency (T1 / (2 x T2)). Each executor runs
``--repeat`` times and the fastest run is reported (the machine may be shared); the Dask
cluster's first sweep (its workers import wgpsim and load the compiled engine) is reported on
its own.
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from collections.abc import Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path

from wgpsim.errors import AllocationError, LayoutError, TraceError
from wgpsim.layout.notation import parse
from wgpsim.microbench.bandwidth import LdsBandwidthConfig, measure, parse_config, prepare
from wgpsim.sweeps.config import load_config
from wgpsim.sweeps.executor import run_points

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "lds_bandwidth.yaml"
DISTRIBUTED = (
    "#ttg.blocked<{{sizePerThread = [1, 8], threadsPerWarp = [1, 32], "
    "warpsPerCTA = [{warps}, 1], order = [1, 0]}}>"
)
SWIZZLED = "#ttg.swizzled_shared<{{vec = {}, perPhase = {}, maxPhase = {}, order = [{}, {}]}}>"
PADDED = "#ttg.padded_shared<[{}:+{}] {{order = [{}, {}], shape = [{}, {}]}}>"
PARTITIONED = (
    "#ttg.partitioned_shared<{{numPartitions = {}, numGroups = {}, partitionDim = {}, "
    "partitionLayout = {}}}>"
)


def configs(burst: int, warp_counts: tuple[int, ...]) -> dict[int, LdsBandwidthConfig]:
    """The microbenchmark config at each warp count with the fast engine, by warp count."""
    raw, source = load_config(CONFIG)
    out = {}
    for warps in warp_counts:
        changes = {"warps": warps, "distributed": DISTRIBUTED.format(warps=warps)}
        changes |= {"engine": "fast", "burst_lengths": [1, burst], "report_burst": burst}
        out[warps] = parse_config({**raw, **changes}, source)
    return out


def shared_layouts(shape: tuple[int, int]) -> Iterator[str]:
    """Swizzled, padded and partitioned candidates for ``shape`` (``#ttg`` text)."""
    rows, cols = shape
    for vec, per_phase, max_phase in itertools.product(
        (1, 2, 4, 8, 16, 32, 64), (1, 2, 4, 8, 16), (1, 2, 4, 8, 16, 32)
    ):
        yield SWIZZLED.format(vec, per_phase, max_phase, 1, 0)
    for interval, pad in itertools.product((64, 128, 256, 512, 1024, 2048, 4096), (8, 16, 32, 64)):
        yield PADDED.format(interval, pad, 1, 0, rows, cols)
    for parts, groups, dim, vec, per_phase, max_phase in itertools.product(
        (2, 4), (1, 2, 4), (0, 1), (8, 16, 32), (1, 2, 4), (1, 4, 16)
    ):
        inner = SWIZZLED.format(vec, per_phase, max_phase, 1, 0)
        yield PARTITIONED.format(parts, groups, dim, inner)


def valid_points(cfg: LdsBandwidthConfig, burst: int) -> Iterator[tuple[int, str]]:
    """``(warps, layout text)`` for the candidates that the microbenchmark can load with its
    instruction (a swizzle or padding that splits a lane's 16-byte vector is skipped)."""
    for text in shared_layouts(cfg.shape(burst)):
        try:
            prepare(replace(cfg, layouts={"c": parse(text)}), "c", burst)
        except (LayoutError, AllocationError, TraceError):
            continue
        yield cfg.warps, text


def candidates(cfgs: dict[int, LdsBandwidthConfig], burst: int, count: int) -> list[tuple]:
    """The first ``count`` valid points, taking one from each warp count in turn."""
    streams = [valid_points(cfg, burst) for cfg in cfgs.values()]
    mixed = itertools.chain.from_iterable(itertools.zip_longest(*streams))
    points = list(itertools.islice((p for p in mixed if p is not None), count))
    if len(points) < count:
        raise SystemExit(f"only {len(points)} valid candidates; ask for fewer")
    return points


def measure_candidate(cfgs: dict[int, LdsBandwidthConfig], burst: int, point: tuple) -> dict:
    """One point: candidate ``(warps, layout text)`` through the microbenchmark, one row."""
    warps, text = point
    cfg = replace(cfgs[warps], layouts={"candidate": parse(text)})
    row = measure(cfg, prepare(cfg, "candidate", burst))
    return {"warps": warps, **row, "layout": text}


def cpu_timed(fn, point) -> tuple[dict, float, int]:
    """``fn(point)`` with the CPU seconds it took and the process it ran in."""
    start = time.process_time()
    row = fn(point)
    return row, time.process_time() - start, os.getpid()


def timed(points: list, fn, **where) -> dict:
    """Run the sweep once: wall seconds, CPU seconds (this process and the points run
    elsewhere), the load average before it, the rows."""
    load = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    out = run_points(partial(cpu_timed, fn), points, **where)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    elsewhere = sum(seconds for _, seconds, pid in out if pid != os.getpid())
    return {"wall": wall, "cpu": cpu + elsewhere, "load": load, "rows": [r for r, *_ in out]}


def best_of(repeat: int, points: list, fn, executors: dict[str, dict]) -> dict[str, dict]:
    """Each executor ``repeat`` times, taking turns (so a busy spell of the machine hits all of
    them alike); the fastest run of each."""
    best: dict[str, dict] = {}
    for _ in range(repeat):
        for name, where in executors.items():
            run = timed(points, fn, **where)
            if name not in best or run["wall"] < best[name]["wall"]:
                best[name] = run
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--burst", type=int, default=16, help="loads per warp (one burst)")
    parser.add_argument("--warps", type=int, nargs="+", default=[2, 4, 8], help="warp counts")
    parser.add_argument("--repeat", type=int, default=3, help="runs per executor; the fastest")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask cluster")
    args = parser.parse_args()

    start = time.perf_counter()
    cfgs = configs(args.burst, tuple(args.warps))
    points = candidates(cfgs, args.burst, args.candidates)
    fn = partial(measure_candidate, cfgs, args.burst)
    fn(points[0])  # load the compiled engine once, before any timing
    per_warps = ", ".join(f"{sum(p[0] == w for p in points)} at {w} warps" for w in cfgs)
    print(
        f"{len(points)} candidates ({per_warps}), burst {args.burst}; "
        f"generated, checked and warmed up in {time.perf_counter() - start:.1f} s"
    )

    local = {"local, 1 worker": {"workers": 1}, "local, 2 workers": {"workers": 2}}
    if args.no_dask:
        runs = best_of(args.repeat, points, fn, local)
    else:
        from distributed import LocalCluster

        start = time.perf_counter()
        with LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster:
            print(f"Dask LocalCluster (2 processes) started in {time.perf_counter() - start:.1f} s")
            address = cluster.scheduler_address
            cold = timed(points, fn, scheduler=address)
            runs = best_of(args.repeat, points, fn, {**local, "Dask 2": {"scheduler": address}})
            runs["Dask 2, first sweep"] = cold

    reference = runs["local, 1 worker"]
    for name, run in runs.items():
        assert run["rows"] == reference["rows"], f"{name}: rows differ from the in-process run"
    print(
        f"{'executor':<21}{'wall s':>8}{'cand/s':>8}{'speedup':>9}{'efficiency':>12}"
        f"{'CPU s':>8}{'load':>6}"
    )
    for name, run in runs.items():
        workers = 1 if "1 worker" in name else 2
        speedup = reference["wall"] / run["wall"]
        print(
            f"{name:<21}{run['wall']:>8.2f}{len(points) / run['wall']:>8.1f}{speedup:>8.2f}x"
            f"{speedup / workers:>11.0%}{run['cpu']:>8.2f}{run['load']:>6.1f}"
        )
    print(
        "rows identical across executors: yes. efficiency = T1 / (workers x T); CPU s = CPU "
        "seconds this process and the points elsewhere used; load = 1-min load average before "
        f"the run ({os.cpu_count()} cores: above 0 means other work shared them)"
    )


if __name__ == "__main__":
    main()
