"""The one override mechanism: ``KEY=VALUE`` items with dotted keys into a YAML document.

Every way of changing a config goes through :func:`apply`: ``--set`` on every verb,
``hardware_overrides`` in an experiment file and ``HardwareConfig.with_overrides``. A key is a
dotted path into the nested mapping (``timing.lds_latency``); a value given as text is read as
YAML (``[1, 2]`` is a list, ``40`` an integer), except that a value beginning with ``#`` is
that text (``#ttg.blocked<...>``, which YAML would read as a comment). Into a hardware file every key must exist (a typo
gets "did you mean"); into an experiment file (``create=True``) a key may add an optional field,
which the experiment's validation then checks by name.

>>> hw = {"timing": {"lds_latency": 56, "queue_depth": 4}}
>>> apply(hw, ["timing.lds_latency=40"], "--set")
{'timing': {'lds_latency': 40, 'queue_depth': 4}}
>>> apply(hw, {"timing": {"queue_depth": 2}}, "hardware_overrides")["timing"]
{'lds_latency': 56, 'queue_depth': 2}
>>> apply(hw, ["timing.lds_latncy=40"], "--set timing.lds_latncy=40")
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: --set timing.lds_latncy=40: cannot override unknown field 'timing.lds_latncy' (did you mean 'lds_latency'?)
>>> apply({"warps": 4}, ["drift.seeds=50"], "lds.yaml: --set", create=True)
{'warps': 4, 'drift': {'seeds': 50}}
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from wgpsim.errors import ConfigError, did_you_mean, field_error
from wgpsim.inputs import set_value

__all__ = ["apply", "parse", "set_dotted"]


def parse(items: Iterable[str], source: str = "--set") -> list[tuple[str, Any]]:
    """``["a.b=1", ...]`` -> ``[("a.b", 1), ...]`` (values read as YAML).

    >>> parse(["timing.lds_latency=40", "passes.lane_grouping=triton"])
    [('timing.lds_latency', 40), ('passes.lane_grouping', 'triton')]
    """
    pairs = []
    for item in items:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{source} '{item}': expected key=value (e.g. timing.lds_latency=40)")
        if not all(part.strip() for part in key.split(".")):
            raise ConfigError(
                f"{source} '{key.strip()}': a key is field names joined by dots (timing.lds_latency)"
            )
        pairs.append((key.strip(), set_value(value, f"{source} '{key.strip()}'")))
    return pairs


def set_dotted(
    raw: dict, key: str, value: Any, source: str, *, create: bool = False, merge: bool = False
) -> None:
    """Set ``raw[a][b]... = value`` for ``key = "a.b..."`` in place.

    With ``merge`` a mapping value into a mapping field is merged key by key (so ``{"timing":
    {"x": 1}}`` changes one field); otherwise it replaces the field. Without ``create`` every
    part of the key must exist.
    """
    parts = key.split(".")
    node = raw
    for depth, part in enumerate(parts):
        where = ".".join(parts[: depth + 1])
        if not isinstance(node, dict):
            raise ConfigError(
                f"{source} '{key}': field {'.'.join(parts[:depth])!r} is not a mapping"
            )
        if part not in node:
            if not create:
                hint = did_you_mean(part, node)
                raise field_error(
                    f"{source}: cannot override unknown field {where!r}{hint}",
                    where,
                    f"cannot override an unknown field{hint}",
                )
            node[part] = {} if depth < len(parts) - 1 else None
        if depth == len(parts) - 1:
            if merge and isinstance(value, dict) and isinstance(node[part], dict):
                for sub, sub_value in value.items():
                    set_dotted(node[part], str(sub), sub_value, source, create=create, merge=True)
            else:
                node[part] = copy.deepcopy(value)
        else:
            node = node[part]


def apply(
    raw: Mapping[str, Any],
    overrides: Iterable[str] | Mapping[str, Any] | None,
    source: str,
    *,
    create: bool = False,
) -> dict[str, Any]:
    """A copy of ``raw`` with ``overrides`` applied.

    ``KEY=VALUE`` strings set each field to the value (read as YAML); a mapping (the form of
    ``hardware_overrides``) holds overrides itself, so its nested sections are merged into the
    document field by field, and its values are taken as they are.
    """
    out = copy.deepcopy(dict(raw))
    if not overrides:
        return out
    merge = isinstance(overrides, Mapping)
    pairs = list(overrides.items()) if merge else parse(overrides, source)
    for key, value in pairs:
        set_dotted(out, str(key), value, source, create=create, merge=merge)
    return out
