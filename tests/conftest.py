"""Test-suite settings. On CI (``CI`` set) hypothesis runs derandomized, so a run is repeatable:
the same commit gives the same examples. Locally it explores new examples every run."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_sessionstart(session):
    """Compile the fast engine before any test captures output: on a cold numba cache (a fresh
    CI machine) its one-line compile notice then goes to the session's stderr, not into a test
    that asserts its own stderr is empty."""
    from wgpsim.engine import simulate
    from wgpsim.hw import load_hardware
    from wgpsim.trace.trace import TraceBuilder

    b = TraceBuilder(1)
    b.clock(0, "start")
    b.clock(0, "end")
    simulate(b.build(), load_hardware(), engine="fast")
