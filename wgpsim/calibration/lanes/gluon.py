"""The lane-pair probes (:mod:`wgpsim.calibration.lanes.pairs`) as Gluon kernels for gfx942 and
gfx950: one kernel per instruction, launched once per probe with the probe's lanes and offset.

The kernel ``lds_OP(out_ptr, cycles_ptr, lane_a, lane_b, offset_b)`` allocates 16 KiB of LDS
and runs one inline-assembly block: it saves EXEC, keeps only lanes ``lane_a`` and ``lane_b``
(``v_cmp_ne_u32`` + ``s_and_b64 exec``), reads the clock (``s_memtime``), issues
``REPEATS`` x (``OP``, ``s_waitcnt lgkmcnt(0)``): a latency chain, so a conflict lengthens the
span as it does the counter (lane a at the buffer's byte 0, lane b at ``offset_b``; the data
registers are fixed, ``v[248:251]``, and clobbered), reads the clock again and restores EXEC. Lane 0 stores the span at ``cycles_ptr[0]``. The masking is in
the assembly because a Gluon ``local_load`` has no lane mask: the instruction is the one named,
which the compile test checks (``tests/test_calibration_lane_pairs.py``).

>>> src = kernel_source("ds_read_b128", "gfx950")
>>> "ds_read_b128 v[248:251], v255" in src and "def lds_ds_read_b128(" in src
True
>>> kernel_source("ds_write_b64", "gfx942").count("ds_write_b64 v255, v[248:249]")
16
"""

from __future__ import annotations

from wgpsim.calibration.lanes.pairs import OPS, REPEATS, TARGETS, WAVE, kernel_name
from wgpsim.errors import ModuleError

__all__ = ["LDS_BYTES", "kernel_source", "masked_asm"]

LDS_BYTES = 16384
"""The kernel's LDS buffer: holds every probe's offsets (at most 2048 + 16 B) on any CDNA part."""

_HEADER = '''"""wgpsim lane-pair probe kernel {kernel} ({op} on {target}, wave64, one warp).

Written by `wgpsim calibrate probes --target {target}`; run_probes.py launches `kernel` once per
probe of manifest.json that names it, with the probe's lane_a, lane_b and offset.
"""

from triton.experimental import gluon
from triton.experimental.gluon import language as ttgl

NAME = "{kernel}"
TARGET = "{target}"
NUM_WARPS = 1
OUT_ELEMS = 1
OUT_DTYPE = "int32"
ARGS = ("lane_a", "lane_b", "offset")
'''


def _data(op: str) -> str:
    """The fixed data registers of ``op``: one VGPR per 4 bytes from v248."""
    dwords = OPS[op] // 4
    return "v248" if dwords == 1 else f"v[248:{247 + dwords}]"


def masked_asm(op: str) -> str:
    """The inline assembly of ``op``'s kernel ($0 span, $1 buffer, $2 active, $3 offset).

    >>> masked_asm("ds_read_b32").splitlines()[7]
    'ds_read_b32 v248, v255'
    """
    data = _data(op)
    access = f"{op} {data}, v255" if op.startswith("ds_read") else f"{op} v255, {data}"
    return "\n".join(
        [
            "s_mov_b64 s[40:41], exec",
            "v_add_u32_e32 v255, $1, $3",
            "v_cmp_ne_u32_e32 vcc, 0, $2",
            "s_and_b64 exec, exec, vcc",
            "s_nop 4",
            "s_waitcnt lgkmcnt(0)",
            "s_memtime s[42:43]",
            *[access, "s_waitcnt lgkmcnt(0)"] * REPEATS,
            "s_memtime s[44:45]",
            "s_waitcnt lgkmcnt(0)",
            "s_mov_b64 exec, s[40:41]",
            "s_sub_u32 $0, s44, s42",
        ]
    )


def kernel_source(op: str, target: str) -> str:
    """The Python file of ``op``'s kernel for ``target`` (see the module docstring)."""
    if op not in OPS or target not in TARGETS:
        raise ModuleError(f"no lane-pair kernel for {op!r} on {target!r}")
    name = kernel_name(op)
    asm = masked_asm(op).replace("\n", "\\n")
    clobbers = "~{vcc},~{scc},~{s[40:45]},~{v[248:251]},~{v255}"
    body = f'''

@gluon.jit
def {name}(out_ptr, cycles_ptr, lane_a, lane_b, offset_b):
    lay: ttgl.constexpr = ttgl.BlockedLayout([1], [{WAVE}], [1], [0])
    shared: ttgl.constexpr = ttgl.SwizzledSharedLayout(1, 1, 1, [0])
    smem = ttgl.allocate_shared_memory(ttgl.int32, [{LDS_BYTES // 4}], shared)
    lane = ttgl.arange(0, {WAVE}, layout=lay)
    active = ((lane == lane_a) | (lane == lane_b)).to(ttgl.int32)
    offset = ttgl.where(lane == lane_b, offset_b, 0)
    span = ttgl.inline_asm(
        "{asm}",
        "=s,s,v,v,{clobbers}",
        [smem, active, offset],
        ttgl.int32,
    )
    ttgl.store(cycles_ptr + lane * 0, (span + lane * 0).to(ttgl.int64), mask=lane == 0)


kernel = {name}
'''
    return _HEADER.format(kernel=name, op=op, target=target) + body
