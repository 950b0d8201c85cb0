"""A pytest plugin (loaded by ``tests/conftest.py``): no Triton shutdown noise after the summary.

A session that compiled with Triton in-process (``wgpsim.kernel.report(fn, ...)``, the Gluon
conformance tests) ends, after pytest's summary, in ~30 lines of nanobind's reference-leak
report from Triton's ``libtriton`` (``nanobind: leaked N instances ...``), printed from C while
the interpreter shuts down, when Python's finalization order frees nanobind's internals before
objects Triton still holds; ``libtriton`` does not expose nanobind's ``set_leak_warnings``,
so it cannot be switched off. Once the session has ended and pytest has printed everything,
and only if ``libtriton`` was imported, stderr (file descriptor 2) is pointed at ``os.devnull``
at exit: what follows is that shutdown report. Every test's own stderr, and the summary, come
before (``tests/test_quiet_exit.py``).
"""

from __future__ import annotations

import atexit
import os
import sys

import pytest

LIBTRITON = "triton._C.libtriton"


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config) -> None:
    """At the session's end, arrange for :func:`silence_stderr` to run at exit (after pytest
    restores the stderr its capture replaced, before the modules are torn down)."""
    atexit.register(silence_stderr)


def silence_stderr() -> None:
    """Point file descriptor 2 at ``os.devnull`` if ``libtriton`` was imported."""
    if LIBTRITON not in sys.modules:
        return
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)
