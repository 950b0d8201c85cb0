"""The hardware config: one MI450 WGP as a frozen value read from ``wgpsim/hw/mi450.yaml``.

Every constant of the model lives in that one YAML file (``configs/mi450.yaml`` in a checkout is
a link to it) with a comment naming its source (the AMD blog, a fit or an assumption); this
module reads it, applies overrides and derives quantities. Sections map to
small frozen dataclasses, checked field by field in ``wgpsim.hw.config_schema``:

>>> hw = load_hardware()
>>> hw.ports.bytes_per_cycle, hw.partitions.size, hw.banks.count
(256, 65536, 64)
>>> hw.pair_names, hw.pair_of_warp(3)
(('A', 'B'), 1)
>>> hw.lane_masks("ds_load_b128"), hw.with_overrides(**{"passes.lane_grouping": "triton"}).lane_masks("ds_load_b128")
(((4,),), ((2,),))

Errors name the file and the field:

>>> hw.with_overrides(**{"ports.bytes_per_cycle": -1})
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: .../mi450.yaml: field 'ports.bytes_per_cycle' must be a positive integer (valid: 1..65536), got -1
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from wgpsim import overrides
from wgpsim.errors import SHOWN_CHARS, ConfigError
from wgpsim.hw.config_schema import (
    Arbiter,
    Banks,
    Costs,
    Drift,
    Partitions,
    Passes,
    Ports,
    Timing,
    Wgp,
    masks_form,
    read_sections,
)
from wgpsim.hw.grouping_sources import grouping_source, overridden
from wgpsim.inputs import load_yaml, read_text
from wgpsim.packaged import hardware_path, target_names, triton_targets
from wgpsim.trace.instructions import INSTRUCTIONS

__all__ = [
    "Arbiter",
    "Banks",
    "Costs",
    "Drift",
    "HardwareConfig",
    "Partitions",
    "Passes",
    "Ports",
    "Timing",
    "Wgp",
    "apply_overrides",
    "default_hardware_path",
    "load_hardware",
    "parse_overrides",
]


@dataclass(frozen=True)
class HardwareConfig:
    """One MI450 WGP. Build with :meth:`from_yaml`, :func:`load_hardware` or :meth:`from_dict`."""

    name: str
    target: str
    wgp: Wgp
    ports: Ports
    partitions: Partitions
    banks: Banks
    passes: Passes
    timing: Timing
    arbiter: Arbiter
    drift: Drift
    costs: Costs
    source: str = field(default="<dict>", compare=False)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_yaml(cls, path: str | Path) -> HardwareConfig:
        """Read and validate a hardware YAML file."""
        path = Path(path)
        try:
            text = read_text(path, "hardware YAML")
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such hardware config file") from None
        return cls.from_dict(load_yaml(text, _display(path)), source=_display(path))

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> HardwareConfig:
        """Validate a nested dict (the YAML's structure) into a config."""
        return cls(**read_sections(data, source), source=source)

    def to_dict(self) -> dict[str, Any]:
        """The nested dict this config was read from (round-trips through :meth:`from_dict`)."""
        return {
            "name": self.name,
            **({"target": self.target} if self.target else {}),
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
            "banks": {
                "count": self.banks.count,
                "width_bytes": self.banks.width_bytes,
                "store_count": self.banks.store_count,  # None: as count (overridable)
                **(
                    {"by_instruction": dict(self.banks.by_instruction)}
                    if self.banks.by_instruction
                    else {}
                ),
            },
            "passes": {
                "lane_grouping": self.passes.lane_grouping,
                "groupings": {
                    name: {op: masks_form(masks) for op, masks in table}
                    for name, table in self.passes.groupings
                },
                **(
                    {"sources": {name: dict(t) for name, t in self.passes.sources}}
                    if self.passes.sources
                    else {}
                ),
            },
            "timing": dict(vars(self.timing)),
            "arbiter": dict(vars(self.arbiter)),
            "drift": dict(vars(self.drift)),
            "costs": {k: v for k, v in vars(self.costs).items() if v is not None},
        }

    def with_overrides(self, **changes: Any) -> HardwareConfig:
        """A copy with fields changed, by dotted path or by section dict; re-validated.

        >>> hw = load_hardware()
        >>> hw.with_overrides(**{"timing.lds_latency": 40}).timing.lds_latency
        40
        >>> hw.with_overrides(timing={"queue_depth": 2}).timing.queue_depth
        2
        """
        before = self.to_dict()
        raw = overrides.apply(before, changes, self.source)
        own = any(str(k).startswith("passes.sources") for k in changes)
        if not own and "sources" not in (changes.get("passes") or {}):
            groupings = before["passes"]["groupings"]
            raw["passes"] = overridden(raw["passes"], groupings)
        return replace(HardwareConfig.from_dict(raw, source=self.source), source=self.source)

    def with_lds_per_pair(self) -> HardwareConfig:
        """A copy with the LDS partitions repeated once per SIMD pair (pair p's copy at
        p x ``lds_bytes``), the L0 partitions after them: the loop what-if
        ``separate_partitions``.

        >>> load_hardware().with_lds_per_pair().partitions.count
        11
        """
        p = self.partitions
        nlds = self.num_pairs * len(p.lds)
        return self.with_overrides(
            **{
                "partitions.count": nlds + len(p.l0),
                "partitions.lds": list(range(nlds)),
                "partitions.l0": list(range(nlds, nlds + len(p.l0))),
                "partitions.lds_bytes": self.num_pairs * p.lds_bytes,
            }
        )

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

    @property
    def instructions(self) -> tuple[str, ...]:
        """The LDS instructions this target has: those its first grouping lists (in file order).

        >>> "ds_load_b128" in load_hardware().instructions, "ds_read_b128" in load_hardware().instructions
        (True, False)
        """
        return tuple(op for op, _ in self.passes.groupings[0][1])

    @property
    def has_transposed_loads(self) -> bool:
        """Whether this target has a transposed LDS load (gfx1250's ds_load_tr*, gfx950's
        ds_read_b64_tr_b*; gfx942 has none): a lowering for it may choose one.

        >>> [target_hardware(f"hip:{a}").has_transposed_loads for a in ("gfx1250", "gfx942")]
        [True, False]
        """
        return any(
            INSTRUCTIONS[n].kind == "load_tr" for n in self.instructions if n in INSTRUCTIONS
        )

    def require(self, ops) -> None:
        """A ConfigError, in one line, naming the first of ``ops`` (instruction names) that this
        target lacks; control ops and names outside the catalogue are the trace's to check.

        >>> load_hardware().require(["ds_load_b128", "wait_ds", "ds_read_b128"])
        Traceback (most recent call last):
        ...
        wgpsim.errors.ConfigError: the trace uses ds_read_b128, which mi450 (hip:gfx1250) does not have (its LDS instructions: ds_load_b32, ...)
        """
        have = set(self.instructions)
        for op in ops:
            if op in INSTRUCTIONS and op not in have:
                raise ConfigError(
                    f"the trace uses {op}, which {self.describe()} does not have "
                    f"(its LDS instructions: {', '.join(o for o in INSTRUCTIONS if o in have)})"
                )

    def lane_masks_or_one_pass(self, op: str) -> tuple[tuple[int, ...], ...]:
        """``lane_masks(op)``, or () (one pass) for an instruction this target lacks: for tables
        indexed by every op code (the fast engine's); :meth:`require` refuses a trace using it.
        """
        return self.lane_masks(op) if op in self.instructions else ()

    def describe(self) -> str:
        """``mi450 (hip:gfx1250)``: the name, and the target when the file gives one."""
        return f"{self.name} ({self.target})" if self.target else self.name

    def ds_wait(self, count: str = "0") -> str:
        """The wait for ``count`` LDS instructions left in flight as this target's assembly
        spells it: gfx9's ``s_waitcnt lgkmcnt(0)``, gfx12's ``s_wait_dscnt 0`` (LLVM AMDGPU).

        >>> target_hardware("hip:gfx942").ds_wait(), target_hardware("hip:gfx1250").ds_wait("N")
        ('s_waitcnt lgkmcnt(0)', 's_wait_dscnt N')
        """
        gfx9 = (self.target or "").removeprefix("hip:").startswith("gfx9")
        return f"s_waitcnt lgkmcnt({count})" if gfx9 else f"s_wait_dscnt {count}"

    def bank_count(self, op: str) -> int:
        """Banks ``op`` goes through: its ``banks.by_instruction`` entry (gfx950's ds_read_b96:
        32), else ``banks.store_count`` for a write (a store, the TDM's, a direct-to-LDS write)
        when the file gives it, else ``banks.count``.

        >>> hw = load_hardware().with_overrides(**{"banks.store_count": 32})
        >>> hw.bank_count("ds_load_b128"), hw.bank_count("ds_store_b128"), load_hardware().bank_count("ds_store_b32")
        (64, 32, 64)
        """
        own = dict(self.banks.by_instruction).get(op)
        if own is not None:
            return own
        writes = INSTRUCTIONS[op].kind in ("store", "tdm", "lds_dma")
        store = self.banks.store_count
        return store if writes and store is not None else self.banks.count

    def grouping_source(self, op: str) -> str:
        """Where ``op``'s lane grouping comes from: measured, document or assumption
        (``passes.sources``), "unknown" when the file does not say.

        >>> hw = load_hardware()
        >>> hw.grouping_source("ds_load_b128"), hw.grouping_source("ds_load_tr16_b128")
        ('document', 'assumption')
        """
        p = self.passes
        return grouping_source(p.sources, p.lane_grouping, p.groupings[0][0], op)

    def lane_masks(self, op: str) -> tuple[tuple[int, ...], ...]:
        """The pass map of ``op`` under the chosen lane grouping: pass bit i of lane l is the
        XOR of the bits of l listed in mask i (``passes.groupings``; docs/DESIGN.md, "The
        hardware model")."""
        return _lane_masks(self.passes, op, self.source)


def _lane_masks(passes: Passes, op: str, source: str) -> tuple[tuple[int, ...], ...]:
    tables = dict(passes.groupings)
    for name in (passes.lane_grouping, passes.groupings[0][0]):
        table = dict(tables[name])
        if op in table:
            return table[op]
    if op in INSTRUCTIONS:
        raise ConfigError(
            f"{source}: this target does not have {op} (it is not in 'passes.groupings."
            f"{passes.groupings[0][0]}')"
        )
    raise ConfigError(f"{source}: no lane grouping for instruction {op!r} in 'passes.groupings'")


def default_hardware_path() -> Path:
    """The packaged MI450 file, ``wgpsim/hw/mi450.yaml`` (the one home of the hardware facts)."""
    return hardware_path("mi450")


def load_hardware(path: str | Path | None = None) -> HardwareConfig:
    """The hardware config at ``path`` (default: :func:`default_hardware_path`)."""
    path = Path(path) if path is not None else default_hardware_path()
    try:
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        stamp = None  # from_yaml names the problem
    return _load_cached(str(path), stamp)


def target_hardware(target: str | None) -> HardwareConfig:
    """The packaged hardware file for a module's ``ttg.target`` (its ``target:`` field names
    it; docs/DESIGN.md "Adding a hardware target"); the MI450 file for a module without one.

    >>> target_hardware("hip:gfx1250").name, target_hardware("").name
    ('mi450', 'mi450')
    >>> target_hardware("hip:gfx90a")
    Traceback (most recent call last):
    ...
    wgpsim.errors.ConfigError: no hardware file for target 'hip:gfx90a' (packaged: ...); --hw FILE names one
    """
    if not target:
        return load_hardware()
    path = triton_targets().get(target)
    if path is None:
        raise ConfigError(
            f"no hardware file for target {target!r} (packaged: {target_names()}); "
            "--hw FILE names one"
        )
    return load_hardware(path)


@lru_cache(maxsize=16)
def _load_cached(path: str, stamp: tuple[int, int] | None) -> HardwareConfig:
    """Cached per file and version (modification time, size): an edited file is read again."""
    return HardwareConfig.from_yaml(path)


def parse_overrides(items: list[str] | tuple[str, ...], source: str = "--set") -> dict[str, Any]:
    """``["timing.lds_latency=40", ...]`` -> ``{"timing.lds_latency": 40}`` (values as YAML;
    :func:`wgpsim.overrides.parse`).

    >>> parse_overrides(["timing.lds_latency=40", "passes.lane_grouping=triton"])
    {'timing.lds_latency': 40, 'passes.lane_grouping': 'triton'}
    """
    return dict(overrides.parse(items, source))


def apply_overrides(hw: HardwareConfig, items: list[str] | tuple[str, ...]) -> HardwareConfig:
    """``hw`` with ``--set KEY=VALUE`` items applied; errors name the ``--set`` item, not the file.

    >>> apply_overrides(load_hardware(), ["timing.lds_latency=40"]).timing.lds_latency
    40
    >>> apply_overrides(load_hardware(), ["timing.lds_latency=-1"])
    Traceback (most recent call last):
    ...
    wgpsim.errors.ConfigError: --set timing.lds_latency=-1: field 'timing.lds_latency' must be a positive integer (valid: 1..65536), got -1
    """
    if not items:
        return hw
    before = raw = hw.to_dict()
    for item in items:
        raw = overrides.apply(raw, [item], f"--set {_item(item)}")
    if not any(i.strip().startswith("passes.sources") for i in items):
        raw["passes"] = overridden(raw["passes"], before["passes"]["groupings"])
    marker = "\0"
    try:
        changed = HardwareConfig.from_dict(raw, source=marker)
    except ConfigError as err:
        problem = str(err).removeprefix(f"{marker}: ")
        named = [i for i in items if f"'{i.partition('=')[0].strip()}" in problem]
        raise ConfigError(f"--set {_item((named or items)[-1])}: {problem}") from None
    return replace(changed, source=hw.source)


def _item(item: str) -> str:
    """A ``--set`` item as messages quote it: whole if short, else its key and the value's size.

    >>> _item("timing.lds_latency=40"), _item("timing.lds_latency=" + "9" * 100)
    ('timing.lds_latency=40', 'timing.lds_latency=<100 characters>')
    """
    key, _, value = item.partition("=")
    return (
        item if len(item) <= SHOWN_CHARS + 20 else f"{key[:SHOWN_CHARS]}=<{len(value)} characters>"
    )


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
