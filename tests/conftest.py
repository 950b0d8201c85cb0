"""Test-suite settings. On CI (``CI`` set) hypothesis runs derandomized, so a run is repeatable:
the same commit gives the same examples. Locally it explores new examples every run."""

import os

import pytest
from hypothesis import settings
from quiet_exit import pytest_unconfigure  # noqa: F401  (no Triton shutdown noise at the end)

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


@pytest.fixture(scope="session")
def bandwidth_cycles():
    """What the packaged microbenchmark config gives at bursts 8 and 32, run through the Python
    API: the figure the CLI paths (init, a copied config, ``--set``) must reproduce. The AMD
    blog's table itself is checked once, in ``test_engine_des`` and ``test_lds_bandwidth``."""
    from pathlib import Path

    from bandwidth_reference import BANDWIDTH_BURSTS

    from wgpsim.experiments import run_experiment

    config = Path(__file__).resolve().parents[1] / "configs" / "lds_bandwidth.yaml"
    result = run_experiment(config, overrides=[BANDWIDTH_BURSTS])
    return result.table.set_index("layout")["cycles"].to_dict()
