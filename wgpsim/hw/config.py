"""The hardware config: one MI450 WGP as a frozen value read from ``configs/mi450.yaml``.

Every constant of the model lives in the YAML file with a comment naming its source (seed, fit
or assumption); this module only reads and checks it. Sections map to small frozen dataclasses:

>>> hw = load_hardware()
>>> hw.ports.bytes_per_cycle, hw.partitions.size, hw.banks.count
(256, 65536, 64)
>>> hw.pair_names, hw.pair_of_warp(3)
(('A', 'B'), 1)
>>> hw.lane_bits("ds_load_b128"), hw.with_overrides(**{"passes.lane_grouping": "triton"}).lane_bits("ds_load_b128")
((4,), (2,))

Errors name the file and the field:

>>> hw.with_overrides(**{"ports.bytes_per_cycle": -1})
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: configs/mi450.yaml: field 'ports.bytes_per_cycle' must be a positive integer, got -1
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from wgpsim.errors import ConfigError
from wgpsim.layout.bits import log2
from wgpsim.trace.instructions import LANES

_PACKAGED = Path(__file__).with_name("mi450.yaml")
_REPO = Path(__file__).resolve().parents[2] / "configs" / "mi450.yaml"


@dataclass(frozen=True)
class Wgp:
    """SIMDs of the WGP and how they pair up; warp w runs on SIMD w mod ``simds``."""

    simds: int
    warp_size: int
    pairs: tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True)
class Ports:
    """The LDS/L0 arbiter's ports (seed: L and C, 256 B/cycle each)."""

    names: tuple[str, ...]
    bytes_per_cycle: int


@dataclass(frozen=True)
class Partitions:
    """Physical 64 KiB partitions: which back the LDS and which the L0 cache."""

    size: int
    count: int
    lds: tuple[int, ...]
    l0: tuple[int, ...]
    lds_bytes: int


@dataclass(frozen=True)
class Banks:
    """LDS banks: dword address d lies in bank d mod ``count``."""

    count: int
    width_bytes: int


@dataclass(frozen=True)
class Passes:
    """Lane grouping: per instruction, the lane bits that select the pass (``lane_grouping`` picks
    one of ``groupings``; a grouping other than the first lists only its differences)."""

    lane_grouping: str
    groupings: tuple[tuple[str, tuple[tuple[str, tuple[int, ...]], ...]], ...]


@dataclass(frozen=True)
class Timing:
    """Issue and latency constants, in cycles (``queue_depth`` in instructions)."""

    issue_interval: int
    queue_depth: int
    lds_latency: int
    clock_latency: int
    barrier_latency: int
    dscnt_max: int


@dataclass(frozen=True)
class Arbiter:
    """Who goes first when two heads conflict."""

    grant_policy: str
    tie_break: str


@dataclass(frozen=True)
class Drift:
    """Warp drift: ``off`` (the seed's lock step) or ``uniform`` issue jitter."""

    model: str
    jitter_cycles: int


_CHOICES = {
    "arbiter.grant_policy": ("oldest_first",),
    "arbiter.tie_break": ("alternate",),
    "drift.model": ("off", "uniform"),
}


