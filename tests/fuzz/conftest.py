"""The fuzz suite's settings: how many inputs each property draws, and the count it prints.

``CI`` set (as on CI) runs the full count, derandomized (the ``fuzz-ci`` profile: the same
inputs every run, 10,092 in all, about a minute on two idle cores); locally the
``fuzz-local`` profile draws a tenth of them, new ones every run (``WGPSIM_FUZZ=ci`` runs the
full count locally). The session ends with ``fuzz: N inputs`` (every input run through the CLI).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_runner import COUNT
from hypothesis import HealthCheck, settings

_COMMON = dict(
    deadline=None,  # each input has its own time limit (cli_runner.TIME_LIMIT)
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
    ],
    print_blob=True,
)
settings.register_profile("fuzz-ci", derandomize=True, database=None, **_COMMON)
settings.register_profile("fuzz-local", **_COMMON)

FULL = bool(os.environ.get("CI")) or os.environ.get("WGPSIM_FUZZ") == "ci"
FUZZ = settings.get_profile("fuzz-ci" if FULL else "fuzz-local")


def examples(n: int) -> settings:
    """The settings of a property that draws ``n`` inputs on CI (a tenth locally)."""
    return settings(FUZZ, max_examples=n if FULL else max(10, n // 10))


def pytest_terminal_summary(terminalreporter) -> None:
    if COUNT["inputs"]:
        terminalreporter.write_line(
            f"fuzz: {COUNT['inputs']} inputs ({'full, CI' if FULL else 'local, a tenth'}), "
            f"{COUNT['errors']} ended in exit 2 with one line per problem, the rest succeeded"
        )


@pytest.fixture
def kit(tmp_path: Path) -> Path:
    """A directory holding the calibration kit's ``manifest.json`` (every probe)."""
    from wgpsim.calibration.probes import catalogue, write_manifest

    write_manifest(catalogue(), tmp_path / "manifest.json")
    return tmp_path
