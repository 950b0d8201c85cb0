"""CPU seconds of ``wgpsim search --block 128x128x64 --warps 4 --workers 1`` (the AMD blog's
Part II tile, the whole 4-warp space: 472,500 candidates), against its target and a previous
revision measured in the same run (issue 29: 12 CPU-s measured, target <= 5).

    python benchmarks/search_speed.py                   # this tree, and 15b38f8 beside it
    python benchmarks/search_speed.py --against main --repeat 5

The command runs as a user runs it, in a child process (``python -m wgpsim``, the fast engine's
cache warm: one untimed run first); the figure is the child's user + system CPU time
(``resource.getrusage(RUSAGE_CHILDREN)``), the best of ``--repeat`` runs, so the load of other
processes on the machine matters less than for wall time (it is printed: ``os.getloadavg``).
The previous revision (``--against``, default 15b38f8: main before the layout search was made
faster) is exported by ``benchmarks/revision.py`` and measured the same way in its own child.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
from pathlib import Path

from revision import here_and_at

COMMAND = ["search", "--block", "128x128x64", "--warps", "4", "--workers", "1"]
TARGET = 5.0
"""CPU seconds (issue 29)."""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(repeat: int) -> float:
    """Best CPU seconds of ``repeat`` runs of :data:`COMMAND` on the package this process
    imports (run in its directory; one untimed run first)."""
    import wgpsim

    root = Path(wgpsim.__file__).resolve().parents[1]
    best = float("inf")
    for run in range(repeat + 1):
        start = _children_cpu()
        subprocess.run(
            [sys.executable, "-m", "wgpsim", *COMMAND],
            cwd=root, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        if run:  # the first run may compile the fast engine or fill caches
            best = min(best, _children_cpu() - start)
    return round(best, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="15b38f8", help="previous revision (git)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (best kept)")
    args = parser.parse_args()
    call = f"measure({args.repeat})"
    now, before, load = here_and_at(
        parser, args.against, "search_speed", call, lambda: measure(args.repeat)
    )
    print(f"wgpsim {' '.join(COMMAND)}")
    verdict = "met" if now <= TARGET else "NOT met"
    print(f"  this tree: {now:.2f} CPU-s (best of {args.repeat}); target <= {TARGET:g}: {verdict}")
    print(f"  {args.against}: {before:.2f} CPU-s ({before / now:.1f}x this tree's)")
    print(f"  load average {load[0]:.2f} before, {load[1]:.2f} after, on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
