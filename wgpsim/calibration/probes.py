"""The calibration kit's probes: small LDS kernels whose per-warp clock spans pin one or two
hardware constants each, as plain data (a family, a warp count, parameters) and the layouts
both sides of the kit read.

A probe is run twice over: on a device, as the Gluon kernel :mod:`wgpsim.calibration.probe_gluon`
writes (it records ``s_get_shader_cycles_u64`` spans per warp, as the AMD blog's
microbenchmark does), and in the model, as the trace :mod:`wgpsim.calibration.probe_traces` builds.
Both read the layouts from :func:`layouts` here, so the addresses the model times are the ones
the kernel reads. The families and what each separates (docs/DESIGN.md, "Calibration"):

==================  ===================================================  =====================
family              the timed region (per warp)                          pins
==================  ===================================================  =====================
``bandwidth``       barrier, clock, ``burst`` ds_load_b128, barrier,     fixed cost, port rate
                    clock (the AMD blog's sweep: plain / partitioned,
                    bursts 1..32, 4 and 8 warps)
``round_trip``      clock, ``loads`` x (one load, s_wait_dscnt 0),       lds_latency
                    clock (one warp: latency without a barrier)
``barrier``         barrier, clock, ``barriers`` x barrier, clock        barrier, clock cost
``banks``           clock, 4 ds_load_b32 at lane stride ``stride``,      banks.count
                    wait, clock (conflicts grow with the stride)
``lane_groups``     clock, 8 ds_load_b128 whose 16-lane halves conflict  passes.lane_grouping
                    under one lane grouping only, wait, clock
``partition_pairs`` barrier, [pair B waits], clock, 8 ds_load_b128 on    the arbiter
                    one or two partitions, wait, clock
``transposed``      barrier, clock, a dot-operand ds_load_tr*, barrier,  transposed-load passes
                    clock
``issue``           clock, ``loads`` ds_load_b32 back to back (LLVM      issue_interval
                    pairs them: one-pass ds_load_2addr_b32), wait, clock
                    (one warp: its SIMD's issue rate, not the port)
==================  ===================================================  =====================

>>> probes = catalogue()
>>> len(probes), probes[0].name, probes[0].family, probes[0].warps
(56, 'bandwidth_plain_w4_b1', 'bandwidth', 4)
>>> sorted({p.family for p in probes}) == sorted(FAMILIES)
True
>>> probe("banks_s256").param("stride")
256
>>> from_dict(probe("banks_s256").to_dict()) == probe("banks_s256")
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wgpsim.calibration.lanes import pairs as lane_pairs
from wgpsim.calibration.probe import Probe
from wgpsim.errors import ModuleError, did_you_mean, shown
from wgpsim.inputs import json_value, read_text
from wgpsim.layout.distributed import BlockedLayout
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
from wgpsim.layout.shared import PartitionedSharedLayout, SharedLinearLayout, SwizzledSharedLayout
from wgpsim.packaged import hardware_fact

__all__ = [
    "FAMILIES",
    "MANIFEST_VERSION",
    "Probe",
    "ProbeLayouts",
    "catalogue",
    "from_dict",
    "layouts",
    "probe",
    "read_kit",
    "read_manifest",
    "target_catalogue",
    "write_manifest",
]

FAMILIES = (
    "bandwidth",
    "round_trip",
    "barrier",
    "banks",
    "lane_groups",
    "partition_pairs",
    "transposed",
    "issue",
)
"""The probe families, in the order the kit runs and reports them."""

TARGET = "gfx1250"
"""The target of this module's probes (MI450); :mod:`wgpsim.calibration.lanes.pairs` has gfx942's
and gfx950's."""

MANIFEST_VERSION = 1
"""Version of ``manifest.json`` (bumped when a probe's meaning changes)."""

BURSTS = (1, 2, 4, 8, 16, 32)
"""The bandwidth sweep's loads per warp (the AMD blog's table is burst 32)."""

STRIDES = (4, 8, 16, 32, 64, 128, 256, 512)
"""Lane strides (bytes) of the bank-count probes: 64 banks of 4 B conflict from 16 B on."""

PARTITION_BYTES: int = hardware_fact("partitions", "size")
"""Where the second buffer of a two-partition layout starts: the allocator pushes it to the
partition boundary (the AMD blog: "forced to push the second to the 64 KiB boundary"); the
partition size is the hardware file's."""

STAGGER_ITERS = 200
"""Iterations of the delay loop pair B's warps run in a staggered partition-pair probe: at
least 3 scalar instructions each, so at least 600 cycles, more than pair A's whole run (about
130 cycles), so the two pairs' loads never overlap; the spans do not depend on the exact delay."""

STAGGER_CYCLES = 3 * STAGGER_ITERS
"""The delay the model gives pair B's warps in a staggered probe (a lower bound of the loop)."""


def _probe(family: str, name: str, warps: int, **params: Any) -> Probe:
    return Probe(name, family, warps, tuple(sorted(params.items())))


