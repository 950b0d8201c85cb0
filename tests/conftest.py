"""Test-suite settings. On CI (``CI`` set) hypothesis runs derandomized, so a run is repeatable:
the same commit gives the same examples. Locally it explores new examples every run."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
