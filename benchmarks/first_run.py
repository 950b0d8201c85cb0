"""What the first ``wgpsim run configs/lds_bandwidth.yaml`` on a fresh machine costs: numba has
no cache yet and compiles the fast engine.

A plain script (not a test: timings on a shared machine are not assertions)::

    python benchmarks/first_run.py                 # the shipped settings
    python benchmarks/first_run.py --opt 3 2 1 0   # the options measured for docs/DESIGN.md
    python benchmarks/first_run.py --fast          # also with --set engine=fast: the compile

A fresh machine is an empty ``NUMBA_CACHE_DIR`` (numba's cache is otherwise the ``__pycache__``
directories beside ``wgpsim/engine``; with the variable set it lives there instead, so the
checkout's own cache is not touched). The command runs in a fresh interpreter (``python -m
wgpsim``, so the checkout on ``PYTHONPATH`` is the one measured) and its cost is its CPU time
(user + system, ``getrusage(RUSAGE_CHILDREN)``): the machine is shared with other agents, which
stretches wall time but much less the child's CPU time.

With ``--opt N`` the child also gets ``NUMBA_OPT=N`` (LLVM's optimisation level; numba's default
is 3), and a second child, on the cache the first one wrote, measures what that costs the engine:
passes per CPU second of the fast engine on ``benchmarks/engine_throughput.py``'s long trace (8
warps x 20,000 ``ds_load_b128``, two partitions).

Baseline: issue 18's 32.5 CPU-s (2026-12-01, this 2-core machine, before this script existed);
target: 10 CPU-s.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "lds_bandwidth.yaml"
TARGET, BASELINE = 10.0, 32.5

SPEED = """
import resource, sys
sys.path.insert(0, {bench!r})
from engine_throughput import streaming_trace
from wgpsim.engine import fast
from wgpsim.hw import load_hardware
hw = load_hardware()
fast.run(streaming_trace(2, 2, False), hw)  # load (or compile) outside the timing
trace = streaming_trace(8, 20000, False)
best = float("inf")
for _ in range(3):
    t0 = resource.getrusage(resource.RUSAGE_SELF)
    r = fast.run(trace, hw)
    t1 = resource.getrusage(resource.RUSAGE_SELF)
    best = min(best, t1.ru_utime - t0.ru_utime + t1.ru_stime - t0.ru_stime)
print(r.passes / best)
"""


def child_cpu(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    """CPU seconds (user + system) of running ``argv`` to completion, and its stdout."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        argv, cwd=ROOT, env=env, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, done.stdout.decode()


def measure(opt: int | None, fast: bool = False) -> tuple[float, float | None]:
    """(CPU-s of the first run on an empty cache, engine passes per CPU-s or None); ``fast``:
    the run sets ``engine=fast`` (so it compiles the fast engine: the line saying so shows)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "numba"))
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        if opt is not None:
            env["NUMBA_OPT"] = str(opt)
        argv = [sys.executable, "-m", "wgpsim", "run", str(CONFIG), "--out", f"{tmp}/out"]
        argv += ["--set", "engine=fast"] if fast else []
        first, _ = child_cpu(argv, env)
        if opt is None:
            return first, None
        code = SPEED.format(bench=str(ROOT / "benchmarks"))
        _, out = child_cpu([sys.executable, "-c", code], env)
        return first, float(out.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opt", type=int, nargs="*", help="NUMBA_OPT levels to compare")
    parser.add_argument("--fast", action="store_true", help="also with --set engine=fast")
    args = parser.parse_args()
    print("first `wgpsim run configs/lds_bandwidth.yaml`, empty numba cache (CPU seconds;")
    print(f"shared machine, load average {os.getloadavg()[0]:.1f}); target {TARGET}, baseline")
    print(f"{BASELINE} (issue 18)")
    print(f"{'setting':14} {'CPU s':>7} {'vs target':>10} {'vs baseline':>12} {'passes/CPU-s':>13}")
    for opt in args.opt or [None]:
        first, speed = measure(opt)
        name = "shipped" if opt is None else f"NUMBA_OPT={opt}"
        rate = "" if speed is None else f"{speed:13,.0f}"
        print(f"{name:14} {first:7.2f} {first / TARGET:9.2f}x {first / BASELINE:11.2f}x {rate}")
    if args.fast:
        first, _ = measure(None, fast=True)
        print(f"{'engine=fast':14} {first:7.2f} {first / TARGET:9.2f}x {first / BASELINE:11.2f}x")


if __name__ == "__main__":
    main()
