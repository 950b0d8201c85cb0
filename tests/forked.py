"""Triton in a child process, each item in a forked grandchild: Triton 3.9.0 aborts the process
on some inputs (an assertion, an LLVM fatal error), which must cost one item, not the test run."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

FORK_EACH = r"""
import json, os, sys

def map_forked(work, items):
    out = []
    for item in items:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            try:
                res = work(item)
            except Exception as e:
                res = {"error": str(e)[:300]}
            os.write(w, json.dumps(res).encode())
            os._exit(0)
        os.close(w)
        chunks = []
        while chunk := os.read(r, 1 << 20):
            chunks.append(chunk)
        os.close(r)
        os.waitpid(pid, 0)
        out.append(json.loads(b"".join(chunks)) if chunks else None)
    return out
"""


def run_forked(work_source: str, items: list[Any], timeout: int = 900) -> list[Any]:
    """Run ``work_source`` (Python defining ``work(item)`` -> a JSON value) in a child process,
    each item in a forked grandchild; an item whose grandchild died gives None, one that raised
    ``{"error": message}``."""
    script = (
        FORK_EACH + work_source + "\nprint(json.dumps(map_forked(work, json.load(sys.stdin))))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(items),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])
