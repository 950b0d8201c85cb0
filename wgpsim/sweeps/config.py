"""Experiment YAML: loading, ``--set`` overrides and field validation shared by every kind.

An experiment file is a YAML mapping whose ``kind`` picks the experiment. Each kind declares its
fields (name, type, required or default); :func:`check_fields` rejects unknown fields with the
closest valid name, wrong types and missing fields, one line naming the file and the field:

>>> source = ConfigSource("configs/lds_bandwidth.yaml", Path("configs"))
>>> fields = (Field("burst_lengths", list, items=int), Field("warps", int, default=4))
>>> check_fields({"burst_lengths": [1, 2]}, fields, source)
{'burst_lengths': [1, 2], 'warps': 4}
>>> check_fields({"burst_lenghts": [1, 2]}, fields, source)
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: configs/lds_bandwidth.yaml: field 'burst_lenghts': unknown field; did you mean 'burst_lengths'?

A kind reports every problem of its config at once: its checks keep them in
``source.problems`` (``check_fields(..., collect=True)``, :meth:`ConfigSource.check`) and it
raises them all (:meth:`~wgpsim.errors.Problems.raise_any`) before it runs anything. A field given by a flag is named by that flag (``--set warps``, ``wgpsim search
--stages``), not by the file.

Overrides are ``key=value`` strings; the key may be dotted into nested mappings and the value is
parsed as YAML:

>>> apply_overrides({"warps": 4, "layouts": {"plain": {}}}, ["warps=8", "layouts.plain.vec=2"], source)
{'warps': 8, 'layouts': {'plain': {'vec': 2}}}

A hardware field is spelt as on every other verb:

>>> apply_overrides({"hardware_overrides": {}}, ["timing.lds_latency=40"], source)
{'hardware_overrides': {'timing': {'lds_latency': 40}}}
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from wgpsim.engine import SEED_RANGE  # noqa: F401 (the kinds' seed fields)
from wgpsim.errors import SHOWN_CHARS, ConfigError, Problems, Unchecked, closest, shown
from wgpsim.files import is_safe_stem
from wgpsim.hw import HardwareConfig, load_hardware
from wgpsim.inputs import load_yaml, read_text
from wgpsim.overrides import apply as apply_dotted
from wgpsim.packaged import packaged_hardware

_MISSING = object()

_TYPE_NAMES = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "a mapping",
}


@dataclass(frozen=True)
class ConfigSource:
    """Where a config came from: ``name`` for messages, ``base_dir`` for relative paths.

    ``problems`` collects the config's errors as the checks find them (all are reported at
    once); ``origins`` maps a dotted field set by a command-line flag to that flag, which the
    field's errors then name:

    >>> source = ConfigSource("lds.yaml", Path("."), origins={"warps": "--set warps"})
    >>> str(source.error("warps", "expected an integer")), str(source.error("seed", "-1"))
    ('--set warps: expected an integer', "lds.yaml: field 'seed': -1")
    """

    name: str
    base_dir: Path
    problems: Problems = dataclass_field(default_factory=Problems, compare=False, repr=False)
    origins: dict[str, str] = dataclass_field(default_factory=dict, compare=False, repr=False)

    def error(self, field: str, message: str) -> ConfigError:
        """The one-line error for ``field`` (dotted for nested fields)."""
        for key in sorted(self.origins, key=len, reverse=True):
            if field == key:
                return ConfigError(f"{self.origins[key]}: {message}")
            if field.startswith((f"{key}.", f"{key}[")):
                return ConfigError(f"{self.origins[key]}: field '{field}': {message}")
        inside = [flag for key, flag in self.origins.items() if key.startswith(f"{field}.")]
        with_flags = f" (with {', '.join(inside)})" if inside else ""
        return ConfigError(f"{self.name}: field '{field}'{with_flags}: {message}")

    def check(self):
        """A context whose ConfigError is kept in :attr:`problems` (the next check runs)."""
        return self.problems.guard()

    def resolve(self, path: str | Path) -> Path:
        """``path`` relative to the config file's directory (absolute paths stay)."""
        path = Path(path).expanduser()
        return path if path.is_absolute() else self.base_dir / path


