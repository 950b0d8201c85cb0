"""Regenerate ``cases.json``: compile a probe kernel around each case's local_load (or
local_store) for gfx1250 with Triton 3.9.0 on the CPU and count the ``ds_*`` of its assembly.

A probe allocates the shared buffer, loads it into the case's layout and stores every element to
a distinct global address (so LLVM keeps every load); a store probe loads from global, stores
into the buffer, and reads it back with the same layout (its ``ds_load*`` are that read back).
Packed fp4 loads (``tr4.json``) also record, per ``ds_load_tr4_b64`` of Triton's LLVM-dialect
output, the byte address each lane passes (its address arithmetic evaluated per thread).
Run: ``python tests/lowering_asm/regenerate.py`` (about 5 s a case).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
MLIR_TYPE = {8: "i8", 16: "f16", 32: "f32"}
SWIZZLED = "#ttg.swizzled_shared<{{vec = 1, perPhase = 1, maxPhase = 1, order = [{order}]}}>"
WMMA = (
    "#ttg.dot_op<{{opIdx = {op}, parent = #ttg.amd_wmma<{{version = 3, isTranspose = true, "
    "ctaLayout = {{warp = [[0, 1], [1, 0]]}}, instrShape = [16, 16, {k}]}}>, kWidth = {kw}}}>"
)

# name -> (shared, dst, shape, element bits, store?)
CASES = {
    "f32_blocked_rows": (SWIZZLED.format(order="0, 1"), "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>", (64, 64), 32, False),
    "f32_blocked_rows_store": (SWIZZLED.format(order="0, 1"), "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>", (64, 64), 32, True),
    "f32_stride64": (SWIZZLED.format(order="0, 1"), "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>", (128, 8), 32, False),
    "f32_stride64_store": (SWIZZLED.format(order="0, 1"), "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]}>", (128, 8), 32, True),
    "f32_column_sums": (SWIZZLED.format(order="1, 0"), "#ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [0, 1]}>", (64, 128), 32, False),
    "f32_dot_a": (SWIZZLED.format(order="1, 0"), WMMA.format(op=0, k=4, kw=2), (64, 32), 32, False),
    "f32_dot_a_store": (SWIZZLED.format(order="1, 0"), WMMA.format(op=0, k=4, kw=2), (64, 32), 32, True),
    "f32_dot_b": (SWIZZLED.format(order="1, 0"), WMMA.format(op=1, k=4, kw=2), (32, 64), 32, False),
    "i8_dot_a_kwidth8": ("#ttg.padded_shared<[128:+16] {order = [1, 0], shape = [128, 128]}>", WMMA.format(op=0, k=64, kw=8), (128, 128), 8, False),
    "f16_block_k16_a": (SWIZZLED.format(order="0, 1"), WMMA.format(op=0, k=32, kw=8), (128, 16), 16, False),
    "f16_block_k16_b": (SWIZZLED.format(order="1, 0"), WMMA.format(op=1, k=32, kw=8), (16, 128), 16, False),
    "f16_padded_8_bytes": ("#ttg.padded_shared<[64:+4] {order = [1, 0], shape = [64, 64]}>", "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>", (64, 64), 16, False),
    "f16_padded_8_bytes_tr": ("#ttg.padded_shared<[64:+4] {order = [0, 1], shape = [64, 64]}>", WMMA.format(op=0, k=32, kw=8), (64, 64), 16, False),
    "f16_store_across_rows": (SWIZZLED.format(order="0, 1"), "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>", (64, 64), 16, True),
    "i8_store_across_rows": (SWIZZLED.format(order="0, 1"), "#ttg.blocked<{sizePerThread = [1, 16], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>", (64, 128), 8, True),
}  # fmt: skip


def probe(shared: str, dst: str, shape: tuple[int, int], elem: str, store: bool) -> str:
    """The probe module (see the module docstring)."""
    m, n = shape
    t = lambda e: f"tensor<{m}x{n}x{e}, #dst>"  # noqa: E731
    mem = f"!ttg.memdesc<{m}x{n}x{elem}, #shared, #smem, mutable>"
    ptr = t(f"!tt.ptr<{elem}>")
    s0, s1 = (f"#ttg.slice<{{dim = {d}, parent = #dst}}>" for d in (1, 0))
    body = f"""
    %r1 = tt.make_range {{end = {n} : i32, start = 0 : i32}} : tensor<{n}xi32, {s1}>
    %e1 = tt.expand_dims %r1 {{axis = 0 : i32}} : tensor<{n}xi32, {s1}> -> tensor<1x{n}xi32, #dst>
    %b1 = tt.broadcast %e1 : tensor<1x{n}xi32, #dst> -> {t("i32")}
    %r0 = tt.make_range {{end = {m} : i32, start = 0 : i32}} : tensor<{m}xi32, {s0}>
    %e0 = tt.expand_dims %r0 {{axis = 1 : i32}} : tensor<{m}xi32, {s0}> -> tensor<{m}x1xi32, #dst>
    %s = arith.constant dense<{n}> : tensor<{m}x1xi32, #dst>
    %m0 = arith.muli %e0, %s : tensor<{m}x1xi32, #dst>
    %b0 = tt.broadcast %m0 : tensor<{m}x1xi32, #dst> -> {t("i32")}
    %o = arith.addi %b1, %b0 : {t("i32")}
    %p = tt.splat %out : !tt.ptr<{elem}> -> {ptr}
    %pp = tt.addptr %p, %o : {ptr}, {t("i32")}
    %buf = ttg.local_alloc : () -> {mem}
