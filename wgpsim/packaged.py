"""Files shipped inside the package: the hardware file, example configs and example traces.

The hardware facts have one home, ``wgpsim/hw/mi450.yaml`` (``configs/mi450.yaml`` in a
checkout is a link to it). Layers below ``wgpsim.hw`` that need a default (the trace layer's
LDS capacity, the allocator's partition size) read it from that file with :func:`hardware_fact`
instead of repeating the number; everything else takes a loaded ``HardwareConfig``.

The example experiment configs and traces of the checkout (``configs/``, ``examples/traces/``)
ship as package data (``wgpsim/data/``), for ``wgpsim init`` and for configs copied out of the
checkout.

>>> hardware_fact("partitions", "lds_bytes"), hardware_fact("partitions", "size")
(327680, 65536)
>>> hardware_path().name, {"gemm_128x128.yaml", "lds_bandwidth.yaml"} <= {
...     p.name for p in example_configs()}
('mi450.yaml', True)
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "DATA",
    "example_configs",
    "example_traces",
    "hardware_fact",
    "hardware_path",
    "hardware_targets",
    "shown_path",
    "target_stem",
    "target_vocabulary",
    "packaged_hardware",
    "target_names",
    "triton_targets",
]

_ROOT = Path(__file__).resolve().parent
DATA = _ROOT / "data"
"""Package data: ``configs/`` (experiment configs) and ``traces/`` (example traces)."""


def hardware_path(name: str = "mi450") -> Path:
    """The packaged hardware file ``wgpsim/hw/<name>.yaml``."""
    return _ROOT / "hw" / f"{name}.yaml"


def hardware_targets() -> tuple[str, ...]:
    """The names of the packaged hardware files (``--target NAME``), MI450's first.

    >>> hardware_targets()
    ('mi450', 'gfx942', 'gfx950')
    """
    names = sorted(p.stem for p in (_ROOT / "hw").glob("*.yaml"))
    return ("mi450", *(n for n in names if n != "mi450"))


def target_stem(name: str) -> str | None:
    """The packaged hardware file a ``--target`` name picks, by its file name (``mi450``), its
    arch (``gfx1250``) or Triton's name for it (``hip:gfx1250``): the one vocabulary of every
    verb (``kernel``, ``lower``, ``compile``, ``calibrate probes`` ...); None for another name.

    >>> target_stem("mi450"), target_stem("gfx1250"), target_stem("hip:gfx942"), target_stem("x")
    ('mi450', 'mi450', 'gfx942', None)
    """
    if name in hardware_targets():
        return name
    by_arch = {arch: stem for stem, arch in _archs().items()}
    return by_arch.get(name.removeprefix("hip:"))


def shown_path(path: str | Path) -> str:
    """``path`` as a report shows it: a packaged file as ``wgpsim/...`` (not this machine's
    install path), another as given.

    >>> shown_path(hardware_path("gfx950")), shown_path("mine/fitted.yaml")
    ('wgpsim/hw/gfx950.yaml', 'mine/fitted.yaml')
    """
    try:
        return str(Path("wgpsim") / Path(path).resolve().relative_to(_ROOT))
    except (ValueError, OSError):
        return str(path)


def target_vocabulary() -> str:
    """The valid ``--target`` names, for help and errors: a file name and its arch where they
    differ (``hip:ARCH`` is accepted too).

    >>> target_vocabulary()
    'mi450|gfx1250, gfx942, gfx950'
    """
    arch = _archs()
    return ", ".join(n if arch.get(n, n) == n else f"{n}|{arch[n]}" for n in hardware_targets())


@lru_cache(maxsize=1)
def _archs() -> dict[str, str]:
    """Hardware file name -> the arch of its ``target:`` line (``mi450`` -> ``gfx1250``), read
    without a YAML parser: ``wgpsim --help`` names them and stays light."""
    out = {}
    for path in sorted((_ROOT / "hw").glob("*.yaml")):
        found = re.search(r"^target:\s*['\"]?hip:([\w-]+)", path.read_text(), re.M)
        if found:
            out[path.stem] = found.group(1)
    return out


def packaged_hardware(value: str) -> Path | None:
    """The packaged hardware file a config's ``hardware: VALUE`` names, if it names one by its
    bare file name (``mi450.yaml`` or ``mi450``); else None.

    >>> packaged_hardware("mi450.yaml").name, packaged_hardware("mine/mi450.yaml")
    ('mi450.yaml', None)
    """
    if not value or Path(value).name != value:
        return None
    path = hardware_path(value.removesuffix(".yaml"))
    return path if path.is_file() else None


@lru_cache(maxsize=8)
def _raw(path: str) -> dict[str, Any]:
    import yaml  # here, not at the top: `wgpsim --help` imports this module

    # libyaml's safe loader when PyYAML has it (the same values, a tenth of the time; the
    # hardware layer reads the file again through wgpsim.inputs' checked loader)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(Path(path).read_text(), Loader=loader)  # noqa: S506 (a safe loader)


def hardware_fact(*keys: str, name: str = "mi450") -> Any:
    """One value of the packaged hardware file, by its section and field names (unvalidated: the
    hardware layer validates the whole file; this is for defaults below that layer)."""
    node: Any = _raw(str(hardware_path(name)))
    for key in keys:
        node = node[key]
    return node


def triton_targets() -> dict[str, Path]:
    """Triton's target name (``hip:gfx1250``) -> the packaged hardware file whose ``target:``
    field names it: the chips whose modules wgpsim reads (docs/DESIGN.md, "Adding a hardware
    target"); a chip without a hardware file has no entry.

    >>> triton_targets()["hip:gfx1250"].name, triton_targets()["hip:gfx950"].name
    ('mi450.yaml', 'gfx950.yaml')
    """
    out: dict[str, Path] = {}
    for path in sorted((_ROOT / "hw").glob("*.yaml")):
        target = _raw(str(path)).get("target")
        if isinstance(target, str):
            out.setdefault(target, path)
    return out


def target_names() -> str:
    """The targets of :func:`triton_targets`, for a message (``hip:gfx1250, hip:gfx942, ...``)."""
    return ", ".join(sorted(triton_targets()))


def example_configs() -> list[Path]:
    """The packaged experiment configs (every ``*.yaml`` but the hardware file)."""
    return sorted(p for p in (DATA / "configs").glob("*.yaml") if p.name != "mi450.yaml")


def example_traces() -> list[Path]:
    """The packaged example traces."""
    return sorted((DATA / "traces").glob("*.jsonl"))
