"""``run``/``search --hw/--target`` on a config written for another chip (review 2, #10).

The shipped configs are the AMD blog's MI450 experiments (``hardware: mi450.yaml``): WMMA
tiles of wave32 warps, ``ds_load_b128`` / ``ds_load_tr16_b128``, MI450's 320 KiB of LDS in
64 KiB partitions. On another chip's file such an experiment cannot run as written; instead of
an error deep in the run or a table of infeasible candidates (exit 0), the CLI says in one
line which experiment it is and what the chip lacks (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wgpsim.errors import ConfigError


def foreign_prefix(config: Any, hw_path: Path | None) -> str | None:
    """The start of the one-line refusal when ``hw_path`` (``--hw``/``--target``) is another
    chip's than the hardware ``config`` (a YAML path) names; None when they agree, or either
    cannot be told (the run reports that itself)."""
    if hw_path is None or not isinstance(config, (str, Path)):
        return None
    from wgpsim.hw.config import load_hardware
    from wgpsim.packaged import packaged_hardware
    from wgpsim.sweeps.config import load_config

    try:
        raw, source = load_config(config)
        value = raw.get("hardware")
        own_path = source.resolve(value) if isinstance(value, str) else None
        if own_path is not None and not own_path.is_file():
            own_path = packaged_hardware(value)
        own, given = load_hardware(own_path), load_hardware(hw_path)
    except (ConfigError, OSError, TypeError):
        return None
    if own.target == given.target:
        return None
    blog = ", the AMD blog's MI450 experiment" if own.name == "mi450" else ""
    return (
        f"{config} is an experiment for {own.describe()}{blog}; it cannot run as written on "
        f"{given.describe()}"
    )


def refuse(prefix: str, reason: str) -> ConfigError:
    """The one-line error: ``prefix`` (`foreign_prefix`), then what the chip lacks."""
    return ConfigError(f"{prefix}: {reason.splitlines()[0]} (write a config for it)")


def all_infeasible(result: Any) -> str | None:
    """The reason of the first candidate when every candidate of ``result``'s ``results``
    table is infeasible (gemm_candidates on another chip), else None."""
    if "results" not in result.tables:
        return None
    rows = result.records("results")
    reasons = [r.get("infeasible") for r in rows]
    if rows and all(isinstance(r, str) and r for r in reasons):
        return reasons[0]
    return None
