"""How much CPU wgpsim's first commands cost: ``import wgpsim``, ``wgpsim --help`` and a warm
``wgpsim run configs/lds_bandwidth.yaml``.

A plain script (not a test: timings on a shared machine are not assertions)::

    python benchmarks/startup.py [--repeat 5]
    git archive main | tar -x -C /tmp/main && python benchmarks/startup.py --against /tmp/main

Each command runs in a fresh interpreter (``sys.executable``, ``python -m wgpsim`` for the
command, in the checkout measured and with it first on ``PYTHONPATH``); its cost is the CPU time
(user + system) of that child, read with ``resource.getrusage(RUSAGE_CHILDREN)`` before and after
it (CPU seconds, not wall time: other processes on a loaded machine stretch wall time but not the
child's CPU). The best of ``--repeat`` runs is kept (the least disturbed one), the commands taking
turns so that a change of the machine's load hits every one. The ``run`` is warm: it is run once,
untimed, first, so numba's cache and the ``.pyc`` files are written; its output goes to a
temporary directory.

Each figure is printed with its ratio to issue 18's target and to a floor measured beside it in
the same run (:data:`FLOORS`: a bare ``python -c pass``; for the run, importing the libraries it
needs, numpy, yaml, simpy, rich and matplotlib's Figure with the Agg canvas); with ``--against
CHECKOUT``, also with the same command's figure on that checkout (the old code path).

Measured 2026-12-03 after the run stopped importing pandas (``wgpsim.columns``, the clock reads
as arrays; this 2-core machine, load average 1-1.5 from this engineer's tests, other engineers
idle; best of 5, ``--against`` main at f206180):

=================================  =====  ======  =======================  ==========
command                            CPU s  target  floor                    vs main
=================================  =====  ======  =======================  ==========
``import wgpsim``                  0.03   0.2     ``pass`` 0.03 (1.03x)    0.03 (1.0x)
``wgpsim --help``                  0.05   0.3     ``pass`` 0.03 (1.66x)    0.05 (1.0x)
warm ``run`` lds_bandwidth         0.74   1.5     libraries 0.50 (1.47x)   1.00 (0.74x)
=================================  =====  ======  =======================  ==========

(Another run the same morning, load 1.4: 0.82 against main's 1.04, 0.78x; at load 0, main's run
was 1.09.) What the warm run costs now, from ``-X importtime`` and ``cProfile`` in the child:
matplotlib's import 0.25-0.27 (about 0.05 of it matplotlib building the docstrings of every
artist's ``set``) and the figure's ``savefig`` 0.13 (``bbox_inches="tight"`` draws it twice),
numpy 0.09, wgpsim's own modules about 0.06, the 12 ``des`` runs with their traces 0.09, simpy
0.03 (its ``importlib.metadata`` version lookup), yaml and the two config files 0.04, the table
on the terminal 0.02. pandas' import (with pyarrow) was 0.26 of the 1.09. With ``--set
engine=fast`` the run costs 1.34 (numba's import and its cached functions: 0.6), so ``engine:
auto`` stays on ``des`` for it (``wgpsim.engine.auto``). On an empty numba cache the shipped run
costs 0.72 CPU-s and prints nothing on stderr (``benchmarks/first_run.py``); with ``--set
engine=fast`` it costs 16.1 and stderr says ``wgpsim: compiling the fast engine (first run only,
~20 s)...`` before the compile.

Earlier figures, for the record. Load inflates CPU seconds too (the two cores are shared):
main's warm run was 2.2 in the README's figure (2026-12-02, a package install on the other core)
and 1.09 here at load 0 (2026-12-03), so compare figures of one run, not across days.

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
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "lds_bandwidth.yaml"

RUN = "wgpsim run lds_bandwidth (warm)"
TARGETS = {"import wgpsim": 0.2, "wgpsim --help": 0.3, RUN: 1.5}
"""Issue 18's targets, CPU seconds."""

