"""CPU seconds of ``wgpsim kernel examples/kernels/<example>`` for every shipped example, with
and without ``--loop-timing``, against the target (issue 29: <= 0.5 CPU-s each) and a previous
revision measured in the same run.

    python benchmarks/kernel_speed.py                   # this tree, and 6ea0fdd beside it
    python benchmarks/kernel_speed.py --against main --repeat 5 --only matmul

Each command runs as a user runs it, in a child process (``python -m wgpsim``), warm: the fast
engine compiled into numba's cache once (an untimed ``--engine fast`` run of the attention
example's loop, which needs every compiled function) and one untimed run of each command
first; Python may write its bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped for the
children, as an installed package has its ``.pyc``). The figure is the child's user + system
CPU time (``resource.getrusage(RUSAGE_CHILDREN)``), the best of ``--repeat`` runs, so the load
of other processes matters less than for wall time (it is printed: ``os.getloadavg``). The
previous revision (``--against``, default 6ea0fdd: main before issue 29's kernel work) is
exported by ``benchmarks/revision.py`` and measured the same way in its own child.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
from pathlib import Path

from revision import here_and_at

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernels"
TARGET = 0.5
"""CPU seconds per report, with or without ``--loop-timing`` (issue 29)."""
MODES = {"report": [], "--loop-timing": ["--loop-timing"]}


def examples() -> list[str]:
    """The shipped examples' folder names, sorted."""
    return sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir() and not p.name.startswith("_"))


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(root: Path, args: list[str]) -> float:
    """CPU seconds of one ``python -m wgpsim ARGS`` in ``root``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start = _children_cpu()
    subprocess.run(
        [sys.executable, "-m", "wgpsim", *args],
        cwd=root, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    return _children_cpu() - start


def measure(repeat: int, only: list[str] | None = None) -> dict[str, dict[str, float]]:
    """{example: {mode: best CPU seconds of ``repeat`` runs}} on the package this process
    imports (run in its directory, warm as the module's docstring says)."""
    import wgpsim

    root = Path(wgpsim.__file__).resolve().parents[1]
    warm = ["kernel", "examples/kernels/attention", "--loop-timing", "--engine", "fast"]
    _run(root, warm)  # the fast engine in numba's cache (compiled on first use only)
    out: dict[str, dict[str, float]] = {}
    for name in only or examples():
        out[name] = {}
        for mode, flags in MODES.items():
            command = ["kernel", f"examples/kernels/{name}", *flags]
            _run(root, command)  # untimed: bytecode, caches
            best = min(_run(root, command) for _ in range(repeat))
            out[name][mode] = round(best, 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="6ea0fdd", help="previous revision (git)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs (best kept)")
    parser.add_argument("--only", action="append", help="an example (repeat for several)")
    args = parser.parse_args()
    call = f"measure({args.repeat}, {args.only!r})"
    now, before, load = here_and_at(
        parser, args.against, "kernel_speed", call, lambda: measure(args.repeat, args.only)
    )
    print(f"wgpsim kernel examples/kernels/EXAMPLE [--loop-timing]: CPU-s, best of {args.repeat}")
    print(f"{'example':<28}{'report':>8}{'loop':>8}   {args.against + ': report':>16}{'loop':>8}")
    missed = 0
    for name, modes in now.items():
        old = before.get(name, {})
        missed += sum(v > TARGET for v in modes.values())
        marks = ["" if modes[m] <= TARGET else "*" for m in MODES]
        print(
            f"{name:<28}{modes['report']:>7.2f}{marks[0]:1}{modes['--loop-timing']:>7.2f}{marks[1]:1}"
            f"  {old.get('report', float('nan')):>16.2f}{old.get('--loop-timing', float('nan')):>8.2f}"
        )
    total = 2 * len(now)
    print(f"target <= {TARGET:g} CPU-s each: met by {total - missed} of {total} (* = not met)")
    print(f"load average {load[0]:.2f} before, {load[1]:.2f} after, on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
