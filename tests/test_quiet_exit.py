"""The suite's end is quiet (issue 25: ~30 lines of nanobind leak reports from Triton's
libtriton at interpreter shutdown): a session run with ``tests/quiet_exit.py`` that imported
libtriton prints its summary and nothing of the shutdown; without the plugin, the same
session shows the late message (so the test can fail)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
LATE_TEST = """\
import os

import triton._C.libtriton  # noqa: F401


class Late:  # writes at interpreter shutdown, as nanobind's leak report does
    def __del__(self, write=os.write):
        write(2, b"nanobind: leaked 1 instances!\\n")


LATE = Late()


def test_ok():
    pass
"""


def _session(tmp_path: Path, *plugin: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_late.py").write_text(LATE_TEST)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, "test_late.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(HERE)},
    )


def test_shutdown_noise_after_the_summary_is_silenced(tmp_path):
    pytest.importorskip("triton")
    loud = _session(tmp_path)
    assert loud.returncode == 0 and "nanobind: leaked" in loud.stderr
    quiet = _session(tmp_path, "-p", "quiet_exit")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "1 passed" in quiet.stdout and "nanobind" not in quiet.stderr + quiet.stdout