def catalogue() -> tuple[Probe, ...]:
    """Every probe of the kit, family by family (names are unique)."""
    out: list[Probe] = []
    for layout in ("plain", "partitioned"):
        for warps in (4, 8):
            for burst in BURSTS:
                name = f"bandwidth_{layout}_w{warps}_b{burst}"
                out.append(_probe("bandwidth", name, warps, layout=layout, burst=burst))
    for op in ("ds_load_b64", "ds_load_b128"):
        for loads in (1, 2, 4):
            name = f"round_trip_{op.removeprefix('ds_load_')}_x{loads}"
            out.append(_probe("round_trip", name, 1, op=op, loads=loads))
    for warps in (4, 8):
        for barriers in (0, 1, 2, 4):
            out.append(_probe("barrier", f"barrier_w{warps}_x{barriers}", warps, barriers=barriers))
    for stride in STRIDES:
        out.append(_probe("banks", f"banks_s{stride}", 1, stride=stride, loads=4))
    for pattern in ("lanes_0_15", "lane_bit_2"):
        out.append(_probe("lane_groups", f"lane_groups_{pattern}", 1, pattern=pattern, loads=8))
    for placement in ("one", "two"):
        for timing in ("lockstep", "staggered"):
            name = f"partition_pairs_{placement}_{timing}"
            out.append(
                _probe("partition_pairs", name, 4, placement=placement, timing=timing, burst=8)
            )
    for op in ("ds_load_tr16_b128", "ds_load_tr8_b64"):
        out.append(_probe("transposed", f"transposed_{op.removeprefix('ds_load_')}", 4, op=op))
    for loads in (16, 64):
        out.append(_probe("issue", f"issue_b32_x{loads}", 1, loads=loads))
    return tuple(out)


def probe(name: str) -> Probe:
    """The catalogue's probe called ``name`` (a ModuleError naming the closest otherwise)."""
    by_name = {p.name: p for p in catalogue()}
    if name not in by_name:
        raise ModuleError(f"unknown probe {name!r}{did_you_mean(name, by_name)}")
    return by_name[name]


# -- the layouts both sides read ------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeLayouts:
    """What a layout-built probe loads: a ``shape`` tensor of ``dtype`` read out of ``shared``
    into ``distributed``, the buffer(s) at byte ``bases``."""

    shape: tuple[int, int]
    dtype: str
    distributed: Any
    shared: Any
    bases: tuple[int, ...]


PLAIN = SwizzledSharedLayout(1, 1, 1, [1, 0])
"""One contiguous row-major buffer (the AMD blog's plain layout)."""