@dataclass(frozen=True)
class HardwareConfig:
    """One MI450 WGP. Build with :meth:`from_yaml`, :func:`load_hardware` or :meth:`from_dict`."""

    name: str
    wgp: Wgp
    ports: Ports
    partitions: Partitions
    banks: Banks
    passes: Passes
    timing: Timing
    arbiter: Arbiter
    drift: Drift
    source: str = field(default="<dict>", compare=False)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_yaml(cls, path: str | Path) -> HardwareConfig:
        """Read and validate a hardware YAML file."""
        path = Path(path)
        try:
            text = path.read_text()
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such hardware config file") from None
        except IsADirectoryError:
            raise ConfigError(f"{path}: is a directory, expected a hardware YAML file") from None
        except (OSError, UnicodeDecodeError) as err:
            reason = err.strerror if isinstance(err, OSError) else "not a text file"
            raise ConfigError(f"{path}: cannot read the hardware config ({reason})") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as err:
            raise ConfigError(f"{_display(path)}: not valid YAML ({_yaml_problem(err)})") from None
        return cls.from_dict(data, source=_display(path))

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> HardwareConfig:
        """Validate a nested dict (the YAML's structure) into a config."""
        return _Reader(source).config(data)

    def to_dict(self) -> dict[str, Any]:
        """The nested dict this config was read from (round-trips through :meth:`from_dict`)."""
        return {
            "name": self.name,
            "wgp": {
                "simds": self.wgp.simds,
                "warp_size": self.wgp.warp_size,
                "pairs": {name: list(simds) for name, simds in self.wgp.pairs},
            },
            "ports": {
                "names": list(self.ports.names),
                "bytes_per_cycle": self.ports.bytes_per_cycle,
            },
            "partitions": {
                "size": self.partitions.size,
                "count": self.partitions.count,
                "lds": list(self.partitions.lds),
                "l0": list(self.partitions.l0),
                "lds_bytes": self.partitions.lds_bytes,
            },
            "banks": {"count": self.banks.count, "width_bytes": self.banks.width_bytes},
            "passes": {
                "lane_grouping": self.passes.lane_grouping,
                "groupings": {
                    name: {op: list(bits) for op, bits in table}
                    for name, table in self.passes.groupings
                },
            },
            "timing": dict(vars(self.timing)),
            "arbiter": dict(vars(self.arbiter)),
            "drift": dict(vars(self.drift)),
        }

    def with_overrides(self, **changes: Any) -> HardwareConfig:
        """A copy with fields changed, by dotted path or by section dict; re-validated.

        >>> hw = load_hardware()
        >>> hw.with_overrides(**{"timing.lds_latency": 40}).timing.lds_latency
        40
        >>> hw.with_overrides(timing={"queue_depth": 2}).timing.queue_depth
        2
        """
        raw = self.to_dict()
        for key, value in changes.items():
            _set_dotted(raw, key, value, self.source)
        return replace(HardwareConfig.from_dict(raw, source=self.source), source=self.source)

    # -- derived quantities ---------------------------------------------------------------------
    @property
    def pair_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.wgp.pairs)

    @property
    def num_pairs(self) -> int:
        return len(self.wgp.pairs)

    @property
    def num_ports(self) -> int:
        return len(self.ports.names)

    def simd_of_warp(self, warp: int) -> int:
        """Seed: warp N runs on SIMD N mod 4."""
        return warp % self.wgp.simds

    def pair_of_simd(self, simd: int) -> int:
        """Index (into ``pair_names``) of the pair holding ``simd``."""
        for index, (_, simds) in enumerate(self.wgp.pairs):
            if simd in simds:
                return index
        raise ConfigError(f"{self.source}: SIMD {simd} is in no pair of 'wgp.pairs'")

    def pair_of_warp(self, warp: int) -> int:
        return self.pair_of_simd(self.simd_of_warp(warp))

    def lane_bits(self, op: str) -> tuple[int, ...]:
        """Lane-index bits selecting the pass of ``op`` under the chosen lane grouping."""
        return _lane_bits(self.passes, op, self.source)


def _lane_bits(passes: Passes, op: str, source: str) -> tuple[int, ...]:
    tables = dict(passes.groupings)
    for name in (passes.lane_grouping, passes.groupings[0][0]):
        table = dict(tables[name])
        if op in table:
            return table[op]
    raise ConfigError(f"{source}: no lane grouping for instruction {op!r} in 'passes.groupings'")


def default_hardware_path() -> Path:
    """``configs/mi450.yaml`` of the source checkout, else the copy shipped in the package."""
    return _REPO if _REPO.is_file() else _PACKAGED


def load_hardware(path: str | Path | None = None) -> HardwareConfig:
    """The hardware config at ``path`` (default: :func:`default_hardware_path`)."""
    return _load_cached(str(Path(path) if path is not None else default_hardware_path()))


@lru_cache(maxsize=16)
def _load_cached(path: str) -> HardwareConfig:
    return HardwareConfig.from_yaml(path)