"""
    if store:
        body += f"""    %x = tt.load %pp : {ptr}
    ttg.local_store %x, %buf : {t(elem)} -> {mem}
    gpu.barrier
"""
    body += f"""    %y = ttg.local_load %buf : {mem} -> {t(elem)}
    %q = tt.splat %out2 : !tt.ptr<{elem}> -> {ptr}
    %qq = tt.addptr %q, %o : {ptr}, {t("i32")}
    tt.store %qq, %y : {ptr}
"""
    return f"""#shared = {shared}
#dst = {dst}
#smem = #ttg.shared_memory
module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx1250", "ttg.threads-per-warp" = 32 : i32}} {{
  tt.func public @probe(%out: !tt.ptr<{elem}>, %out2: !tt.ptr<{elem}>) {{{body}    tt.return
  }}
}}
"""


COMPILE = r"""
import collections, json, re, sys
import triton
from triton.backends.compiler import GPUTarget
asm = triton.compile(sys.argv[1], target=GPUTarget("hip", "gfx1250", 32)).asm["amdgcn"]
print(json.dumps(collections.Counter(re.findall(r"^\s*(ds_\w+)", asm, re.M))))
"""


def assembly_counts(text: str) -> dict[str, int]:
    """``ds_*`` mnemonics of the gfx1250 assembly of ``text`` (a subprocess: Triton may abort)."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "probe.ttgir"
        path.write_text(text)
        proc = subprocess.run(
            [sys.executable, "-c", COMPILE, str(path)], capture_output=True, text=True, timeout=600
        )
    if proc.returncode:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1])
    return dict(sorted(json.loads(proc.stdout.strip().splitlines()[-1]).items()))


# packed fp4 (amdg.local_load_packed_transposed): name -> (shared, dst, memdesc shape)
TR4_DST = (
    "#ttg.dot_op<{{opIdx = {op}, parent = #ttg.amd_wmma<{{version = 3, isTranspose = true, "
    "ctaLayout = {{warp = [[1, 0], [2, 0]]}}, instrShape = [16, 16, 128]}}>, kWidth = 16}}>"
)
TR4_CASES = {
    "fp4_a": (SWIZZLED.format(order="0, 1"), TR4_DST.format(op=0), (64, 128)),
    "fp4_b": (SWIZZLED.format(order="1, 0"), TR4_DST.format(op=1), (128, 64)),
}


def probe_packed(shared: str, dst: str, mem_shape: tuple[int, int]) -> str:
    """A probe of one packed-transposed load (the result is packed along K, the memdesc along
    M/N): ``probe`` with the load replaced."""
    opidx = 0 if "opIdx = 0" in dst else 1
    kdim = 1 if opidx == 0 else 0
    out = [0, 0]
    out[kdim], out[1 - kdim] = mem_shape[kdim] // 2, 2 * mem_shape[1 - kdim]
    text = probe(shared, dst, tuple(out), "i8", False)
    mem = f"!ttg.memdesc<{mem_shape[0]}x{mem_shape[1]}xi8, #shared, #smem, mutable>"
    old = f"!ttg.memdesc<{out[0]}x{out[1]}xi8, #shared, #smem, mutable>"
    text = text.replace(old, mem)
    return text.replace("ttg.local_load %buf", "amdg.local_load_packed_transposed %buf")


TO_LLVM = r"""
import sys
from triton._C.libtriton import ir, amd
ctx = ir.context(); ir.load_dialects(ctx); amd.load_dialects(ctx)
mod = ir.parse_mlir_module(sys.argv[1], ctx); mod.context = ctx
pm = ir.pass_manager(ctx)
amd.passes.ttgpuir.add_allocate_shared_memory(pm, "gfx1250")
amd.passes.ttgpuir.add_to_llvmir(pm, "gfx1250", True)
amd.passes.ttgpuir.add_builtin_func_to_llvmir(pm, "gfx1250", True)
pm.run(mod, "regenerate")
print(str(mod))
"""