def _rows(warps: int, burst: int, partitioned: bool) -> ProbeLayouts:
    """The AMD blog's microbenchmark tensor: [warps, burst x 256] fp16, row w for warp w, 8
    fp16 (one ds_load_b128) per lane; partitioned: row w on partition w % 2."""
    shared = PartitionedSharedLayout(2, warps // 2, 0, PLAIN) if partitioned else PLAIN
    return ProbeLayouts(
        (warps, burst * 256),
        "fp16",
        BlockedLayout([1, 8], [1, 32], [warps, 1], [1, 0]),
        shared,
        (0, PARTITION_BYTES) if partitioned else (0,),
    )


#: lane_bit_2: rows placed so that lanes differing only in lane bits {0, 1, 3, 4} (Triton's
#: b128 tile) read 16 disjoint 16-byte slots of 256 B, and lane bit 2 moves to the next 256 B:
#: offset bits 3, 4, 5, 6, 7 (16-byte slots 1, 2, 4, 8, 16) hold rows 1, 2, 8, 16, 4.
_LANE_BIT_2 = SharedLinearLayout(
    [[0, 1], [0, 2], [0, 4], [1, 0], [2, 0], [8, 0], [16, 0], [4, 0], [32, 0], [64, 0], [128, 0]]
)

_WMMA4 = AMDWMMALayout(3, True, [[1, 0], [2, 0]], (), (16, 16, 32))
_WMMA4_K64 = AMDWMMALayout(3, True, [[1, 0], [2, 0]], (), (16, 16, 64))


def layouts(p: Probe) -> ProbeLayouts | None:
    """The layouts of a probe that loads one tensor with ``local_load`` (bandwidth,
    lane_groups, partition_pairs, transposed, issue); None for the others, whose kernels read
    slices of a plain buffer (their addresses are written out in the trace builder)."""
    if p.family == "bandwidth":
        return _rows(p.warps, p.param("burst"), p.param("layout") == "partitioned")
    if p.family == "partition_pairs":
        return _rows(p.warps, p.param("burst"), p.param("placement") == "two")
    if p.family == "lane_groups":
        rows = 32 * p.param("loads")
        shared = PLAIN if p.param("pattern") == "lanes_0_15" else _LANE_BIT_2
        return ProbeLayouts(
            (rows, 8), "fp16", BlockedLayout([1, 8], [32, 1], [1, 1], [1, 0]), shared, (0,)
        )
    if p.family == "transposed":
        if p.param("op") == "ds_load_tr16_b128":  # the corpus's store_load_swizzled_dot_b_fp16
            dot = DotOperandLayout(1, _WMMA4, 8)
            return ProbeLayouts((64, 128), "fp16", dot, SwizzledSharedLayout(8, 1, 8, [1, 0]), (0,))
        dot = DotOperandLayout(1, _WMMA4_K64, 8)  # the corpus's store_load_dot_b_fp8
        shared = SwizzledSharedLayout(16, 1, 16, [1, 0])
        return ProbeLayouts((128, 128), "fp8e4m3", dot, shared, (0,))
    if p.family == "issue":  # lane l of load i reads fp32 32 i + l: contiguous 128-byte rows
        row = BlockedLayout([1, 1], [1, 32], [1, 1], [1, 0])
        return ProbeLayouts((1, 32 * p.param("loads")), "fp32", row, PLAIN, (0,))
    return None


# -- manifest.json --------------------------------------------------------------------------------


def write_manifest(probes: Iterable[Probe], path: str | Path, target: str = TARGET) -> Path:
    """Write ``manifest.json``: the version, the target and every probe's record."""
    path = Path(path)
    records = [p.to_dict() for p in probes]
    data = {"version": MANIFEST_VERSION, "target": target, "probes": records}
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def target_catalogue(target: str) -> tuple[tuple[str, ...], dict[str, Probe]]:
    """The families and the probes by name of ``target``'s kit: this module's for gfx1250,
    :mod:`wgpsim.calibration.lanes.pairs`' for gfx942 and gfx950."""
    if target == TARGET:
        return FAMILIES, {p.name: p for p in catalogue()}
    if target not in lane_pairs.TARGETS:
        valid = ", ".join((TARGET, *lane_pairs.TARGETS))
        raise ModuleError(f"no calibration probes for target {shown(target)} (valid: {valid})")
    return lane_pairs.FAMILIES, {p.name: p for p in lane_pairs.catalogue(target)}


def from_dict(record: Any, where: str = "probe", families: tuple[str, ...] = FAMILIES) -> Probe:
    """A manifest record -> Probe; a ModuleError names the bad field."""
    if not isinstance(record, Mapping):
        raise ModuleError(f"{where}: expected a mapping with name, family, warps, params")
    missing = [k for k in ("name", "family", "warps", "params") if k not in record]
    if missing:
        raise ModuleError(f"{where}: missing field {missing[0]!r}")
    family, warps, params = record["family"], record["warps"], record["params"]
    if family not in families:
        raise ModuleError(
            f"{where}: unknown family {shown(family)}{did_you_mean(str(family), families)} "
            f"(valid: {', '.join(families)})"
        )
    if not isinstance(warps, int) or isinstance(warps, bool) or not 1 <= warps <= 32:
        raise ModuleError(f"{where}: field 'warps' must be an integer in 1..32, got {shown(warps)}")
    if not isinstance(params, Mapping):
        raise ModuleError(f"{where}: field 'params' must be a mapping")
    return Probe(str(record["name"]), family, warps, tuple(sorted(params.items())))


def read_manifest(path: str | Path) -> tuple[Probe, ...]:
    """The probes of a ``manifest.json`` (:func:`read_kit` without the target)."""
    return read_kit(path)[1]


def read_kit(path: str | Path) -> tuple[str, tuple[Probe, ...]]:
    """The target and probes of a ``manifest.json`` (no ``target``: gfx1250, the first kits);
    bad input is one ModuleError naming file and field.

    Probes are matched to the catalogue by name: a manifest written by another version of
    the kit, whose probe means something else now, is refused.
    """
    path = Path(path)
    try:
        text = read_text(path, "manifest", ModuleError)  # at most 8 MiB, UTF-8
    except FileNotFoundError:
        raise ModuleError(
            f"{path}: no such manifest (write one with wgpsim calibrate probes)"
        ) from None
    data = json_value(text, str(path), ModuleError)
    if not isinstance(data, Mapping) or not isinstance(data.get("probes"), list):
        raise ModuleError(f"{path}: expected {{'version': 1, 'probes': [...]}}")
    version = data.get("version")
    if type(version) is not int or version != MANIFEST_VERSION:  # true == 1 in Python
        raise ModuleError(
            f"{path}: manifest version {shown(version)}, this wgpsim reads {MANIFEST_VERSION}"
        )
    target = data.get("target", TARGET)
    families, known = target_catalogue(str(target) if isinstance(target, str) else repr(target))
    probes = []
    for i, record in enumerate(data["probes"]):
        p = from_dict(record, f"{path}: probes[{i}]", families)
        if p.name not in known:
            raise ModuleError(
                f"{path}: probes[{i}]: unknown probe {shown(p.name)}{did_you_mean(p.name, known)}"
            )
        if known[p.name] != p:
            raise ModuleError(
                f"{path}: probes[{i}] {shown(p.name)}: its parameters differ from this wgpsim's "
                f"probe of that name (regenerate with wgpsim calibrate probes)"
            )
        probes.append(p)
    if len({p.name for p in probes}) != len(probes):
        raise ModuleError(f"{path}: a probe name repeats")
    return str(target), tuple(probes)
