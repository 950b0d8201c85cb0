"""Run the ``wgpsim`` command in this process as a user would, and check the error contract.

The contract for every input (tests/fuzz and the regression cases): the command succeeds (exit 0)
or prints one line per problem, ``wgpsim: error: ...``, on stderr and exits with code 2 (a config
with three bad fields gets three lines, each naming its file or flag and field). Never a
traceback.
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from wgpsim.cli import main


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str

    def assert_ok_or_one_line(self) -> None:
        """Success, or exit 2 with ``wgpsim: error:`` lines (one per problem) and nothing else."""
        if self.code == 0:
            return
        assert self.code == 2, f"exit {self.code}: {self.err[-2000:]}"
        self.assert_error_lines()

    def assert_error_lines(self, *fragments: str) -> list[str]:
        """Exit 2, every stderr line a ``wgpsim: error:`` line, each fragment in some line;
        the lines."""
        assert self.code == 2, f"exit {self.code}, expected 2: {self.err[-2000:]}"
        lines = self.err.split("\n")[:-1]  # lines end in \n only (a quoted \x1e is not one)
        assert lines and self.err.endswith("\n"), self.err[-2000:]
        assert all(line.startswith("wgpsim: error: ") for line in lines), self.err[-2000:]
        for fragment in fragments:
            assert fragment in self.err, self.err
        return lines

    def assert_one_line(self, *fragments: str) -> None:
        """Exit 2 with one error line containing every fragment."""
        assert self.code == 2, f"exit {self.code}, expected 2: {self.err[-2000:]}"
        assert self.err.startswith("wgpsim: error: "), self.err[-2000:]
        assert self.err.count("\n") == 1, self.err[-2000:]
        for fragment in fragments:
            assert fragment in self.err, self.err


COUNT = {"inputs": 0, "errors": 0}
"""Inputs run by :func:`fuzz` this session (printed at the end by the fuzz conftest)."""

TIME_LIMIT = 30.0
"""Seconds one fuzz input may take (most take milliseconds; a shared machine is slow)."""


def fuzz(*argv: object, out: Path | None = None) -> Outcome:
    """Run one generated input and hold it to the contract: success or one line and exit 2,
    within :data:`TIME_LIMIT`, and (``out``: a directory it may write) no file left half
    written (``wgpsim.files.atomic_write``'s temporaries start with a dot)."""
    start = time.perf_counter()
    outcome = run_cli(*argv)
    took = time.perf_counter() - start
    COUNT["inputs"] += 1
    COUNT["errors"] += outcome.code != 0
    outcome.assert_ok_or_one_line()
    assert took < TIME_LIMIT, f"{took:.1f} s for {argv}"
    if out is not None and out.exists():
        left = [p.name for p in out.rglob(".*")]
        assert not left, f"temporary files left: {left}"
    return outcome


def run_cli(*argv: object) -> Outcome:
    """``wgpsim ARGV`` in this process; stdout and stderr captured. argparse usage errors
    (its own exit 2 with a usage line) count as one line too: they are caught here."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exit_:  # argparse: usage + one error line
            code = exit_.code if isinstance(exit_.code, int) else 2
            text = err.getvalue().splitlines()
            err = io.StringIO("wgpsim: error: " + (text[-1] if text else "") + "\n")
    return Outcome(code, out.getvalue(), err.getvalue())


ROOT = Path(__file__).resolve().parents[2]
CHILD_BYTES = 4 << 30
"""Address space a child may map by default: numba's LLVM maps about 2 GiB before any work."""


def run_child(
    *argv: object, cwd: Path, limits: dict[int, int] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    """``wgpsim ARGV`` as a child process (this checkout first on the path) under the resource
    ``limits`` (``{resource.RLIMIT_FSIZE: 16_000}``: a full disk; default ``RLIMIT_AS`` of
    :data:`CHILD_BYTES`: bounded memory); its exit code and text output."""
    limits = {resource.RLIMIT_AS: CHILD_BYTES} if limits is None else limits

    def limit() -> None:
        for kind, size in limits.items():
            resource.setrlimit(kind, (size, size))

    return subprocess.run(
        [sys.executable, "-m", "wgpsim", *map(str, argv)],
        cwd=cwd,
        capture_output=True,
        text=True,
        preexec_fn=limit,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
