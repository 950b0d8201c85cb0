"""Every calibration probe, as ``wgpsim calibrate probes`` writes it, compiles for gfx1250 with
Triton 3.9.0 (in a child process: a compiler abort takes only the child down), and between its
two ``s_get_shader_cycles_u64`` the assembly holds what the model times: the same LDS
instructions (the bank probes' ``ds_load_b32`` as LLVM pairs them), waits and barriers, in the
same order (the transposed loads' order is the compiler's, so those are compared as counts),
and the loads off one address register are as many bytes apart as the model's addresses."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

from wgpsim.calibration.probe_gluon import write_kit
from wgpsim.calibration.probe_traces import probe_trace, timed_rows
from wgpsim.calibration.probes import catalogue
from wgpsim.trace.instructions import instruction

CHILD = textwrap.dedent(
    """
    import importlib.util, json, re, sys
    from pathlib import Path
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    PTR = {"float16": "*fp16", "float32": "*fp32", "float8_e4m3fn": "*fp8e4nv"}
    out = {}
    for path in sorted(Path(sys.argv[1], "probes").glob("*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        sig = {"out_ptr": PTR[m.OUT_DTYPE], "cycles_ptr": "*i64"}
        compiled = triton.compile(
            GluonASTSource(m.kernel, sig, constexprs={}),
            target=GPUTarget("hip", "gfx1250", 32),
            options={"num_warps": m.NUM_WARPS},
        )
        lines = [line.strip() for line in compiled.asm["amdgcn"].splitlines()
                 if re.match(r"\\s+[a-z]", line) and not line.strip().startswith(".")]
        clocks = [i for i, line in enumerate(lines) if line.startswith("s_get_shader_cycles_u64")]
        out[m.NAME] = {"clocks": len(clocks), "timed": lines[clocks[0] + 1 : clocks[1]],
                       "lds": compiled.metadata.shared}
    print(json.dumps(out))
    """
)

TOKENS = {"s_wait_dscnt": "wait_ds", "s_barrier_wait": "barrier"}


def _asm_tokens(lines: list[str]) -> list[str]:
    """The timed ops the model knows: LDS loads, waits, barriers (``s_barrier_signal`` is
    half of the barrier whose ``s_barrier_wait`` is the token)."""
    ops = [line.split()[0] for line in lines]
    return [TOKENS.get(op, op) for op in ops if op.startswith("ds_") or op in TOKENS]


def _asm_offsets(lines: list[str]) -> list[tuple[str, int, int]]:
    """Per timed LDS instruction: its address register and its two immediate offsets in bytes
    (a single-address one: ``offset:N`` twice; a 2addr form: ``offset0``/``offset1`` x unit)."""
    out = []
    for line in lines:
        op = line.split()[0]
        if not op.startswith("ds_"):
            continue
        register = line.split(",")[1].split()[0]
        fields = dict(re.findall(r"(offset[01]?):(\d+)", line))
        unit = instruction(op).offset_unit_bytes
        if unit:
            first, second = (int(fields.get(k, 0)) * unit for k in ("offset0", "offset1"))
        else:
            first = second = int(fields.get("offset", 0))
        out.append((register, first, second))
    return out


def _model_offsets(p) -> list[tuple[int, int]]:
    """Per timed LDS row of warp 0: lane 0's byte address and that of its second access."""
    trace = probe_trace(p)
    rows = [r for r in trace.ops_of(0) if trace.lds_mask()[r]]
    return [(int(trace.addr[r, 0]), int(trace.addr[r, 0] + trace.arg[r])) for r in rows]


@pytest.mark.triton
@pytest.mark.slow
def test_every_probe_compiles_and_times_what_the_model_times(tmp_path):
    pytest.importorskip("triton")
    probes = catalogue()
    write_kit(tmp_path, probes)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    compiled = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(compiled) == sorted(p.name for p in probes)
    for p in probes:
        got = compiled[p.name]
        assert got["clocks"] == 2, p.name
        asm = _asm_tokens(got["timed"])
        model = [op for op in timed_rows(probe_trace(p)) if op != "clock"]
        if p.family == "transposed":
            assert Counter(asm) == Counter(model), p.name
            continue
        assert asm == model, (p.name, asm, model)
        # the immediates: instructions off one address register are as far apart as the
        # model's lane-0 addresses (and a 2addr form's second access as far from its first)
        offsets, addresses = _asm_offsets(got["timed"]), _model_offsets(p)
        if not offsets:  # the barrier runs load nothing
            assert p.family == "barrier"
            continue
        base_reg, base_off, _ = offsets[0]
        checked = 0
        for (reg, first, second), (addr, addr2) in zip(offsets, addresses, strict=True):
            if reg == base_reg:
                assert first - base_off == addr - addresses[0][0], p.name
                assert second - first == addr2 - addr, p.name
                checked += 1
        assert checked >= 1
    # the blog's microbenchmark: 32 ds_load_b128 per warp, then the wait and the barrier
    timed = _asm_tokens(compiled["bandwidth_plain_w4_b32"]["timed"])
    assert timed == ["ds_load_b128"] * 32 + ["wait_ds", "barrier"]
    # the partitioned layout's LDS: two 32 KiB buffers, the second at 64 KiB (the AMD blog)
    assert compiled["bandwidth_partitioned_w4_b32"]["lds"] == 96 * 1024
    assert compiled["bandwidth_plain_w4_b32"]["lds"] == 64 * 1024
