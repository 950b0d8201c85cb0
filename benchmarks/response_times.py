"""How quickly wgpsim gives up or stops: wall-clock limits that used to be test assertions.

A plain script (not a test: a loaded machine makes any wall-clock bound flaky)::

    python benchmarks/response_times.py

prints, each the slowest of ``--repeat`` runs, with the limit the design promises
(docs/DESIGN.md, "Sweeps"):

* an unreachable Dask scheduler (``tcp://127.0.0.1:1``) is refused within the executor's
  ``CONNECT_TIMEOUT`` (3 s) plus start-up, by ``run_points`` and by ``wgpsim run --scheduler``;
* a sweep interrupted (Ctrl-C) at point 30 of 60 stops its workers at once rather than draining
  the queue: well under the 60 x 10 ms the remaining points would take one by one, in-process
  and on 2 local workers.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
import time
from pathlib import Path

import wgpsim.sweeps.executor as executor
from wgpsim.cli import main
from wgpsim.errors import ConfigError
from wgpsim.sweeps.executor import Checkpoint, run_points

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "lds_bandwidth.yaml"


def interrupt_at(point: tuple[int, int]) -> dict[str, int]:
    """Ctrl-C while running point ``bad``; 10 ms of work otherwise."""
    index, bad = point
    if index == bad:
        raise KeyboardInterrupt
    time.sleep(0.01)
    return {"point": index}


def refuse_scheduler() -> float:
    start = time.perf_counter()
    with contextlib.suppress(ConfigError):
        run_points(abs, [1, 2], scheduler="tcp://127.0.0.1:1")
    return time.perf_counter() - start


def refuse_scheduler_cli() -> float:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        main(["run", str(CONFIG), "--out", out, "--scheduler", "tcp://127.0.0.1:1"])
        return time.perf_counter() - start


def interrupted_sweep(workers: int) -> float:
    executor.INLINE_SECONDS, executor.CHUNK_SECONDS = 0.0, 1e-9  # every point to the pool
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        with contextlib.suppress(KeyboardInterrupt):
            run_points(
                interrupt_at,
                [(i, 30) for i in range(60)],
                workers=workers,
                checkpoint=Checkpoint(Path(tmp) / "c.jsonl"),
                fp="x",
            )
        return time.perf_counter() - start


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    limit = executor.CONNECT_TIMEOUT
    rows = [
        ("unreachable scheduler, run_points", refuse_scheduler, f"< {limit} s + start-up"),
        ("unreachable scheduler, wgpsim run", refuse_scheduler_cli, f"< {limit} s + start-up"),
        ("Ctrl-C at point 30/60, in-process", lambda: interrupted_sweep(1), "< 10 s"),
        ("Ctrl-C at point 30/60, 2 workers", lambda: interrupted_sweep(2), "< 10 s"),
    ]
    for name, measure, promise in rows:
        slowest = max(measure() for _ in range(args.repeat))
        print(f"{name:40} {slowest:6.2f} s  (promised {promise})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
