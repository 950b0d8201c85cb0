"""Run a benchmark's measurement on another git revision's code, for a baseline measured in the
same run: the revision is exported once (``git archive``) to ``$TMPDIR/wgpsim-baseline-<sha>``
and the measurement runs there in a child process, with its own numba cache (so only its first
use compiles).

    >>> measure_at("main", "engine_throughput", "measure_fast(8, 2000, 3)")  # doctest: +SKIP
    {'two partitions': ..., 'one partition': ...}
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = Path(__file__).resolve().parent


def export(rev: str) -> Path | None:
    """The directory holding ``rev``'s tree (exported on first use); None if git cannot
    resolve ``rev``."""
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    sha = done.stdout.strip()
    if done.returncode or not sha:
        return None
    where = Path(tempfile.gettempdir()) / f"wgpsim-baseline-{sha[:12]}"
    if not (where / "wgpsim").is_dir():
        where.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha], cwd=ROOT, check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return where


def measure_at(rev: str, module: str, call: str) -> dict | None:
    """``module.call`` (a benchmark module of this directory, a call returning JSON values) run
    on ``rev``'s package in a child process; None if git cannot resolve ``rev``."""
    where = export(rev)
    if where is None:
        return None
    env = dict(os.environ, PYTHONPATH=str(where), NUMBA_CACHE_DIR=str(where / "numba"))
    code = (
        f"import json, sys; sys.path.insert(0, {str(BENCHMARKS)!r}); "
        f"from {module} import *; print(json.dumps({call}))"
    )
    done = subprocess.run(  # cwd: the export, so that "-c"'s path entry does not find ours
        [sys.executable, "-c", code], cwd=where, env=env, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def here_and_at(parser, against: str, module: str, call: str, now):
    """``now()`` on this tree, then ``module.call`` on revision ``against``'s (`measure_at`), in
    one run: (this tree's figures, the revision's, the load average before and after); an
    unknown revision is ``parser``'s error."""
    before = os.getloadavg()[0]
    mine = now()
    theirs = measure_at(against, module, call)
    if theirs is None:
        parser.error(f"--against {against}: not a git revision")
    return mine, theirs, (before, os.getloadavg()[0])