@dataclass(frozen=True)
class Field:
    """One field of an experiment config.

    ``type`` is the Python type (or tuple of types) YAML must produce; ``items`` the type of a
    list's elements; ``choices`` the allowed values; ``valid`` the inclusive range ``(low,
    high)`` of a number (or of every number of a list), the one place its bound is declared. A
    field with a ``default`` is optional.
    """

    name: str
    type: type | tuple[type, ...]
    default: Any = _MISSING
    items: type | tuple[type, ...] | None = None
    choices: tuple[Any, ...] | None = None
    doc: str = ""
    valid: tuple[float, float] | None = None

    def out_of_range(self, value: Any) -> str | None:
        """Why ``value`` (a number, or a list of them) is outside :attr:`valid`, or None.

        >>> Field("warps", int, valid=(1, 32)).out_of_range(64)
        '64 is out of range (valid: 1..32)'
        """
        if self.valid is None:
            return None
        low, high = self.valid
        for item in value if isinstance(value, list) else [value]:
            number = isinstance(item, int | float) and not isinstance(item, bool)
            if number and not low <= item <= high:
                return f"{shown(item)} is out of range (valid: {_number(low)}..{_number(high)})"
        return None

    @property
    def required(self) -> bool:
        return self.default is _MISSING


def _number(value: float) -> str:
    """A bound as a message gives it: whole numbers whole (``4294967295``, not ``4.29e+09``)."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


KIND_AND_HARDWARE = (
    Field("kind", str),
    Field("hardware", str, default=None, doc="hardware YAML, relative to the config file"),
    Field("hardware_overrides", dict, default={}, doc="changes to the hardware YAML"),
)
"""The fields every experiment kind has: its ``kind`` and the hardware it runs on."""


def unknown_message(name: str, valid: Iterable[str], what: str = "field") -> str:
    """``unknown field; did you mean 'x'?`` or ``unknown field; valid: a, b``."""
    valid = list(valid)
    guess = closest(str(name), valid)
    if guess is not None:
        return f"unknown {what}; did you mean '{guess}'?"
    return f"unknown {what}; valid: {', '.join(valid)}"


def is_hardware_mapping(raw: Any) -> bool:
    """Whether a loaded YAML document is a hardware file (``wgp`` and ``timing`` sections, no
    ``kind``), not an experiment config.

    >>> is_hardware_mapping({"wgp": {}, "timing": {}}), is_hardware_mapping({"kind": "x"})
    (True, False)
    """
    return (
        isinstance(raw, dict)
        and "kind" not in raw
        and {"wgp", "timing"} <= raw.keys() & set(HARDWARE_SECTIONS)
    )


def load_config(config: str | Path | Mapping[str, Any]) -> tuple[dict[str, Any], ConfigSource]:
    """Read an experiment config (a YAML file path, or an already-loaded mapping).

    Relative paths inside a file resolve against the file's directory; inside a mapping against
    the current directory. A hardware file (``wgp`` and ``timing`` sections, no ``kind``) is
    an error saying to pass it with ``--hw``.
    """
    if isinstance(config, Mapping):
        return copy.deepcopy(dict(config)), ConfigSource("<config>", Path.cwd())
    path = Path(config)
    source = ConfigSource(str(config), path.parent)
    text = read_text(path, "experiment YAML")  # FileNotFoundError: one line in the CLI
    raw = load_yaml(text, source.name)
    if not isinstance(raw, dict):
        raise ConfigError(f"{source.name}: expected a YAML mapping with a 'kind' field")
    if is_hardware_mapping(raw):
        raise ConfigError(
            f"{source.name}: this is a hardware file, not an experiment config: use --hw "
            f"(wgpsim run configs/lds_bandwidth.yaml --hw {source.name})"
        )
    return raw, source


def apply_overrides(
    raw: dict[str, Any], overrides: Sequence[str] | Mapping[str, Any] | None, source: ConfigSource
) -> dict[str, Any]:
    """Return a copy of ``raw`` with ``key=value`` overrides applied (dotted keys, YAML values;
    :func:`wgpsim.overrides.apply`, the one override mechanism). A key may name an optional field
    the file leaves out; the kind's validation checks every field afterwards. A key into a
    hardware section (``timing.lds_latency``, as ``wgpsim replay --set`` takes it) means the
    hardware field, as ``hardware_overrides.timing.lds_latency`` does.

    A mapping ``{"a.b": value}`` is accepted too (values taken as they are).
    """
    if not overrides or isinstance(overrides, Mapping):
        return apply_dotted(raw, overrides, f"{source.name}: --set", create=True)
    out = raw
    for item in overrides:
        if isinstance(item, Override):
            key, value, flag = _route_hardware(item.key, raw), item.value, item.flag
            out = apply_dotted(out, {key: value}, flag, create=True)
        else:
            given = str(item).partition("=")[0].strip()
            key = _route_hardware(str(item), raw).partition("=")[0].strip()
            flag = f"--set {given if len(given) <= SHOWN_CHARS else shown(given)}"
            out = apply_dotted(out, [_route_hardware(str(item), raw)], "--set", create=True)
        source.origins[key] = flag
    return out


@dataclass(frozen=True)
class Override:
    """A field set by a command-line ``flag`` (``wgpsim search --stages 3``): ``value`` as it
    is (not YAML text), and the field's errors name the flag.

    >>> source = ConfigSource("<config>", Path("."))
    >>> apply_overrides({"kind": "layout_search"}, [Override("stages", 0, "--stages")], source)
    {'kind': 'layout_search', 'stages': 0}
    >>> source.origins
    {'stages': '--stages'}
    """

    key: str
    value: Any
    flag: str


HARDWARE_SECTIONS = tuple(
    f.name for f in fields(HardwareConfig) if f.name not in ("name", "source", "drift")
)
"""Hardware sections a ``--set`` may name directly on an experiment (``drift`` is also an
experiment section, so the hardware's drift model is ``hardware_overrides.drift.*``)."""


def _route_hardware(item: str, raw: Mapping[str, Any]) -> str:
    """One meaning of ``--set``: ``timing.lds_latency=40`` is the hardware field on every verb;
    on an experiment it becomes ``hardware_overrides.timing.lds_latency=40`` (unless the config
    has a field of that name)."""
    head = item.partition("=")[0].strip().split(".")[0]
    if head in HARDWARE_SECTIONS and head not in raw:
        return f"hardware_overrides.{item.strip()}"
    return item.strip()


def _type_ok(value: Any, expected: type | tuple[type, ...]) -> bool:
    expected = expected if isinstance(expected, tuple) else (expected,)
    if isinstance(value, bool):
        return bool in expected
    if isinstance(value, int) and float in expected:
        return True
    return isinstance(value, expected)


def _type_name(expected: type | tuple[type, ...]) -> str:
    expected = expected if isinstance(expected, tuple) else (expected,)
    return " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in expected)


def check_fields(
    raw: Mapping[str, Any],
    fields: Sequence[Field],
    source: ConfigSource,
    *,
    prefix: str = "",
    collect: bool = False,
) -> dict[str, Any]:
    """Validate ``raw`` against ``fields``; return the fields with defaults filled in.

    ``prefix`` names the enclosing field for nested mappings (``drift.``). Every field is
    checked; the error reports each bad one (a message each, one line each in the CLI):

    >>> source = ConfigSource("lds.yaml", Path("."))
    >>> fields = (Field("burst_lengths", list, items=int), Field("warps", int, valid=(1, 32)))
    >>> check_fields({"warps": 64, "burst_lenghts": [1]}, fields, source)
    Traceback (most recent call last):
    ...
    wgpsim.errors.ConfigError: lds.yaml: field 'burst_lenghts': unknown field; did you mean 'burst_lengths'?
    lds.yaml: field 'warps': 64 is out of range (valid: 1..32)

    With ``collect`` (how a kind checks its config) nothing is raised: each problem is kept in
    ``source.problems`` and the bad fields are left out of the result, whose lookup of one
    raises :class:`~wgpsim.errors.Unchecked`, so a check that needs it is skipped and the
    others run:

    >>> check_fields({"warps": 64, "burst_lengths": [1]}, fields, source, collect=True)
    {'burst_lengths': [1]}
    >>> source.problems.messages
    ["lds.yaml: field 'warps': 64 is out of range (valid: 1..32)"]
    """
    by_name = {f.name: f for f in fields}
    unknown = [name for name in raw if name not in by_name]
    problems = [(f"{prefix}{name}", unknown_message(name, by_name)) for name in unknown]
    misspelt = {closest(str(name), by_name) for name in unknown}  # "missing" would repeat it
    out = Checked()
    for f in fields:
        problem = _field_problem(f, raw.get(f.name, _MISSING), prefix)
        if problem is not None:
            if not (f.name in misspelt and f.name not in raw):
                problems.append(problem)
        elif raw.get(f.name) is None:
            out[f.name] = copy.deepcopy(f.default)
        else:
            out[f.name] = raw[f.name]
    errors = ConfigError.every([str(source.error(where, m)) for where, m in problems])
    if problems and not collect:
        raise errors
    if problems:
        source.problems.add(errors)
    return out


class Checked(dict):
    """The good fields of a section; looking up a bad one (already reported) raises
    :class:`~wgpsim.errors.Unchecked`, which skips the check that needed it."""

    def __missing__(self, key: str) -> Any:
        raise Unchecked(f"field {key!r} is not valid (reported above)")


def _field_problem(f: Field, value: Any, prefix: str) -> tuple[str, str] | None:
    """``(field, message)`` if ``value`` is not valid for ``f``, else None."""
    where = f"{prefix}{f.name}"
    if value is _MISSING or value is None:
        return (where, f"missing; expected {_type_name(f.type)}") if f.required else None
    if not _type_ok(value, f.type):
        return where, f"expected {_type_name(f.type)}, got {type(value).__name__} {shown(value)}"
    if f.items is not None:
        for i, item in enumerate(value):
            if not _type_ok(item, f.items):
                return f"{where}[{i}]", f"expected {_type_name(f.items)}, got {shown(item)}"
    if f.choices is not None and value not in f.choices:
        choices = [str(c) for c in f.choices]
        return where, unknown_message(str(value), choices, what=f"value {shown(value)}")
    problem = f.out_of_range(value)
    return (where, problem) if problem is not None else None


def check_names(names: Iterable[Any], field: str, source: ConfigSource) -> None:
    """Candidate names become file names (``ownership_<name>.png``): each must be a safe stem
    (``wgpsim.files.is_safe_stem``), checked with the config, before anything runs.

    >>> check_names(["plain", "a/b"], "layouts", ConfigSource("lds.yaml", Path(".")))
    Traceback (most recent call last):
    ...
    wgpsim.errors.ConfigError: lds.yaml: field 'layouts.a/b': a candidate name becomes a file name: use letters, digits and _.+- only
    """
    for name in names:
        if not is_safe_stem(str(name)):
            raise source.error(
                f"{field}.{name if len(str(name)) <= SHOWN_CHARS else shown(name)}",
                "a candidate name becomes a file name: use letters, digits and _.+- only",
            )


def load_hardware_for(
    value: str | None,
    overrides: Mapping[str, Any] | None,
    source: ConfigSource,
    *,
    hw_path: str | Path | None = None,
) -> HardwareConfig:
    """The hardware an experiment names (``hardware:``, relative to the config file; a bare file
    name with no such file beside the config, like ``mi450.yaml`` in a config copied elsewhere,
    names the packaged one), or ``hw_path`` (``--hw``) instead, or the packaged MI450; then
    ``hardware_overrides`` applied
    (nested mappings or dotted keys, as :meth:`HardwareConfig.with_overrides` takes them)."""
    if hw_path is not None:
        path: Path | None = Path(hw_path)
        if not path.is_file():
            raise ConfigError(f"--hw {hw_path}: no such hardware file")
    elif value:
        path = source.resolve(value)
        if not path.is_file():
            path = packaged_hardware(value)  # a config copied out of the checkout
        if path is None:
            raise source.error(
                "hardware",
                f"{source.resolve(value)}: no such hardware file (and no packaged hardware "
                f"named {value!r}; the packaged one is 'mi450.yaml')",
            )
    else:
        path = None
    hw = load_hardware(path)
    if not overrides:
        return hw
    changes = dict(flatten(overrides))
    try:
        return _override_hardware(hw, changes, source)
    except ConfigError as together:  # which ones are bad alone? each is reported
        each = Problems()
        for key, value in changes.items():
            with each.guard():
                _override_hardware(hw, {key: value}, source)
        if not each:  # each is fine alone: a rule across fields, said by the error together
            raise together from None
        each.raise_any()
        raise


def _override_hardware(
    hw: HardwareConfig, changes: Mapping[str, Any], source: ConfigSource
) -> HardwareConfig:
    """``hw`` with ``changes``; an error names the field as the config (or the ``--set`` that
    set it) spells it, ``hardware_overrides.timing.lds_latency``, not the hardware file."""
    try:
        return hw.with_overrides(**changes)
    except ConfigError as err:
        field = getattr(err, "field", None)
        if field is None:
            raise source.error("hardware_overrides", str(err)) from None
        raise source.error(f"hardware_overrides.{field}", err.problem) from None


def flatten(node: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """A nested mapping as dotted ``(key, value)`` pairs (an empty mapping is a value).

    >>> flatten({"timing": {"lds_latency": 40, "queue_depth": 2}, "banks.count": 32})
    [('timing.lds_latency', 40), ('timing.queue_depth', 2), ('banks.count', 32)]
    """
    out: list[tuple[str, Any]] = []
    for key, value in node.items():
        if isinstance(value, Mapping) and value:
            out += flatten(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out