RUN_LIBRARIES = (
    "numpy",
    "yaml",
    "simpy",
    "rich.console",
    "rich.table",
    "matplotlib.figure",
    "matplotlib.backends.backend_agg",
)
"""What the warm run cannot avoid importing: the des engine's simpy, the figure's matplotlib
(Figure and the Agg canvas only), the table's rich, numpy and yaml."""

FLOORS = {
    "import wgpsim": ("python -c pass", "pass"),
    "wgpsim --help": ("python -c pass", "pass"),
    RUN: ("its libraries' imports", f"import {', '.join(RUN_LIBRARIES)}"),
}
"""Per command, the floor measured beside it: a bare interpreter, and for the run the imports of
the libraries it needs (so ``vs floor`` is what wgpsim's own code and work add on top)."""


def cpu_seconds(argv: list[str], side: tuple[Path, dict[str, str]]) -> float:
    """The CPU time (user + system) of running ``argv`` to completion in a child process in
    ``side``'s checkout (its directory: ``python -m`` imports from there first) and
    environment."""
    cwd, env = side
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def commands(out: Path) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "import wgpsim": [py, "-c", "import wgpsim"],
        "wgpsim --help": [py, "-m", "wgpsim", "--help"],
        RUN: [py, "-m", "wgpsim", "run", str(CONFIG), "--out", str(out)],
    }


def checkout(path: Path) -> tuple[Path, dict[str, str]]:
    """The directory and environment that make ``path`` the wgpsim a child imports."""
    path = path.resolve()
    paths = os.pathsep.join([str(path), os.environ.get("PYTHONPATH", "")])
    return path, dict(os.environ, PYTHONPATH=paths)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (best kept)")
    parser.add_argument(
        "--against",
        type=Path,
        metavar="CHECKOUT",
        help="also measure this checkout of wgpsim (e.g. `git archive main | tar -x -C DIR`), "
        "interleaved with this one, and print the ratio",
    )
    args = parser.parse_args()
    sides = {"this": checkout(ROOT)}
    if args.against is not None:
        sides["against"] = checkout(args.against)
    with tempfile.TemporaryDirectory() as tmp:
        cmds = commands(Path(tmp) / "out")
        for side in sides.values():
            cpu_seconds(cmds[RUN], side)  # warm numba's cache and the .pyc files
        floors = {text: [sys.executable, "-c", text] for _, text in FLOORS.values()}
        best: dict[tuple[str, str], float] = {}
        for _ in range(args.repeat):  # interleaved: a change in the machine's load hits all
            for name, argv in cmds.items():
                for side in sides:
                    key = (name, side)
                    best[key] = min(best.get(key, float("inf")), cpu_seconds(argv, sides[side]))
            for text, argv in floors.items():
                key = (text, "floor")
                best[key] = min(best.get(key, float("inf")), cpu_seconds(argv, sides["this"]))
    load = os.getloadavg()[0]
    print(f"CPU seconds, best of {args.repeat} (load average {load:.1f} at the end)")
    header = (
        f"{'command':32} {'CPU s':>6} {'target':>6} {'vs target':>9}  {'floor':>22} {'vs floor':>8}"
    )
    if args.against is not None:
        header += f" {'against':>7} {'vs against':>10}"
    print(header)
    for name in cmds:
        cpu, target = best[(name, "this")], TARGETS[name]
        floor_name, floor_text = FLOORS[name]
        floor = best[(floor_text, "floor")]
        line = (
            f"{name:32} {cpu:6.2f} {target:6.2f} {cpu / target:8.2f}x  "
            f"{floor_name + f' {floor:.2f}':>22} {cpu / floor:7.2f}x"
        )
        if args.against is not None:
            other = best[(name, "against")]
            line += f" {other:7.2f} {cpu / other:9.2f}x"
        print(line)


if __name__ == "__main__":
    main()
