"""The schema of the hardware YAML: one frozen dataclass per section, and the reader that checks
a nested dict field by field, naming the source and the dotted field in one-line errors.

``wgpsim.hw.config.HardwareConfig`` is made of these sections; this module only validates.

>>> read_sections({"name": "x"}, "hw.yaml")
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: hw.yaml: missing field 'wgp'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wgpsim.errors import ConfigError, did_you_mean, field_error, shown
from wgpsim.layout.bits import log2
from wgpsim.trace.instructions import INSTRUCTIONS, LANES

SECTIONS = (
    "name",
    "wgp",
    "ports",
    "partitions",
    "banks",
    "passes",
    "timing",
    "arbiter",
    "drift",
    "costs",
)
"""Top-level fields of the hardware YAML, in file order."""


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


GROUPING_ALIASES = {"seed": "blog"}
"""Old names of lane groupings, read as the new ones (``lane_grouping: seed`` and a
``groupings: {seed: ...}`` table in a hardware file written before the AMD blog's grouping was
named ``blog``: "seed" also names the random seed)."""


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
    """Who goes first when two heads conflict: ``grant_policy`` names the policy
    (``wgpsim.hw.rules.POLICIES``), ``tie_break`` orders ``oldest_first``'s equally old heads."""

    grant_policy: str
    tie_break: str


@dataclass(frozen=True)
class Drift:
    """Warp drift: ``off`` (the seed's lock step) or ``uniform`` issue jitter."""

    model: str
    jitter_cycles: int


@dataclass(frozen=True)
class Costs:
    """Issue cycles of the work between LDS instructions that a compiled kernel's loop runs
    (``wgpsim.kernel.loop.program``): how long a warp spends on one instruction of each class
    before its next one issues. ``wmma_xdl_2pass`` / ``_4pass`` / ``wmma_valu_4pass`` are
    LLVM's GFX1250 classes (``WriteXDL2PassWMMA`` ...), chosen per mnemonic as its ``InstRW``
    patterns do."""

    wmma_xdl_2pass: int
    wmma_xdl_4pass: int
    wmma_valu_4pass: int
    valu: int
    salu: int
    global_issue: int
    smem_issue: int
    tdm_issue: int
    async_issue: int
    branch: int
    memory_wait: int
    lane_permute_issue: int


_CHOICES = {
    "arbiter.grant_policy": ("oldest_first", "round_robin", "fixed_priority"),
    "arbiter.tie_break": ("alternate", "lowest_pair"),
    "drift.model": ("off", "uniform"),
}


RANGES: dict[str, tuple[int, int]] = {
    "wgp.simds": (1, 16),
    "wgp.warp_size": (1, 64),
    "wgp.max_warps": (1, 1024),
    "ports.bytes_per_cycle": (1, 1 << 16),
    "partitions.size": (1, 1 << 24),
    "partitions.count": (1, 32),
    "partitions.lds_bytes": (1, 1 << 24),
    "banks.count": (1, 1 << 12),
    "banks.width_bytes": (1, 64),
    "timing.issue_interval": (1, 1 << 16),
    "timing.queue_depth": (1, 1 << 10),
    "timing.lds_latency": (1, 1 << 16),
    "timing.clock_latency": (1, 1 << 16),
    "timing.barrier_latency": (1, 1 << 16),
    "timing.dscnt_max": (1, 63),
    **{f"costs.{name}": (0, 1 << 16) for name in Costs.__dataclass_fields__},
    "drift.jitter_cycles": (0, 1 << 16),
}
"""The valid range of every numeric field, inclusive: the one place a bound is declared.

These are limits of the model, not hardware facts (those live in the YAML with their sources).
They keep every run's cost bounded before anything is allocated: the fast engine keeps a ring
of ``lds_latency`` completion buckets and a queue of ``queue_depth`` instructions per pair,
partitions are bits of a 32-bit mask, the LDS is at most 16 MiB (50 times MI450's; shapes are
bounded to match, ``wgpsim.layout.dtypes.MAX_ELEMENTS``), and a latency of more than 65,536
cycles is no LDS. ``dscnt_max`` is at most 63: s_wait_dscnt's counter is 6 bits (the YAML).
"""

_MAX_PORTS = 8
"""Most ports of the arbiter (the model has two, L and C)."""


def valid_range(path: str) -> str:
    """``"lo..hi"`` of a numeric field, as error messages print it.

    >>> valid_range("timing.lds_latency")
    '1..65536'
    """
    low, high = RANGES[path]
    return f"{low}..{high}"


def read_sections(data: Any, source: str) -> dict[str, Any]:
    """The validated sections of a nested dict (the YAML's structure), keyed as ``SECTIONS``."""
    return _Reader(source).config(data)