def parse_overrides(items: list[str] | tuple[str, ...], source: str = "--set") -> dict[str, Any]:
    """``["timing.lds_latency=40", ...]`` -> ``{"timing.lds_latency": 40}`` (values as YAML).

    >>> parse_overrides(["timing.lds_latency=40", "passes.lane_grouping=triton"])
    {'timing.lds_latency': 40, 'passes.lane_grouping': 'triton'}
    """
    changes: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{source}: {item!r} is not key=value (e.g. timing.lds_latency=40)")
        try:
            changes[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            raise ConfigError(f"{source}: value of {key!r} is not valid YAML: {value!r}") from None
    return changes


def apply_overrides(hw: HardwareConfig, items: list[str] | tuple[str, ...]) -> HardwareConfig:
    """``hw`` with ``--set KEY=VALUE`` items applied; errors name the ``--set`` item, not the file.

    >>> apply_overrides(load_hardware(), ["timing.lds_latency=40"]).timing.lds_latency
    40
    >>> apply_overrides(load_hardware(), ["timing.lds_latency=-1"])
    Traceback (most recent call last):
    ...
    wgpsim.errors.ConfigError: --set timing.lds_latency=-1: field 'timing.lds_latency' must be a positive integer, got -1
    """
    if not items:
        return hw
    raw = hw.to_dict()
    for item in items:
        ((key, value),) = parse_overrides([item]).items()
        _set_dotted(raw, key, value, f"--set {item}")
    marker = "\0"
    try:
        changed = HardwareConfig.from_dict(raw, source=marker)
    except ConfigError as err:
        problem = str(err).removeprefix(f"{marker}: ")
        named = [i for i in items if f"'{i.partition('=')[0].strip()}" in problem]
        raise ConfigError(f"--set {(named or items)[-1]}: {problem}") from None
    return replace(changed, source=hw.source)


def _yaml_problem(err: yaml.YAMLError) -> str:
    """One line for a YAML syntax error: the problem and its line (PyYAML's text spans lines)."""
    problem = getattr(err, "problem", None) or type(err).__name__
    mark = getattr(err, "problem_mark", None)
    return f"{problem} at line {mark.line + 1}" if mark is not None else problem


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _set_dotted(raw: dict, key: str, value: Any, source: str) -> None:
    parts = key.split(".")
    node = raw
    for depth, part in enumerate(parts):
        if not isinstance(node, dict) or part not in node:
            where = ".".join(parts[: depth + 1])
            raise ConfigError(f"{source}: cannot override unknown field {where!r}")
        if depth == len(parts) - 1:
            if isinstance(value, dict) and isinstance(node[part], dict):
                for sub, sub_value in value.items():
                    _set_dotted(node[part], sub, sub_value, source)
            else:
                node[part] = copy.deepcopy(value)
        else:
            node = node[part]


class _Reader:
    """Validates the YAML structure field by field, naming ``source`` and the dotted field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, what: str, value: Any) -> ConfigError:
        return ConfigError(f"{self.source}: field {path!r} must be {what}, got {value!r}")

    def section(self, data: Any, path: str, keys: tuple[str, ...]) -> dict:
        where = f"section {path!r}" if path else "the top level"
        if not isinstance(data, dict):
            raise ConfigError(f"{self.source}: {where} must be a mapping, got {data!r}")
        unknown = sorted(set(data) - set(keys))
        if unknown:
            raise ConfigError(
                f"{self.source}: unknown field {_join(path, unknown[0])!r} "
                f"(valid in {where}: {', '.join(keys)})"
            )
        missing = [k for k in keys if k not in data]
        if missing:
            raise ConfigError(f"{self.source}: missing field {_join(path, missing[0])!r}")
        return data

    def positive(self, value: Any, path: str, minimum: int = 1) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            what = "a positive integer" if minimum == 1 else "a non-negative integer"
            raise self.fail(path, what, value)
        return value

    def ints(self, value: Any, path: str, minimum: int = 0) -> tuple[int, ...]:
        ok = isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= minimum for v in value
        )
        if not ok or len(set(value)) != len(value):
            raise self.fail(path, f"a list of distinct integers >= {minimum}", value)
        return tuple(value)

    def choice(self, value: Any, path: str) -> str:
        valid = _CHOICES[path]
        if value not in valid:
            hint = " (quote it in YAML: 'off')" if value is False else ""
            raise self.fail(path, f"one of {', '.join(valid)}{hint}", value)
        return value

    def config(self, data: Any) -> HardwareConfig:
        keys = (
            "name",
            "wgp",
            "ports",
            "partitions",
            "banks",
            "passes",
            "timing",
            "arbiter",
            "drift",
        )
        top = self.section(data, "", keys)
        if not isinstance(top["name"], str) or not top["name"]:
            raise self.fail("name", "a non-empty string", top["name"])
        wgp = self.wgp(top["wgp"])
        return HardwareConfig(
            name=top["name"],
            wgp=wgp,
            ports=self.ports(top["ports"]),
            partitions=self.partitions(top["partitions"]),
            banks=self.banks(top["banks"]),
            passes=self.passes(top["passes"], wgp, top),
            timing=self.timing(top["timing"]),
            arbiter=Arbiter(
                **{
                    k: self.choice(v, f"arbiter.{k}")
                    for k, v in self.section(
                        top["arbiter"], "arbiter", ("grant_policy", "tie_break")
                    ).items()
                }
            ),
            drift=self.drift(top["drift"]),
            source=self.source,
        )

    def wgp(self, data: Any) -> Wgp:
        d = self.section(data, "wgp", ("simds", "warp_size", "pairs"))
        simds = self.positive(d["simds"], "wgp.simds")
        warp_size = self.positive(d["warp_size"], "wgp.warp_size")
        if warp_size != LANES:
            raise self.fail(
                "wgp.warp_size", f"{LANES} (traces hold {LANES} lanes per warp, wave32)", warp_size
            )
        if not isinstance(d["pairs"], dict) or not d["pairs"]:
            raise self.fail("wgp.pairs", "a mapping of pair name -> SIMD list", d["pairs"])
        pairs = tuple((str(n), self.ints(s, f"wgp.pairs.{n}")) for n, s in d["pairs"].items())
        used = sorted(s for _, group in pairs for s in group)
        if used != list(range(simds)):
            raise self.fail("wgp.pairs", f"a partition of SIMDs 0..{simds - 1}", d["pairs"])
        return Wgp(simds, warp_size, pairs)

    def ports(self, data: Any) -> Ports:
        d = self.section(data, "ports", ("names", "bytes_per_cycle"))
        names = d["names"]
        if not isinstance(names, list) or not names or len(set(map(str, names))) != len(names):
            raise self.fail("ports.names", "a non-empty list of distinct port names", names)
        return Ports(
            tuple(map(str, names)), self.positive(d["bytes_per_cycle"], "ports.bytes_per_cycle")
        )

    def partitions(self, data: Any) -> Partitions:
        keys = ("size", "count", "lds", "l0", "lds_bytes")
        d = self.section(data, "partitions", keys)
        size = self.positive(d["size"], "partitions.size")
        count = self.positive(d["count"], "partitions.count")
        lds, l0 = self.ints(d["lds"], "partitions.lds"), self.ints(d["l0"], "partitions.l0")
        if set(lds) & set(l0) or any(p >= count for p in lds + l0):
            raise self.fail(
                "partitions.lds", f"disjoint from 'l0' and within 0..{count - 1}", d["lds"]
            )
        if list(lds) != list(range(len(lds))):
            raise self.fail(
                "partitions.lds",
                f"partitions 0..{len(lds) - 1} in order (LDS byte a lies in partition a // size)",
                d["lds"],
            )
        lds_bytes = self.positive(d["lds_bytes"], "partitions.lds_bytes")
        if lds_bytes != len(lds) * size:
            raise self.fail(
                "partitions.lds_bytes", f"len(lds) * size = {len(lds) * size}", lds_bytes
            )
        return Partitions(size, count, lds, l0, lds_bytes)

    def banks(self, data: Any) -> Banks:
        d = self.section(data, "banks", ("count", "width_bytes"))
        return Banks(
            self.positive(d["count"], "banks.count"),
            self.positive(d["width_bytes"], "banks.width_bytes"),
        )

    def passes(self, data: Any, wgp: Wgp, top: dict) -> Passes:
        from wgpsim.trace.instructions import INSTRUCTIONS

        d = self.section(data, "passes", ("lane_grouping", "groupings"))
        groupings = d["groupings"]
        if not isinstance(groupings, dict) or not groupings:
            raise self.fail("passes.groupings", "a mapping of grouping name -> table", groupings)
        lane_bits = log2(wgp.warp_size)
        port_bytes = top["ports"]["bytes_per_cycle"]
        tables = []
        for gname, table in groupings.items():
            path = f"passes.groupings.{gname}"
            if not isinstance(table, dict):
                raise self.fail(path, "a mapping of instruction -> lane bits", table)
            entries = []
            for op, bits in table.items():
                if op not in INSTRUCTIONS:
                    raise ConfigError(
                        f"{self.source}: unknown instruction {_join(path, str(op))!r} "
                        f"(valid: {', '.join(INSTRUCTIONS)})"
                    )
                bits = self.ints(bits, f"{path}.{op}")
                if any(b >= lane_bits for b in bits):
                    raise self.fail(f"{path}.{op}", f"lane bits in 0..{lane_bits - 1}", list(bits))
                pass_bytes = (wgp.warp_size >> len(bits)) * INSTRUCTIONS[op].bytes_per_lane
                if pass_bytes > port_bytes:
                    raise self.fail(
                        f"{path}.{op}",
                        f"enough passes that one moves <= {port_bytes} B",
                        list(bits),
                    )
                entries.append((op, bits))
            tables.append((str(gname), tuple(entries)))
        base = dict(tables[0][1])
        missing = [op for op in INSTRUCTIONS if op not in base]
        if missing:
            raise ConfigError(
                f"{self.source}: missing field 'passes.groupings.{tables[0][0]}.{missing[0]}' "
                "(the first grouping must list every instruction)"
            )
        choice = d["lane_grouping"]
        if choice not in groupings:
            raise self.fail("passes.lane_grouping", f"one of {', '.join(groupings)}", choice)
        return Passes(choice, tuple(tables))

    def timing(self, data: Any) -> Timing:
        names = (
            "issue_interval",
            "queue_depth",
            "lds_latency",
            "clock_latency",
            "barrier_latency",
            "dscnt_max",
        )
        d = self.section(data, "timing", names)
        return Timing(**{k: self.positive(d[k], f"timing.{k}") for k in names})

    def drift(self, data: Any) -> Drift:
        d = self.section(data, "drift", ("model", "jitter_cycles"))
        return Drift(
            self.choice(d["model"], "drift.model"),
            self.positive(d["jitter_cycles"], "drift.jitter_cycles", minimum=0),
        )


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
