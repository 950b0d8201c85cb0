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
from wgpsim.hw.grouping_sources import read_sources
from wgpsim.hw.targets import instruction_set, is_target_name
from wgpsim.layout.bits import log2
from wgpsim.trace.instructions import INSTRUCTIONS, WAVE_SIZES

SECTIONS = (
    "name",
    "target",
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
"""Top-level fields of the hardware YAML, in file order (``target`` may be absent)."""

OPTIONAL = ("target",)
"""Top-level fields a hardware YAML may leave out."""


@dataclass(frozen=True)
class Wgp:
    """SIMDs of the WGP and how they pair up; warp w runs on SIMD w mod ``simds``."""

    simds: int
    warp_size: int
    pairs: tuple[tuple[str, tuple[int, ...]], ...]
    #: whether fp32 -> fp16/bf16 conversions pack two results in one register
    #: (``v_cvt_pk_f16_f32``): a ``ds_write_b16`` of such a value's high half is ``_d16_hi``
    packed_convert: bool = True


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
    """LDS banks: dword address d lies in bank d mod ``count``; a write (``ds_store_*``, the
    TDM's writes, a direct-to-LDS write) goes through ``store_count`` banks when the file gives
    it (gfx950 reads through 64 banks and writes through 32), else through ``count``; an
    instruction in ``by_instruction`` through its own count (gfx950's ``ds_read_b96``: 32).
    ``HardwareConfig.bank_count(op)`` applies the three."""

    count: int
    width_bytes: int
    store_count: int | None = None
    by_instruction: tuple[tuple[str, int], ...] = ()


GROUPING_ALIASES = {"seed": "blog"}
"""Old names of lane groupings, read as the new ones (``lane_grouping: seed`` and a
``groupings: {seed: ...}`` table in a hardware file written before the AMD blog's grouping was
named ``blog``: "seed" also names the random seed)."""


@dataclass(frozen=True)
class Passes:
    """Lane grouping: per instruction, a linear map over GF(2) from lane bits to pass bits
    (``lane_grouping`` picks one of ``groupings``; a grouping other than the first lists only
    its differences). An instruction's entry is its masks: pass bit i of lane l is the XOR of
    the bits of l that mask i lists (the YAML's plain ``[4]`` reads as the masks ``((4,),)``).
    """

    lane_grouping: str
    groupings: tuple[tuple[str, tuple[tuple[str, tuple[tuple[int, ...], ...]], ...]], ...]
    #: per grouping, each instruction's source kind (``wgpsim.hw.grouping_sources``); () if absent
    sources: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()


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
    before its next one issues. The matrix classes are LLVM's (``SISchedule.td``), one key per
    class, chosen per mnemonic as the target's ``InstRW`` patterns do
    (``wgpsim.kernel.loop.matrix_classes``); a file gives those of its target only: gfx1250
    ``wmma_xdl_2pass`` / ``_4pass`` / ``wmma_valu_4pass`` (``WriteXDL2PassWMMA`` ...), gfx9
    ``mfma_2pass`` ... ``mfma_16pass`` (``Write2PassMAI`` ...) and ``dgemm_*``
    (``Write4PassDGEMM`` ...). A class the file leaves out is None."""

    valu: int
    salu: int
    global_issue: int
    smem_issue: int
    tdm_issue: int
    async_issue: int
    branch: int
    memory_wait: int
    lane_permute_issue: int
    wmma_xdl_2pass: int | None = None
    wmma_xdl_4pass: int | None = None
    wmma_valu_4pass: int | None = None
    mfma_2pass: int | None = None
    mfma_4pass: int | None = None
    mfma_8pass: int | None = None
    mfma_16pass: int | None = None
    dgemm_4pass: int | None = None
    dgemm_8pass: int | None = None
    dgemm_16pass: int | None = None

    @classmethod
    def optional(cls) -> tuple[str, ...]:
        """The matrix-class keys, which a file gives only for its target's classes."""
        return tuple(k for k, f in cls.__dataclass_fields__.items() if f.default is None)


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
    "banks.store_count": (1, 1 << 12),
    "banks.width_bytes": (1, 64),
    **{f"banks.by_instruction.{op}": (1, 1 << 12) for op in INSTRUCTIONS},
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
            valid = (*keys, *optional)
            problem = f"{did_you_mean(unknown[0], valid)} (valid in {where}: {', '.join(valid)})"
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
        required = tuple(k for k in SECTIONS if k not in OPTIONAL)
        top = self.section(data, "", required, optional=OPTIONAL)
        if not isinstance(top["name"], str) or not top["name"]:
            raise self.fail("name", "a non-empty string", top["name"])
        target = top.get("target", "")
        if target != "" and not is_target_name(target):
            raise self.fail("target", "Triton's target name, e.g. hip:gfx950", target)
        wgp = self.wgp(top["wgp"])
        arbiter = self.section(top["arbiter"], "arbiter", ("grant_policy", "tie_break"))
        ports, partitions = self.ports(top["ports"]), self.partitions(top["partitions"])
        banks, passes = self.banks(top["banks"]), self.passes(top["passes"], wgp, top)
        for op, _ in banks.by_instruction:
            if op not in dict(passes.groupings[0][1]):
                raise self.fail(f"banks.by_instruction.{op}", "an instruction of this target", op)
        return {
            "name": top["name"],
            "target": target,
            "wgp": wgp,
            "ports": ports,
            "partitions": partitions,
            "banks": banks,
            "passes": passes,
            "timing": self.timing(top["timing"]),
            "arbiter": Arbiter(**{k: self.choice(v, f"arbiter.{k}") for k, v in arbiter.items()}),
            "drift": self.drift(top["drift"]),
            "costs": self.costs(top["costs"]),
        }

    def wgp(self, data: Any) -> Wgp:
        d = self.section(
            data, "wgp", ("simds", "warp_size", "pairs"), optional=("max_warps", "packed_convert")
        )
        packed = d.get("packed_convert", True)
        if not isinstance(packed, bool):
            raise self.fail("wgp.packed_convert", "true or false", packed)
        if "max_warps" in d:  # read by the layout layer from the packaged file (hardware_fact)
            self.number(d["max_warps"], "wgp.max_warps")
        simds = self.number(d["simds"], "wgp.simds")
        warp_size = self.number(d["warp_size"], "wgp.warp_size")
        if warp_size not in WAVE_SIZES:
            raise self.fail("wgp.warp_size", "32 (wave32) or 64 (wave64)", warp_size)
        if not isinstance(d["pairs"], dict) or not d["pairs"]:
            raise self.fail("wgp.pairs", "a mapping of pair name -> SIMD list", d["pairs"])
        pairs = tuple((str(n), self.ints(s, f"wgp.pairs.{n}")) for n, s in d["pairs"].items())
        used = sorted(s for _, group in pairs for s in group)
        if used != list(range(simds)):
            raise self.fail("wgp.pairs", f"a partition of SIMDs 0..{simds - 1}", d["pairs"])
        return Wgp(simds, warp_size, pairs, packed)

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
        d = self.section(
            data, "banks", ("count", "width_bytes"), optional=("store_count", "by_instruction")
        )
        store = d.get("store_count")  # absent or null: writes go through `count` banks
        by = d.get("by_instruction", {})
        if not isinstance(by, dict) or any(op not in INSTRUCTIONS for op in by):
            raise self.fail("banks.by_instruction", "a mapping of instruction -> bank count", by)
        return Banks(
            self.number(d["count"], "banks.count"),
            self.number(d["width_bytes"], "banks.width_bytes"),
            None if store is None else self.number(store, "banks.store_count"),
            tuple((op, self.number(n, f"banks.by_instruction.{op}")) for op, n in by.items()),
        )

    def passes(self, data: Any, wgp: Wgp, top: dict) -> Passes:
        d = self.section(data, "passes", ("lane_grouping", "groupings"), optional=("sources",))
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
            for op, entry in table.items():
                if op not in INSTRUCTIONS:
                    raise ConfigError(
                        f"{self.source}: unknown instruction {_join(path, str(op))!r} "
                        f"(valid: {', '.join(INSTRUCTIONS)})"
                    )
                masks = self.lane_masks(entry, f"{path}.{op}", lane_bits)
                pass_bytes = (wgp.warp_size >> len(masks)) * INSTRUCTIONS[op].bytes_per_lane
                if pass_bytes > port_bytes:
                    raise self.fail(
                        f"{path}.{op}", f"enough passes that one moves <= {port_bytes} B", entry
                    )
                entries.append((op, masks))
            tables.append((str(gname), tuple(entries)))
        instruction_set(tables, self.source)
        choice = d["lane_grouping"]
        choice = GROUPING_ALIASES.get(choice, choice) if isinstance(choice, str) else choice
        if not isinstance(choice, str) or choice not in groupings:
            raise self.fail("passes.lane_grouping", f"one of {', '.join(groupings)}", choice)
        return Passes(choice, tuple(tables), read_sources(d.get("sources"), tables, self.source))

    def lane_masks(self, entry: Any, path: str, lane_bits: int) -> tuple[tuple[int, ...], ...]:
        """One instruction's grouping as masks: ``[4]`` (the lane bits that select the pass)
        or ``[[2, 3, 4], [5]]`` (pass bit i = XOR of the lane bits of mask i); the masks must
        be independent over GF(2), so every pass holds warp_size / 2**len(masks) lanes."""
        what = (
            f"a list of lane bits in 0..{lane_bits - 1}, or of masks (lists of such bits) "
            "independent over GF(2)"
        )
        if not isinstance(entry, list):
            raise self.fail(path, what, entry)
        masks = []
        for item in entry:
            bits = self.ints(item if isinstance(item, list) else [item], path)
            if not bits or any(b >= lane_bits for b in bits):
                raise self.fail(path, what, entry)
            masks.append(tuple(bits))
        if gf2_rank([sum(1 << b for b in m) for m in masks]) != len(masks):
            raise self.fail(path, what, entry)
        return tuple(masks)

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
        optional = Costs.optional()
        names = tuple(k for k in Costs.__dataclass_fields__ if k not in optional)
        d = self.section(data, "costs", names, optional)
        return Costs(**{k: self.number(d[k], f"costs.{k}") for k in (*names, *optional) if k in d})


def gf2_rank(vectors: list[int]) -> int:
    """Rank over GF(2) of bit vectors given as integers.

    >>> gf2_rank([0b11100, 0b100000]), gf2_rank([0b110, 0b011, 0b101])
    (2, 2)
    """
    basis: dict[int, int] = {}  # highest bit -> the basis vector with that highest bit
    for v in vectors:
        while v and v.bit_length() in basis:
            v ^= basis[v.bit_length()]
        if v:
            basis[v.bit_length()] = v
    return len(basis)


def masks_form(masks: tuple[tuple[int, ...], ...]) -> list:
    """An instruction's masks as the YAML writes them: the plain lane bits when every mask is
    one bit (the form that selects the pass by bits), else the list of masks.

    >>> masks_form(((4,),)), masks_form(((2, 3, 4), (5,)))
    ([4], [[2, 3, 4], [5]])
    """
    if all(len(m) == 1 for m in masks):
        return [m[0] for m in masks]
    return [list(m) for m in masks]


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
