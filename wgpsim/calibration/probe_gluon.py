"""The calibration probes as Gluon kernels for gfx1250, and the kit directory a device owner runs.

Each probe (:mod:`wgpsim.calibration.probes`) becomes one Python file holding a ``@gluon.jit``
``NAME(out_ptr, cycles_ptr)`` (also bound to ``kernel``; rocprof reports it by the probe's name)
for one workgroup: it reads the clock with
``s_get_shader_cycles_u64`` (inline assembly, as the AMD blog's microbenchmark does) around the
loads it times and stores each warp's span, ``end - start``, at ``cycles_ptr[warp]``. What it
loads it stores to ``out_ptr`` after the closing clock, so no load is dead. Where the timed
region ends without a barrier, the closing clock's assembly begins with ``s_wait_dscnt 0x0``:
the span then holds every load's return, as the model's ``wait_ds 0`` before its clock does.
The layouts are printed from the same objects the model lowers
(:func:`wgpsim.layout.gluon.to_gluon_code`).

>>> from wgpsim.calibration.probes import probe
>>> src = probe_source(probe("round_trip_b64_x1"))
>>> "s_wait_dscnt 0x0" in src and "def round_trip_b64_x1(out_ptr, cycles_ptr):" in src
True
>>> compile(src, "round_trip_b64_x1.py", "exec") is not None    # valid Python
True

:func:`write_kit` writes ``DIR/probes/NAME.py`` per probe, ``DIR/run_probes.py`` (the runner,
:mod:`wgpsim.calibration.probe_runner`) and ``DIR/manifest.json``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from wgpsim.calibration.lanes.gluon import kernel_source
from wgpsim.calibration.lanes.pairs import kernel_name
from wgpsim.calibration.probes import (
    STAGGER_ITERS,
    TARGET,
    Probe,
    ProbeLayouts,
    layouts,
    write_manifest,
)
from wgpsim.layout.gluon import to_gluon_code

__all__ = ["GLUON_DTYPES", "TORCH_DTYPES", "probe_source", "write_kit"]

GLUON_DTYPES = {"fp16": "ttgl.float16", "fp32": "ttgl.float32", "fp8e4m3": "ttgl.float8e4nv"}
"""wgpsim dtype name -> the Gluon dtype the kernel allocates."""

TORCH_DTYPES = {"fp16": "float16", "fp32": "float32", "fp8e4m3": "float8_e4m3fn"}
"""wgpsim dtype name -> the torch dtype the runner allocates ``out`` with."""

_HEADER = '''"""wgpsim calibration probe {name} (family {family}, {warps} warps).

Written by `wgpsim calibrate probes`; run_probes.py launches `kernel` on one workgroup and reads
one clock span per warp from `cycles`. Parameters: {params}.
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl

NAME = "{name}"
FAMILY = "{family}"
NUM_WARPS = {warps}
OUT_ELEMS = {out_elems}
OUT_DTYPE = "{out_dtype}"


@gluon.jit
def _clock():
    return ttgl.inline_asm("s_get_shader_cycles_u64 $0", "=s", [], ttgl.int64)


@gluon.jit
def _wait_clock():
    # every LDS load of this warp has returned, then the clock
    return ttgl.inline_asm("s_wait_dscnt 0x0\\n\\ts_get_shader_cycles_u64 $0", "=s", [], ttgl.int64)


@gluon.jit
def _wait():
    ttgl.inline_asm("s_wait_dscnt 0x0", "", [], ())


@gluon.jit
def _record(cycles_ptr, span, NUM_WARPS: ttgl.constexpr):
    # lane 0 of warp w stores its own span (a per-warp scalar register) at cycles_ptr[w]
    lay: ttgl.constexpr = ttgl.BlockedLayout([1, 1], [1, 32], [NUM_WARPS, 1], [1, 0])
    warp = ttgl.arange(0, NUM_WARPS, layout=ttgl.SliceLayout(1, lay))[:, None]
    lane = ttgl.arange(0, 32, layout=ttgl.SliceLayout(0, lay))[None, :]
    value = ttgl.full([NUM_WARPS, 32], 0, ttgl.int64, lay) + span
    ttgl.store(cycles_ptr + warp + lane * 0, value, mask=lane == 0)