class _Reader:
    """Validates the YAML structure field by field, naming ``source`` and the dotted field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, what: str, value: Any) -> ConfigError:
        return field_error(
            f"{self.source}: field {path!r} must be {what}, got {shown(value)}",
            path,
            f"must be {what}, got {shown(value)}",
        )

    def section(
        self, data: Any, path: str, keys: tuple[str, ...], optional: tuple[str, ...] = ()
    ) -> dict:
        where = f"section {path!r}" if path else "the top level"
        if not isinstance(data, dict):
            message = f"{self.source}: {where} must be a mapping, got {shown(data)}"
            if not path:
                raise ConfigError(message)
            raise field_error(message, path, f"must be a mapping, got {shown(data)}")
        unknown = sorted(set(data) - set(keys) - set(optional))
        if unknown:
            problem = f"{did_you_mean(unknown[0], keys)} (valid in {where}: {', '.join(keys)})"
            raise field_error(
                f"{self.source}: unknown field {_join(path, unknown[0])!r}{problem}",
                _join(path, unknown[0]),
                f"unknown field{problem}",
            )
        missing = [k for k in keys if k not in data]
        if missing:
            raise ConfigError(f"{self.source}: missing field {_join(path, missing[0])!r}")
        return data

    def number(self, value: Any, path: str) -> int:
        """An integer field within its :data:`RANGES` entry."""
        low, high = RANGES[path]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            what = "a positive integer" if low == 1 else "a non-negative integer"
            raise self.fail(path, f"{what} (valid: {valid_range(path)})", value)
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

    def config(self, data: Any) -> dict[str, Any]:
        top = self.section(data, "", SECTIONS)
        if not isinstance(top["name"], str) or not top["name"]:
            raise self.fail("name", "a non-empty string", top["name"])
        wgp = self.wgp(top["wgp"])
        arbiter = self.section(top["arbiter"], "arbiter", ("grant_policy", "tie_break"))
        return {
            "name": top["name"],
            "wgp": wgp,
            "ports": self.ports(top["ports"]),
            "partitions": self.partitions(top["partitions"]),
            "banks": self.banks(top["banks"]),
            "passes": self.passes(top["passes"], wgp, top),
            "timing": self.timing(top["timing"]),
            "arbiter": Arbiter(**{k: self.choice(v, f"arbiter.{k}") for k, v in arbiter.items()}),
            "drift": self.drift(top["drift"]),
            "costs": self.costs(top["costs"]),
        }

    def wgp(self, data: Any) -> Wgp:
        d = self.section(data, "wgp", ("simds", "warp_size", "pairs"), optional=("max_warps",))
        if "max_warps" in d:  # read by the layout layer from the packaged file (hardware_fact)
            self.number(d["max_warps"], "wgp.max_warps")
        simds = self.number(d["simds"], "wgp.simds")
        warp_size = self.number(d["warp_size"], "wgp.warp_size")
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
        if (
            not isinstance(names, list)
            or not 1 <= len(names) <= _MAX_PORTS
            or len(set(map(str, names))) != len(names)
        ):
            raise self.fail("ports.names", f"a list of 1..{_MAX_PORTS} distinct port names", names)
        return Ports(
            tuple(map(str, names)), self.number(d["bytes_per_cycle"], "ports.bytes_per_cycle")
        )

    def partitions(self, data: Any) -> Partitions:
        keys = ("size", "count", "lds", "l0", "lds_bytes")
        d = self.section(data, "partitions", keys)
        size = self.number(d["size"], "partitions.size")
        count = self.number(d["count"], "partitions.count")
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
        lds_bytes = self.number(d["lds_bytes"], "partitions.lds_bytes")
        if lds_bytes != len(lds) * size:
            raise self.fail(
                "partitions.lds_bytes", f"len(lds) * size = {len(lds) * size}", lds_bytes
            )
        return Partitions(size, count, lds, l0, lds_bytes)

    def banks(self, data: Any) -> Banks:
        d = self.section(data, "banks", ("count", "width_bytes"))
        return Banks(
            self.number(d["count"], "banks.count"),
            self.number(d["width_bytes"], "banks.width_bytes"),
        )

    def passes(self, data: Any, wgp: Wgp, top: dict) -> Passes:
        d = self.section(data, "passes", ("lane_grouping", "groupings"))
        groupings = d["groupings"]
        if not isinstance(groupings, dict) or not groupings:
            raise self.fail("passes.groupings", "a mapping of grouping name -> table", groupings)
        lane_bits = log2(wgp.warp_size)
        port_bytes = top["ports"]["bytes_per_cycle"]
        tables = []
        groupings = {GROUPING_ALIASES.get(str(g), g): t for g, t in groupings.items()}
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
        choice = GROUPING_ALIASES.get(choice, choice) if isinstance(choice, str) else choice
        if not isinstance(choice, str) or choice not in groupings:
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
        return Timing(**{k: self.number(d[k], f"timing.{k}") for k in names})

    def drift(self, data: Any) -> Drift:
        d = self.section(data, "drift", ("model", "jitter_cycles"))
        return Drift(
            self.choice(d["model"], "drift.model"),
            self.number(d["jitter_cycles"], "drift.jitter_cycles"),
        )

    def costs(self, data: Any) -> Costs:
        names = tuple(Costs.__dataclass_fields__)
        d = self.section(data, "costs", names)
        return Costs(**{k: self.number(d[k], f"costs.{k}") for k in names})


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
