"""Helpers shared by the CLI verbs: ``--hw``/``--set``, JSON output, and atomic file writes
(from ``wgpsim.files``)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from wgpsim.files import atomic_write

if TYPE_CHECKING:
    from wgpsim.hw.config import HardwareConfig

__all__ = ["add_hw_args", "atomic_write", "hardware_from_args", "print_json"]


def add_hw_args(parser: argparse.ArgumentParser) -> None:
    """``--hw FILE`` and repeatable ``--set KEY=VALUE`` (dest ``hw`` and ``overrides``)."""
    parser.add_argument("--hw", type=Path, help="hardware YAML (default: configs/mi450.yaml)")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a hardware field, e.g. timing.lds_latency=40 (VALUE is YAML)",
    )


def hardware_from_args(args: argparse.Namespace) -> HardwareConfig:
    """The config of ``--hw`` (default config if absent) with the ``--set`` overrides applied."""
    from wgpsim.hw.config import apply_overrides, load_hardware

    return apply_overrides(load_hardware(args.hw), args.overrides)


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