@gluon.jit
def _offsets(M: ttgl.constexpr, N: ttgl.constexpr, layout: ttgl.constexpr):
    rows = ttgl.arange(0, M, layout=ttgl.SliceLayout(1, layout))
    cols = ttgl.arange(0, N, layout=ttgl.SliceLayout(0, layout))
    return rows[:, None] * N + cols[None, :]


@gluon.jit
def _stagger(ITERS: ttgl.constexpr, NUM_WARPS: ttgl.constexpr):
    # the odd warps (SIMDs 1 and 3: pair B) spin ITERS times; the even ones (pair A) do not
    lay: ttgl.constexpr = ttgl.BlockedLayout([1, 1], [1, 32], [NUM_WARPS, 1], [1, 0])
    warp = ttgl.arange(0, NUM_WARPS, layout=ttgl.SliceLayout(1, lay))[:, None]
    count = (ttgl.zeros([NUM_WARPS, 32], ttgl.int32, lay) + warp) % 2 * ITERS
    ttgl.inline_asm(
        "v_readfirstlane_b32 $0, $1\\n\\ts_cmp_eq_u32 $0, 0\\n\\ts_cbranch_scc1 2f\\n"
        "1:\\n\\ts_sub_u32 $0, $0, 1\\n\\ts_cmp_lg_u32 $0, 0\\n\\ts_cbranch_scc1 1b\\n2:",
        "=&s,v,~{{scc}}",
        [count],
        ttgl.int32,
    )

