"""Helpers shared by the CLI verbs: JSON output, and atomic file writes (from ``wgpsim.files``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from wgpsim.files import atomic_write

__all__ = ["atomic_write", "print_json"]


def _default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def print_json(payload: Any) -> None:
    """Print ``payload`` as JSON on stdout (numpy scalars and arrays become plain values)."""
    json.dump(payload, sys.stdout, indent=2, default=_default)
    sys.stdout.write("\n")
