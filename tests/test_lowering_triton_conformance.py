"""Conformance: our local_load decisions against Triton 3.9.0's own gfx1250 lowering.

Each case becomes an MLIR module (the encodings printed by ``wgpsim.layout.notation.to_text``)
with one ``ttg.local_load``; a subprocess runs Triton's passes (``allocate_shared_memory``,
``add_to_llvmir(pm, "gfx1250", True)``, ``add_builtin_func_to_llvmir``) and we count the LDS
loads in the LLVM dialect output: ``llvm.amdgcn.ds.load.tr16.b128`` / ``tr8.b64`` calls, and
``llvm.load`` from ``!llvm.ptr<3>`` by vector width. Triton may abort on input it rejects, hence
the subprocess.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from wgpsim.layout.dtypes import dtype_bits
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
from wgpsim.layout.notation import to_text
from wgpsim.layout.shared import PartitionedSharedLayout, SwizzledSharedLayout
from wgpsim.trace.lowering import PLAIN_LOADS, lower

pytest.importorskip("triton")
pytestmark = pytest.mark.triton

from test_trace_lowering import ORACLE  # noqa: E402

MLIR_TYPE = {"fp16": "f16", "bf16": "bf16", "i8": "i8", "fp8": "f8E4M3FN"}

DRIVER = r"""
import sys
from triton._C.libtriton import ir, amd
ctx = ir.context()
ir.load_dialects(ctx)
amd.load_dialects(ctx)
mod = ir.parse_mlir_module(sys.argv[1], ctx)
mod.context = ctx
pm = ir.pass_manager(ctx)
amd.passes.ttgpuir.add_allocate_shared_memory(pm, "gfx1250")
amd.passes.ttgpuir.add_to_llvmir(pm, "gfx1250", True)
amd.passes.ttgpuir.add_builtin_func_to_llvmir(pm, "gfx1250", True)
pm.run(mod, "conformance")
print(str(mod))
"""

_TR = {"tr16.b128": "ds_load_tr16_b128", "tr8.b64": "ds_load_tr8_b64"}
_LOAD = re.compile(r"llvm\.load %\S+ : !llvm\.ptr<3> -> (?:vector<(\d+)x(\w+)>|(\w+))")
_BITS = {"f16": 16, "bf16": 16, "i16": 16, "i8": 8, "f32": 32, "i32": 32, "i64": 64}


def _module(shared, dst, shape, dtype, num_warps) -> str:
    ty = "x".join(map(str, shape)) + "x" + MLIR_TYPE[dtype]
    mem = f"!ttg.memdesc<{ty}, #shared, #smem, mutable>"
    ten = f"tensor<{ty}, #dst>"
    ptrs = "tensor<" + "x".join(map(str, shape)) + f"x!tt.ptr<{MLIR_TYPE[dtype]}>, #dst>"
    return f"""#shared = {to_text(shared)}
#dst = {to_text(dst)}
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {num_warps} : i32, "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func @f(%arg0: {mem}, %arg1: !tt.ptr<{MLIR_TYPE[dtype]}>) {{
    %a = ttg.local_load %arg0 : {mem} -> {ten}
    %p = tt.splat %arg1 : !tt.ptr<{MLIR_TYPE[dtype]}> -> {ptrs}
    tt.store %p, %a : {ptrs}
    tt.return
  }}
}}
"""


def _triton_counts(text: str, tmp_path) -> dict[str, int]:
    src = tmp_path / "case.mlir"
    src.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(src)], capture_output=True, text=True, timeout=300
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        pytest.skip(f"Triton 3.9.0 could not lower this module: {last}")
    counts: dict[str, int] = {}
    for suffix, name in _TR.items():
        n = proc.stdout.count(f'"llvm.amdgcn.ds.load.{suffix}"')
        if n:
            counts[name] = n
    for m in _LOAD.finditer(proc.stdout):
        lanes, elem, scalar = m.groups()
        bits = int(lanes or 1) * _BITS[elem or scalar]
        name = PLAIN_LOADS[bits]
        counts[name] = counts.get(name, 0) + 1
    return counts


def _attention_case():
    mma = AMDWMMALayout.from_warps_per_cta([8, 1], instr_shape=(16, 16, 32))
    shared = SwizzledSharedLayout(1, 1, 1, (1, 0))
    return ("attention_v", shared, DotOperandLayout(1, mma, 8), (128, 256), "fp16")


CASES = [c[:5] for c in ORACLE] + [_attention_case()]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_counts_match_triton(case, tmp_path):
    _, shared, dst, shape, dtype = case
    bases = [0, 65536] if isinstance(shared, PartitionedSharedLayout) else 0
    ours = lower(shared, dst, shape, dtype, bases=bases)
    assert dtype_bits(dtype) == ours.elem_bits
    theirs = _triton_counts(_module(shared, dst, shape, dtype, ours.num_warps), tmp_path)
    # Triton's LLVM-dialect output: wgpsim's dialect level (counts are the assembly's)
    mine = ours.dialect_counts
    assert theirs == mine, json.dumps({"triton": theirs, "wgpsim": mine})