'''


def _kernel(name: str, body: list[str]) -> str:
    """The probe's kernel, named after the probe (the name profilers report), as ``kernel``."""
    lines = ["", "@gluon.jit", f"def {name}(out_ptr, cycles_ptr):"]
    code = "\n".join(lines + [f"    {line}" if line else "" for line in body])
    return code + f"\n\n\nkernel = {name}\n"


def _layout_lines(lay: ProbeLayouts) -> list[str]:
    m, n = lay.shape
    return [
        f"layout: ttgl.constexpr = {to_gluon_code(lay.distributed, lay.shape)}",
        f"shared: ttgl.constexpr = {to_gluon_code(lay.shared)}",
        f"smem = ttgl.allocate_shared_memory({GLUON_DTYPES[lay.dtype]}, [{m}, {n}], shared)",
    ]


def _loaded_body(p: Probe, lay: ProbeLayouts) -> list[str]:
    """barrier; [stagger]; clock; local_load; barrier + clock, or wait + clock."""
    m, n = lay.shape
    barrier_first = p.family not in ("lane_groups", "issue")
    closing_barrier = p.family in ("bandwidth", "transposed")
    body = _layout_lines(lay)
    if barrier_first:
        body.append("ttgl.barrier()")
    if p.family == "partition_pairs" and p.param("timing") == "staggered":
        body.append(f"_stagger({STAGGER_ITERS}, {p.warps})")
    body += ["start = _clock()", "x = smem.load(layout)"]
    body += ["ttgl.barrier()", "stop = _clock()"] if closing_barrier else ["stop = _wait_clock()"]
    body += [f"ttgl.store(out_ptr + _offsets({m}, {n}, layout), x)"]
    return body


def _round_trip_body(p: Probe) -> list[str]:
    loads = p.param("loads")
    vec = {"ds_load_b64": 4, "ds_load_b128": 8}[p.param("op")]  # fp16 per lane
    cols = 32 * vec
    body = [
        f"layout: ttgl.constexpr = ttgl.BlockedLayout([1, {vec}], [1, 32], [1, 1], [1, 0])",
        "shared: ttgl.constexpr = ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0])",
        f"smem = ttgl.allocate_shared_memory(ttgl.float16, [{loads}, {cols}], shared)",
        "start = _clock()",
    ]
    for i in range(loads):
        body += [f"x{i} = smem.slice({i}, 1, dim=0).load(layout)", "_wait()"]
    body.append("stop = _clock()")
    body += [
        f"ttgl.store(out_ptr + {i * cols} + _offsets(1, {cols}, layout), x{i})"
        for i in range(loads)
    ]
    return body


def _barrier_body(p: Probe) -> list[str]:
    body = ["ttgl.barrier()", "start = _clock()"]
    body += ["ttgl.barrier()"] * p.param("barriers")
    return body + ["stop = _clock()"]


def _banks_body(p: Probe) -> list[str]:
    rows, cols = 32 * p.param("loads"), p.param("stride") // 4
    return [
        "layout: ttgl.constexpr = ttgl.BlockedLayout([1, 1], [32, 1], [1, 1], [1, 0])",
        "shared: ttgl.constexpr = ttgl.SwizzledSharedLayout(1, 1, 1, [1, 0])",
        f"smem = ttgl.allocate_shared_memory(ttgl.float32, [{rows}, {cols}], shared)",
        "column = smem.slice(0, 1, dim=1)  # lane l of load i: row 32 i + l, stride bytes apart",
        "start = _clock()",
        "x = column.load(layout)",
        "stop = _wait_clock()",
        f"ttgl.store(out_ptr + _offsets({rows}, 1, layout), x)",
    ]


def _out(p: Probe) -> tuple[int, str]:
    """Elements and torch dtype of the probe's ``out`` buffer."""
    lay = layouts(p)
    if lay is not None:
        return lay.shape[0] * lay.shape[1], TORCH_DTYPES[lay.dtype]
    if p.family == "round_trip":  # fp16: 8 per lane for b128, 4 for b64
        per_lane = 8 if p.param("op") == "ds_load_b128" else 4
        return p.param("loads") * 32 * per_lane, "float16"
    if p.family == "banks":
        return 32 * p.param("loads"), "float32"
    return 1, "float16"  # barrier: nothing loaded


def probe_source(p: Probe) -> str:
    """The Python file of probe ``p``: header, helpers, ``kernel`` (see the module docstring)."""
    lay = layouts(p)
    if lay is not None:
        body = _loaded_body(p, lay)
    else:
        body = {"round_trip": _round_trip_body, "barrier": _barrier_body, "banks": _banks_body}[
            p.family
        ](p)
    body.append(f"_record(cycles_ptr, stop - start, {p.warps})")
    out_elems, out_dtype = _out(p)
    params = ", ".join(f"{k}={v}" for k, v in p.params) or "none"
    header = _HEADER.format(
        name=p.name,
        family=p.family,
        warps=p.warps,
        params=params,
        out_elems=out_elems,
        out_dtype=out_dtype,
    )
    return header + _kernel(p.name, body)


def write_kit(directory: str | Path, probes: Iterable[Probe], target: str = TARGET) -> Path:
    """Write the kit into ``directory``: ``probes/NAME.py``, ``run_probes.py``, ``manifest.json``.
    For gfx942 / gfx950 the lane-pair probes share one kernel per instruction,
    ``probes/lds_OP.py`` (:mod:`wgpsim.calibration.lanes.gluon`)."""
    from wgpsim.calibration import probe_runner

    probes = tuple(probes)
    out = Path(directory)
    (out / "probes").mkdir(parents=True, exist_ok=True)
    if target == TARGET:
        for p in probes:
            (out / "probes" / f"{p.name}.py").write_text(probe_source(p))
    else:
        for op in dict.fromkeys(p.param("op") for p in probes):
            (out / "probes" / f"{kernel_name(op)}.py").write_text(kernel_source(op, target))
    runner = Path(probe_runner.__file__).read_text()
    (out / "run_probes.py").write_text(runner)
    write_manifest(probes, out / "manifest.json", target)
    return out