_BINARY = {
    "llvm.and": lambda a, b: a & b, "llvm.or": lambda a, b: a | b,
    "llvm.xor": lambda a, b: a ^ b, "llvm.shl": lambda a, b: (a << b) & 0xFFFFFFFF,
    "llvm.lshr": lambda a, b: a >> b, "llvm.add": lambda a, b: (a + b) & 0xFFFFFFFF,
    "llvm.sub": lambda a, b: (a - b) & 0xFFFFFFFF, "llvm.mul": lambda a, b: (a * b) & 0xFFFFFFFF,
    "llvm.udiv": lambda a, b: a // b, "llvm.urem": lambda a, b: a % b,
}  # fmt: skip


def dialect_addresses(llvm_text: str, intrinsic: str, threads: int) -> list[list[list[int]]]:
    """Per call of ``intrinsic`` in Triton's LLVM-dialect output, the byte offset (from the
    shared-memory base) each thread passes, ``[instruction][warp][lane]``: the i32 address
    arithmetic evaluated for thread ids 0..threads-1 (constants, workitem and wave ids, the
    integer ops Triton's lowering uses)."""
    import numpy as np

    env: dict = {}
    tid = np.arange(threads, dtype=np.int64)
    out = []
    for line in llvm_text.splitlines():
        line = re.sub(r" loc\(.*\)$", "", line.strip())
        m = re.match(r"(%[\w.]+) = ([\w.]+)(?: disjoint| nuw| nsw| inbounds)* ?(.*)$", line)
        if not m:
            continue
        name, op, rest = m.groups()
        args = [a for a in re.findall(r"%[\w.]+", rest) if a in env]
        if op == "llvm.mlir.constant":
            c = re.match(r"\((-?\d+) : (?:i32|i64|index)\)", rest)
            if c:
                env[name] = np.int64(int(c.group(1)) & 0xFFFFFFFF)
        elif op == "rocdl.workitem.id.x":
            env[name] = tid
        elif op == "rocdl.wave.id":
            env[name] = tid // 32
        elif op in _BINARY and len(args) == 2 == len(re.findall(r"%[\w.]+", rest.split(":")[0])):
            env[name] = _BINARY[op](np.asarray(env[args[0]]), np.asarray(env[args[1]]))
        elif op == "llvm.getelementptr" and (idx := re.search(r"\[(%[\w.]+)\]", rest)):
            if idx.group(1) in env:
                env[name] = env[idx.group(1)]
        elif op == "llvm.call_intrinsic" and intrinsic in rest:
            ptr = re.findall(r"\((%[\w.]+)\)", rest)[0]
            out.append(np.broadcast_to(env[ptr], tid.shape).reshape(-1, 32).tolist())
    return out


def _llvm_dialect(text: str) -> str:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "probe.ttgir"
        path.write_text(text)
        proc = subprocess.run(
            [sys.executable, "-c", TO_LLVM, str(path)], capture_output=True, text=True, timeout=600
        )
    if proc.returncode:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1])
    return proc.stdout


def main() -> None:
    import triton

    out = {"triton": triton.__version__, "target": "gfx1250", "cases": {}}
    for name, (shared, dst, shape, bits, store) in CASES.items():
        counts = assembly_counts(probe(shared, dst, shape, MLIR_TYPE[bits], store))
        out["cases"][name] = {
            "shared": shared, "dst": dst, "shape": list(shape), "elem_bits": bits,
            "store": store, "assembly": counts,
        }  # fmt: skip
        print(name, counts)
    (HERE / "cases.json").write_text(json.dumps(out, indent=1) + "\n")
    tr4 = {"triton": triton.__version__, "target": "gfx1250", "cases": {}}
    for name, (shared, dst, mem_shape) in TR4_CASES.items():
        text = probe_packed(shared, dst, mem_shape)
        addresses = dialect_addresses(_llvm_dialect(text), "ds.load.tr4.b64", 128)
        counts = assembly_counts(text)
        tr4["cases"][name] = {
            "shared": shared, "dst": dst, "mem_shape": list(mem_shape), "assembly": counts,
            "dialect_addresses": addresses,
        }  # fmt: skip
        print(name, counts, len(addresses), "dialect instructions")
    (HERE / "tr4.json").write_text(json.dumps(tr4) + "\n")


if __name__ == "__main__":
    main()
