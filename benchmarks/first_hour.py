"""A newcomer's first hour on a fresh machine: does any command the README and docs/USAGE.md
show compile the fast engine, and what does each cost? (issue 29: "<= 5 CPU-s, or no compile on
any path a newcomer takes in the first hour").

    python benchmarks/first_hour.py                 # every command below
    python benchmarks/first_hour.py --only search   # the commands whose text holds "search"

Each command runs as a user runs it (``python -m wgpsim ...`` in the checkout, outputs into a
temporary directory) in a fresh process on an EMPTY numba cache (``NUMBA_CACHE_DIR`` set to a
new directory: numba then reads and writes its cache there only, so this is a fresh machine's
first run of that command). "compiled" says whether numba compiled the fast engine (the one
line ``wgpsim.engine._compile_notice`` prints on stderr). The figure is the child's user +
system CPU time; the load average is printed beside it.
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
COMMANDS = (
    "run configs/lds_bandwidth.yaml --out {tmp}/bw",
    "run configs/gemm_128x128.yaml --out {tmp}/gemm",
    "run configs/lds_drift.yaml --out {tmp}/drift",
    "run configs/layout_search.yaml --out {tmp}/layouts",
    "kernel examples/kernels/gemm_tdm_standard",
    "kernel examples/kernels/gemm_tdm_standard --loop-timing --html {tmp}/gemm.html",
    "kernel examples/kernels/attention --loop-timing",
    "diff examples/kernels/gemm_tdm_partitioned examples/kernels/gemm_tdm_standard",
    "kernel examples/kernels --all",
    "search --block 128x128x64 --warps 4 --workers 1",
    "replay examples/traces/two_pairs_conflict.jsonl --timeline {tmp}/timeline.png",
)
"""The commands the README and docs/USAGE.md walk a newcomer through (``wgpsim`` omitted)."""
NOTICE = "compiling the fast engine"
TARGET = 5.0
"""CPU seconds of a first run that compiles (issue 29); a run that compiles nothing meets it
by the issue's other branch."""


def first_run(command: str) -> tuple[float, bool, int]:
    """(CPU seconds, whether numba compiled the fast engine, exit code) of ``wgpsim COMMAND``
    on an empty numba cache."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "numba"))
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        argv = [sys.executable, "-m", "wgpsim", *command.format(tmp=tmp).split()]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, check=False,
        )  # fmt: skip
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, NOTICE in done.stderr, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only the commands whose text holds this")
    args = parser.parse_args()
    load = os.getloadavg()
    print("a newcomer's first run of each command on an empty numba cache (CPU seconds)")
    print(f"{'wgpsim ...':<80}{'CPU s':>7}  compiled  exit")
    compiled = 0
    for command in COMMANDS:
        if args.only and args.only not in command:
            continue
        cpu, did, code = first_run(command)
        compiled += did and cpu > TARGET
        shown = command.replace(" {tmp}/", " OUT/")
        print(f"{shown:<80}{cpu:7.2f}  {'yes' if did else 'no':<8}  {code}")
    verdict = "met" if not compiled else f"not met by {compiled}"
    print(f"target: no compile (or <= {TARGET:g} CPU-s) on any of them: {verdict}")
    print(f"load average {load[0]:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
