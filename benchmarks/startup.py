"""How much CPU wgpsim's first commands cost: ``import wgpsim``, ``wgpsim --help`` and a warm
``wgpsim run configs/lds_bandwidth.yaml``.

A plain script (not a test: timings on a shared machine are not assertions)::

    python benchmarks/startup.py [--repeat 5]

Each command runs in a fresh interpreter (``sys.executable``, ``python -m wgpsim`` for the
command, so the checkout on ``PYTHONPATH`` is the one measured); its cost is the CPU time (user +
system) of that child, read with ``resource.getrusage(RUSAGE_CHILDREN)`` before and after it
(CPU seconds, not wall time: other processes on a loaded machine stretch wall time but not the
child's CPU). The best of ``--repeat`` runs is kept (the least disturbed one). The ``run`` is
warm: it is run once, untimed, first, so the fast engine's compiled functions are in numba's
cache; its output goes to a temporary directory.

Each figure is printed with its ratio to issue 18's target and to the baseline below.

Baseline (2026-12-01, this 2-core machine, loaded: load average ~10, seven other engineers
running tests; best of 5, CPU seconds) measured on main at 3bc10e2, before lazy imports:

* ``import wgpsim``: 0.05
* ``wgpsim --help``: 0.79 (pandas and pyarrow imported, through ``wgpsim.engine.result``)
* warm ``wgpsim run configs/lds_bandwidth.yaml``: 2.87

After lazy imports (same day and machine, equally loaded; best of 3): ``import wgpsim`` 0.06,
``wgpsim --help`` 0.34 (no pandas, pyarrow, numba, matplotlib, scipy, simpy or dask; most of what
is left is numpy), warm ``run`` 2.84 (unchanged: a run builds tables and loads the engine).

After the verbs import what they use in their handlers, the plots one figure family per
experiment kind (``wgpsim.plots.FIGURES``) and the command leaves with ``os._exit`` after
flushing (``wgpsim.cli.entry``; 2026-12-02, the same machine, load average 6, best of 3):
``import wgpsim`` 0.10, ``wgpsim --help`` 0.15 (no numpy, no yaml; a bare ``python -c pass`` is
0.14-0.20 here), warm ``run`` 4.26 (on that load; the same build measured 3.7-4.1 at load 3).

The first run's compile (an empty ``NUMBA_CACHE_DIR``, the first ``simulate()`` of the seed's
microbenchmark): 19.3 CPU-s with every helper forced inline (``inline="always"``); 14.0 CPU-s
with none, but the compiled engine is then 3.6x slower (8.4 M -> 2.3 M passes per CPU-s on 8 warps
x 20,000 b128 loads, separate partitions; 6.7 M -> 1.6 M on one partition), so the inlining stays.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "lds_bandwidth.yaml"

# name: (issue 18's target, baseline above), CPU seconds
TARGETS = {
    "import wgpsim": (0.2, 0.05),
    "wgpsim --help": (0.3, 0.79),
    "wgpsim run lds_bandwidth (warm)": (1.5, 2.87),
}


def cpu_seconds(argv: list[str]) -> float:
    """The CPU time (user + system) of running ``argv`` to completion in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def commands(out: Path) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "import wgpsim": [py, "-c", "import wgpsim"],
        "wgpsim --help": [py, "-m", "wgpsim", "--help"],
        "wgpsim run lds_bandwidth (warm)": [
            py,
            "-m",
            "wgpsim",
            "run",
            str(CONFIG),
            "--out",
            str(out),
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (best kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cmds = commands(Path(tmp) / "out")
        cpu_seconds(cmds["wgpsim run lds_bandwidth (warm)"])  # warm numba's cache
        print(f"{'command':34} {'CPU s':>7} {'target':>7} {'vs target':>10} {'vs baseline':>12}")
        for name, argv in cmds.items():
            best = min(cpu_seconds(argv) for _ in range(args.repeat))
            target, baseline = TARGETS[name]
            print(
                f"{name:34} {best:7.2f} {target:7.2f} {best / target:9.2f}x {best / baseline:11.2f}x"
            )


if __name__ == "__main__":
    main()
