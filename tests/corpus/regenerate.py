"""Regenerate the corpus: real Triton 3.9.0 compiles for gfx1250, kept as test fixtures.

How to run (needs the triton extra, ``pip install -e .[triton]``; CPU only, nothing runs on a
GPU), from the repository root:

    python tests/corpus/regenerate.py                  # every case (about 10 minutes on 1 core)
    python tests/corpus/regenerate.py gemm_tdm_partitioned_fp16 attention_fwd_d256
    python tests/corpus/regenerate.py --list           # the case names
    python tests/corpus/regenerate.py --fresh          # also compile every probe again
    python tests/corpus/regenerate.py --probes-only --fresh   # kernels kept, probes again

Pointer and integer arguments are specialized as divisible by 16, as the JIT does for a launch
with aligned pointers and sizes that are multiples of 16. Every compile runs in its own subprocess (Triton aborts the process on some inputs), with a
fresh ``TRITON_CACHE_DIR``. The output is deterministic: absolute paths are rewritten relative to the
repository, files are written with sorted keys, and nothing records a time or a host.

For each case ``NAME`` (``kernels/*.py``) it writes ``fixtures/NAME/``:

- ``kernel.ttgir``: ``compiled.asm["ttgir"]``, the module as Triton's cache holds it
  (before allocation);
- ``kernel.alloc.mlir``: the module right after Triton's ``allocate-shared-memory`` pass, as
  ``MLIR_ENABLE_DUMP`` would show it: the TTGIR re-parsed and run through the first passes of
  the AMD backend's ``make_llir`` (``update_async_wait_count``, ``warp_pipeline_conversion``,
  ``scf_to_cf``, ``inliner``, ``index_to_llvmir``, ``allocate_shared_memory``), so
  ``allocation.offset`` and ``ttg.shared`` are Triton's own;
- ``kernel.amdgcn``: ``compiled.asm["amdgcn"]``, the gfx1250 assembly, without its
  ``.debug_*`` sections (the ``.loc`` lines that name the source line stay);
- ``expected.json``: ``ttg_shared``, the buffers (op, SSA name, ``allocation.offset`` list,
  location), the module's LDS ops in module order, the whole kernel's instruction counts and
  those of each loop body of the assembly.

Per-op counts come from probes: for each distinct (op, memdesc type, tensor type) of the
corpus, a one-op TTGIR module (``probes/ID.ttgir``: allocate the parent buffer, take the same
views, do exactly that load or store, move the data to or from global memory through pointers
built with ``tt.make_range``, which touches no LDS) is compiled for gfx1250 the same way. Its
``ds_*`` counts, minus those of the same module with the LDS op removed (the harness, normally
nothing), are the op's instructions per warp as the assembly has them. Each probe also records
what Triton's LLVM-dialect lowering asks for (``llvm.amdgcn.ds.*`` calls and ``llvm.load`` /
``llvm.store`` on ``!llvm.ptr<3>`` by width) before LLVM's own passes pair or remove accesses.
``probes/index.json`` holds every probe's result; ``index.json`` lists the cases.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIXTURES = HERE / "fixtures"
PROBES = HERE / "probes"
INDEX = HERE / "index.json"
sys.path.insert(0, str(HERE))

import ttgir_text as tt  # noqa: E402

TARGET = ("hip", "gfx1250", 32)
#: The targets a corpus compiles for: architecture -> wave size (``--target``).
WAVE_SIZES = {"gfx1250": 32, "gfx950": 64, "gfx942": 64}


def set_target(arch: str) -> None:
    """Compile for ``arch`` from now on (this process and the children it starts)."""
    global TARGET
    TARGET = ("hip", arch, WAVE_SIZES[arch])


TIMEOUT = 600

#: Ops whose LDS accesses a probe measures: (kind, memdesc type index, tensor type index).
ACCESSES = {
    "ttg.local_load": ("load", 0, 1),
    "amdg.local_load_packed_transposed": ("load", 0, 1),
    "ttg.local_store": ("store", 1, 0),
    "ttg.local_alloc": ("store", 1, 0),  # only with an initial value
    "ttg.convert_layout": ("convert", 0, 1),  # only where Triton gives it scratch
}
#: Other ops that touch LDS or name a part of it; listed in the op list without counts.
LDS_OPS = {
    "ttg.local_alloc",
    "ttg.local_dealloc",
    "ttg.memdesc_index",
    "ttg.memdesc_subslice",
    "ttg.memdesc_trans",
    "ttg.memdesc_reshape",
    "ttg.memdesc_reinterpret",
    "ttg.async_copy_global_to_local",
    "ttg.async_copy_local_to_global",
    "ttg.async_commit_group",
    "ttg.async_wait",
    "amdg.async_copy_local_to_global",
    "amdg.buffer_load_to_local",
    "amdg.async_tdm_copy_global_to_local",
    "amdg.async_tdm_copy_local_to_global",
    "amdg.async_tdm_wait",
    "amdg.async_tdm_intrinsic_wait",
    "amdg.async_wait",
    *ACCESSES,
}
#: Assembly mnemonics counted besides ``ds_*`` (issue 13's loop reader wants them).
_COUNTED = re.compile(
    r"^\s+((?:ds_|tensor_load_to_lds|tensor_store_from_lds|global_load_async|v_wmma_|"
    r"s_barrier|s_wait_|s_waitcnt|s_get_shader_cycles|buffer_load|global_load|global_store)\w*)",
    re.M,
)
_DS = re.compile(r"^\s+(ds_\w+)", re.M)


# ----------------------------------------------------------------------------- child side


def _triton():
    import triton
    from triton.backends.compiler import GPUTarget

    return triton, GPUTarget(*TARGET)


def _relative(text: str) -> str:
    """Rewrite absolute paths of the installed triton package to ``triton/...`` and those of
    this checkout (and its real path) to repository-relative; the package first, since a
    virtual environment inside the checkout (``.venv/``) holds it below the root."""
    import triton

    package = os.path.dirname(os.path.realpath(triton.__file__))
    for root, to in ((package, "triton"), (str(ROOT), ""), (os.path.realpath(ROOT), "")):
        text = text.replace(root + "/", to + "/" if to else "")
    return text


_DUMP_AFTER_ALLOCATION = "// -----// IR Dump Before TritonAMDGPUMembar"


def _allocated_module(dump: Path) -> str:
    """The module Triton's pass manager printed right after ``allocate-shared-memory`` (the
    dump before the next pass, ``TritonAMDGPUMembar``), from an ``MLIR_ENABLE_DUMP`` file."""
    text = dump.read_text()
    start = text.index(_DUMP_AFTER_ALLOCATION)
    start = text.index("\n", start) + 1
    end = text.find("// -----// IR Dump", start)
    return text[start : end if end >= 0 else None].strip() + "\n"


def strip_debug(asm: str) -> str:
    """Drop the ``.debug_*`` sections (DWARF tables; nothing an instruction depends on)."""
    out, skipping = [], False
    for line in asm.splitlines(keepends=True):
        words = line.split()
        if words and words[0] in (".section", ".text", ".amdgpu_metadata"):
            skipping = words[0] == ".section" and words[1].startswith(".debug_")
        if not skipping:
            out.append(line)
    return "".join(out)


def child_compile(name: str, out: Path) -> dict:
    """Compile case ``name``; write kernel.ttgir / kernel.alloc.mlir / kernel.amdgcn."""
    from kernels import all_cases

    triton, target = _triton()
    case = next(c for c in all_cases() if c.name == name)
    if case.language == "gluon":
        from triton.experimental.gluon._runtime import GluonASTSource as Source
    else:
        from triton.compiler import ASTSource as Source
    # As the JIT specializes a launch with 16-byte aligned pointers and sizes that are
    # multiples of 16.
    attrs = {
        (case.fn.arg_names.index(arg),): [["tt.divisibility", 16]]
        for arg, ty in case.signature.items()
        if ty.startswith("*") or ty in ("i32", "i64")
    }
    src = Source(case.fn, case.signature, case.constexprs, attrs)
    dump = Path(os.environ["MLIR_DUMP_PATH"])
    compiled = triton.compile(src, target=target, options={"num_warps": case.num_warps})
    out.mkdir(parents=True, exist_ok=True)
    (out / "kernel.ttgir").write_text(_relative(compiled.asm["ttgir"]))
    (out / "kernel.alloc.mlir").write_text(_relative(_allocated_module(dump)))
    (out / "kernel.amdgcn").write_text(_relative(strip_debug(compiled.asm["amdgcn"])))
    return {"shared": compiled.metadata.shared, "name": compiled.metadata.name}


_TR = re.compile(r'"?llvm\.amdgcn\.ds\.(load\.tr\d+\.b\d+|read\.tr\d+\.b\d+|bpermute|swizzle)')
_LLVM_ACCESS = re.compile(
    r"llvm\.(load|store) (?:%\S+, )?%\S+(?: \{[^}]*\})? : "
    r"(?:!llvm\.ptr<3> -> (?P<lt>\S+)|(?P<st>\S+), !llvm\.ptr<3>)"
)
_ELEM_BITS = {"f16": 16, "bf16": 16, "i16": 16, "i8": 8, "f32": 32, "i32": 32, "i64": 64}


def _type_bits(text: str) -> int:
    if m := re.match(r"vector<(\d+)x(\w+)>", text):
        return int(m[1]) * _type_bits(m[2])
    if text in _ELEM_BITS:
        return _ELEM_BITS[text]
    if m := re.match(r"[if](\d+)$", text):
        return int(m[1])
    if text.startswith("f8") or text.startswith("f4"):
        return 8
    raise ValueError(f"unknown LLVM type {text!r}")


def _plain_name(kind: str, bits: int) -> str:
    if TARGET[1].startswith("gfx9"):  # the gfx9 mnemonics: ds_read_* / ds_write_*
        if kind == "load":
            return {8: "ds_read_u8", 16: "ds_read_u16"}.get(bits, f"ds_read_b{bits}")
        return {8: "ds_write_b8", 16: "ds_write_b16"}.get(bits, f"ds_write_b{bits}")
    if kind == "load":
        return {8: "ds_load_u8", 16: "ds_load_u16"}.get(bits, f"ds_load_b{bits}")
    return f"ds_store_b{bits}"


def lowering_counts(ttgir_path: Path) -> dict[str, int]:
    """What Triton's LLVM-dialect lowering asks for, before LLVM's passes."""
    from triton._C.libtriton import amd, ir, passes

    ctx = ir.context()
    ir.load_dialects(ctx)
    amd.load_dialects(ctx)
    mod = ir.parse_mlir_module(str(ttgir_path), ctx)
    mod.context = ctx
    arch = TARGET[1]
    pm = ir.pass_manager(ctx)
    amd.passes.ttgpuir.add_update_async_wait_count(pm, arch)
    passes.convert.add_scf_to_cf(pm)
    passes.convert.add_index_to_llvmir(pm)
    amd.passes.ttgpuir.add_allocate_shared_memory(pm, arch)
    amd.passes.ttgpuir.add_membar(pm, arch)
    amd.passes.ttgpuir.add_to_llvmir(pm, arch, True)
    amd.passes.ttgpuir.add_builtin_func_to_llvmir(pm, arch, True)
    pm.run(mod, "corpus-lowering")
    text = str(mod)
    counts: Counter[str] = Counter()
    for m in _TR.finditer(text):
        counts["ds_" + m[1].replace(".", "_")] += 1
    for m in _LLVM_ACCESS.finditer(text):
        kind = m[1]
        bits = _type_bits(m["lt"] or m["st"])
        # A vector wider than the widest LDS access (128 bits per lane) is the 128-bit
        # accesses it must become; that split is not an LLVM choice.
        counts[_plain_name(kind, min(bits, 128))] += max(1, bits // 128)
    return dict(sorted(counts.items()))


def child_probe(path: Path) -> dict:
    """Compile one probe module (and its harness) to gfx1250 assembly and count ``ds_*``."""
    triton, target = _triton()
    result: dict = {}
    for which, file in (("probe", path), ("harness", path.with_suffix(".harness.ttgir"))):
        nw = tt.int_attribute(file.read_text(), "ttg.num-warps")
        compiled = triton.compile(str(file), target=target, options={"num_warps": nw})
        result[which] = dict(sorted(Counter(_DS.findall(compiled.asm["amdgcn"])).items()))
    result["lowering"] = lowering_counts(path)
    result["lowering_harness"] = lowering_counts(path.with_suffix(".harness.ttgir"))
    return result


# ---------------------------------------------------------------------------- probe modules

_ZERO = {"f": "0.000000e+00", "b": "0.000000e+00", "i": "0"}


def _range_layouts(encoding: str, rank: int, d: int) -> tuple[str, list[tuple[int, str]]]:
    """The 1-D layout of dim ``d`` (slices of ``encoding``) and the expand steps back up."""
    layout, steps = encoding, []
    for e in reversed(range(rank)):
        if e == d:
            continue
        steps.append((e, layout))
        layout = f"#ttg.slice<{{dim = {e}, parent = {layout}}}>"
    return layout, steps


def _pointers(ten: tt.Tensor, ptr: str, body: list[str], prefix: str = "") -> str:
    """Append ops building a tensor of distinct global pointers of ``ten``'s shape/layout
    (``%{prefix}pp``; the values are named with ``prefix``)."""
    start = len(body)
    rank, shape, enc = len(ten.shape), ten.shape, ten.encoding
    full = f"tensor<{tt._dims(shape, 'i32')}, {enc}>"
    total = None
    stride = 1
    for d in reversed(range(rank)):
        layout, steps = _range_layouts(enc, rank, d)
        cur = f"%r{d}"
        cur_shape = [shape[d]]
        cur_ty = f"tensor<{shape[d]}xi32, {layout}>"
        body.append(
            f"    {cur} = tt.make_range {{end = {shape[d]} : i32, start = 0 : i32}} : {cur_ty}"
        )
        for k, (axis, parent) in enumerate(reversed(steps)):
            cur_shape.insert(axis, 1)
            new_ty = f"tensor<{tt._dims(cur_shape, 'i32')}, {parent}>"
            body.append(
                f"    %e{d}_{k} = tt.expand_dims {cur} {{axis = {axis} : i32}} : {cur_ty} -> {new_ty}"
            )
            cur, cur_ty = f"%e{d}_{k}", new_ty
        if stride != 1:
            body.append(f"    %s{d} = arith.constant dense<{stride}> : {cur_ty}")
            body.append(f"    %m{d} = arith.muli {cur}, %s{d} : {cur_ty}")
            cur = f"%m{d}"
        if rank > 1:
            body.append(f"    %b{d} = tt.broadcast {cur} : {cur_ty} -> {full}")
            cur = f"%b{d}"
        if total is None:
            total = cur
        else:
            body.append(f"    %o{d} = arith.addi {total}, {cur} : {full}")
            total = f"%o{d}"
        stride *= shape[d]
    ptrs = f"tensor<{tt._dims(shape, f'!tt.ptr<{ten.elem}>')}, {enc}>"
    body.append(f"    %p = tt.splat {ptr} : !tt.ptr<{ten.elem}> -> {ptrs}")
    body.append(f"    %pp = tt.addptr %p, {total} : {ptrs}, {full}")
    if prefix:
        body[start:] = [re.sub(r"%(?!out\b)(\w)", rf"%{prefix}\1", line) for line in body[start:]]
    return ptrs


def _views(
    md: tt.MemDesc, offsets: list[int] | None, body: list[str], chain: list[tt.Op] | None = None
) -> tuple[str, str]:
    """Allocate the parent of ``md`` and take views down to ``md``; return (value, type).

    With ``chain`` (the kernel's local_alloc and the view ops down to the access) the same
    views are taken, dynamic indices replaced by the probe's ``%idx`` argument; without it
    (the memdesc is a loop-carried value) they are rebuilt from the type: ``memdesc_index``
    down to the access's rank, then ``memdesc_subslice`` at ``offsets`` to its shape."""
    if chain:
        root, *views = chain
        cur, cur_ty = "%buf", root.types[-1]
        body.append(f"    %buf = ttg.local_alloc : () -> {cur_ty}")
        for k, view in enumerate(views):
            head = view.attrs.replace(view.operands[0], "\0", 1)
            head = re.sub(r"%[\w$.-]+", "%idx", head).replace("\0", cur)
            new_ty = view.types[-1]
            body.append(f"    %v{k} = {view.op} {head.strip()} : {cur_ty} -> {new_ty}")
            cur, cur_ty = f"%v{k}", new_ty
        return cur, cur_ty
    parent = md.alloc_shape or md.shape
    cur_shape = tuple(parent)
    cur_ty = md.text(shape=cur_shape, mutable=True, alloc_shape=None)
    body.append(f"    %buf = ttg.local_alloc : () -> {cur_ty}")
    cur, k = "%buf", 0
    while len(cur_shape) > len(md.shape):
        cur_shape = cur_shape[1:]
        new_ty = md.text(shape=cur_shape, mutable=True, alloc_shape=None)
        body.append(f"    %v{k} = ttg.memdesc_index {cur}[%idx] : {cur_ty} -> {new_ty}")
        cur, cur_ty, k = f"%v{k}", new_ty, k + 1
    if cur_shape != md.shape:
        offs = offsets or [0] * len(md.shape)
        new_ty = md.text(mutable=True, alloc_shape=cur_shape)
        body.append(
            f"    %v{k} = ttg.memdesc_subslice {cur}[{', '.join(map(str, offs))}] : "
            f"{cur_ty} -> {new_ty}"
        )
        cur, cur_ty = f"%v{k}", new_ty
    return cur, cur_ty


def view_chain(ops: list[tt.Op], name: str) -> list[tt.Op] | None:
    """The mutable local_alloc and the view ops (root first) that ``name`` is taken from, or
    None when it comes from elsewhere (a loop-carried value, an initialised alloc)."""
    by_result = {o.result: o for o in ops if o.result}
    chain: list[tt.Op] = []
    while (op := by_result.get(name.split("#")[0])) is not None and op.op in tt._VIEWS:
        chain.insert(0, op)
        name = op.operands[0]
    root = by_result.get(name.split("#")[0])
    if (
        root is None
        or root.op != "ttg.local_alloc"
        or root.operands
        or "mutable" not in root.types[-1]
    ):
        return None
    return [root, *chain]


def probe_modules(
    op: tt.Op,
    header: list[str],
    attrs: str,
    offsets: list[int] | None,
    chain: list[tt.Op] | None = None,
) -> tuple[str, str]:
    """The probe module for ``op`` and its harness (the same without the LDS access)."""
    kind, mi, ti = ACCESSES[op.op]
    if kind == "convert":
        return _convert_modules(op, header, attrs)
    md, ten = tt.memdesc(op.types[mi]), tt.tensor(op.types[ti])
    texts = []
    for harness in (False, True):
        body: list[str] = []
        if kind == "load":
            view, view_ty = _views(md, offsets, body, chain)
            if harness:
                body.append(f"    %x = arith.constant dense<{_ZERO[ten.elem[0]]}> : {op.types[ti]}")
            else:
                body.append(f"    %x = {op.op} {view} : {view_ty} -> {op.types[ti]}")
            ptrs = _pointers(ten, "%out", body)
            body.append(f"    tt.store %pp, %x : {ptrs}")
        else:
            ptrs = _pointers(ten, "%out", body)
            body.append(f"    %x = tt.load %pp : {ptrs}")
            if op.op == "ttg.local_alloc":
                view, view_ty = "%a", op.types[mi]
                if harness:
                    view_ty = md.text(mutable=True)
                    body.append(f"    %a = ttg.local_alloc : () -> {view_ty}")
                else:
                    body.append(f"    %a = ttg.local_alloc %x : ({op.types[ti]}) -> {view_ty}")
            else:
                view, view_ty = _views(md, offsets, body, chain)
                if not harness:
                    body.append(f"    ttg.local_store %x, {view} : {op.types[ti]} -> {view_ty}")
            # Read the data back (in the stored layout) so that LLVM keeps the stores; the
            # harness reads the same without storing, and its loads are subtracted.
            body.append(f"    %y = ttg.local_load {view} : {view_ty} -> {op.types[ti]}")
            body.append(f"    tt.store %pp, %y : {ptrs}")
        texts.append(_module(header, attrs, ten.elem, body))
    return texts[0], texts[1]


def with_rank(alias: str) -> str:
    """Triton 3.9.0 prints a rank-3 ``#ttg.amd_wmma`` without its ``rank = 3``, and its own
    parser then refuses it ("Serialized rank and rank deduced from LL need to match"); put the
    rank back so the probe module parses.

    >>> with_rank("#mma = #ttg.amd_wmma<{version = 3, ctaLayout = {warp = [[1, 0, 0]]}}>")
    '#mma = #ttg.amd_wmma<{version = 3, ctaLayout = {warp = [[1, 0, 0]]}, rank = 3}>'
    """
    m = re.search(r"#ttg\.amd_wmma<\{.*?ctaLayout = \{[^}]*?\[\[([\d, ]+)\]", alias)
    if not m or "rank =" in alias or len(m[1].split(",")) == 2:
        return alias
    return alias[: alias.rindex("}>")] + f", rank = {len(m[1].split(','))}}}>"


def _module(header: list[str], attrs: str, elem: str, body: list[str]) -> str:
    return "\n".join(
        [
            *map(with_rank, header),
            f"module attributes {attrs} {{",
            f"  tt.func public @probe(%out: !tt.ptr<{elem}>, %idx: i32) {{",
            *body,
            "    tt.return",
            "  }",
            "}",
            "",
        ]
    )


def _convert_modules(op: tt.Op, header: list[str], attrs: str) -> tuple[str, str]:
    """A convert_layout probe: load in the source layout, convert, store in the destination
    layout; the harness stores in the source layout (no conversion)."""
    src, dst = tt.tensor(op.types[0]), tt.tensor(op.types[1])
    texts = []
    for harness in (False, True):
        body: list[str] = []
        ptrs = _pointers(src, "%out", body)
        body.append(f"    %x = tt.load %pp : {ptrs}")
        if harness:
            body.append(f"    tt.store %pp, %x : {ptrs}")
        else:
            body.append(f"    %y = ttg.convert_layout %x : {op.types[0]} -> {op.types[1]}")
            dptrs = _pointers(dst, "%out", body, prefix="d")
            body.append(f"    tt.store %dpp, %y : {dptrs}")
        texts.append(_module(header, attrs, src.elem, body))
    return texts[0], texts[1]


# ---------------------------------------------------------------------------- parent side


def _run_child(args: list[str], script: str = __file__) -> tuple[dict | None, str]:
    """Run ``script --child ARGS`` in a fresh process with its own Triton cache (and the MLIR
    dump a compile reads its post-allocation module from); its last stdout line is JSON."""
    env = dict(os.environ)
    scratch = tempfile.mkdtemp(prefix="wgpsim-corpus-")
    env.update(
        TRITON_CACHE_DIR=scratch,
        MLIR_ENABLE_DUMP="1" if args[0] == "compile" else "0",
        MLIR_DUMP_PATH=os.path.join(scratch, "mlir-dump.txt"),
        TRITON_DEFAULT_FP_FUSION="1",
        PYTHONHASHSEED="0",
    )
    try:
        proc = subprocess.run(
            [sys.executable, script, "--target", TARGET[1], "--child", *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=env,
            cwd=ROOT,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if proc.returncode != 0:
        lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if "error:" in line or "Error" in line or "must" in line]
        tail = [line for line in lines if "nanobind" not in line and "leaked" not in line]
        return None, f"exit {proc.returncode}: " + " | ".join((errors or tail)[:3])[-600:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), ""


def _offsets(attr: str) -> list[int] | None:
    m = re.search(r"allocation\.offset = (\[[^\]]*\]|\d+ : i32)", attr)
    if not m:
        return None
    return [int(v) for v in re.findall(r"(\d+) : i32", m[1])]


def _subslice_offsets(ops: list[tt.Op], name: str) -> list[int] | None:
    for op in ops:
        if op.result == name and op.op == "ttg.memdesc_subslice":
            m = re.search(r"\[([\d, ]+)\]", op.attrs)
            return [int(v) for v in m[1].split(",")] if m else None
    return None


_JUMP = re.compile(r"^\s+(s_c?branch\w*)\s+(\.LBB\w+)\s*$")


def _reached(lines: list[str], labels: dict[str, int], start: int, end: int) -> bool:
    """Whether control gets from line ``start`` to line ``end``: lines run in order, a branch
    also jumps to its label, ``s_branch`` / ``s_endpgm`` / ``s_setpc_b64`` end the walk."""
    todo, seen = [start], set()
    while todo:
        i = todo.pop()
        while i < len(lines) and i not in seen:
            seen.add(i)
            if i == end:
                return True
            words = lines[i].split()
            if m := _JUMP.match(lines[i]):
                todo.append(labels.get(m[2], len(lines)))
                if m[1] == "s_branch":
                    break
            elif words and words[0].startswith(("s_endpgm", "s_setpc_b64")):
                break
            i += 1
    return False


#: LLVM's note beside a block label: the loop the block is in (its header's name)
_IN_LOOP = re.compile(r"^(\.LBB\w+):\s*;\s*(?:=>This (?:Inner )?Loop Header|in Loop: Header=(\w+))")


def _loops(asm: str) -> list[dict]:
    """Loop bodies of the assembly: a label and the last branch back to it, when control
    gets from the label to that branch (an exit block placed before its branch is no loop);
    one per LLVM loop (the loop LLVM's listing names beside each label), the first: a later
    label of the same loop that an out-of-line block branches back to is a join, no loop."""
    lines = asm.splitlines()
    labels = {m[1]: i for i, line in enumerate(lines) if (m := re.match(r"^(\.LBB\w+):", line))}
    header = {m[1]: m[2] or m[1][2:] for line in lines if (m := _IN_LOOP.match(line))}
    seen_loops: set[str] = set()
    loops = []
    for label, start in labels.items():
        back = [
            i
            for i, line in enumerate(lines)
            if i > start and re.match(rf"^\s+s_(?:c)?branch\w* {re.escape(label)}\s*$", line)
        ]
        if back and _reached(lines, labels, start, back[-1]):
            if label in header and header[label] in seen_loops:
                continue
            seen_loops.add(header.get(label, label))
            body = "\n".join(lines[start : back[-1] + 1])
            loops.append(
                {
                    "label": label,
                    "lines": [start + 1, back[-1] + 1],
                    "ds": dict(sorted(Counter(_DS.findall(body)).items())),
                    "instructions": dict(sorted(Counter(_COUNTED.findall(body)).items())),
                }
            )
    return loops


def _placed(ops: list[tt.Op], allocated: list[tt.Op], name: str) -> dict[int, list[int]]:
    """``allocation.offset`` of the post-allocation module, keyed by the TTGIR op index: the
    k-th op of a name there is the k-th op of that name in the TTGIR (the passes before the
    allocation convert loops to blocks but keep every op that touches LDS, in order)."""
    placed: dict[int, list[int]] = {}
    for opname in {o.op for o in allocated if _offsets(o.attrs) or _offsets(o.text)}:
        mine = [o for o in ops if o.op == opname]
        theirs = [o for o in allocated if o.op == opname]
        if len(mine) != len(theirs):
            raise RuntimeError(
                f"{name}: {len(theirs)} {opname} after allocation, {len(mine)} before"
            )
        for op, other in zip(mine, theirs, strict=True):
            offs = _offsets(other.attrs) or _offsets(other.text)
            if offs is not None:
                placed[op.index] = offs
    return placed


def _probe(op: tt.Op, ops: list[tt.Op], header: list[str], attrs: str, probes: dict) -> str:
    source = op.operands[1] if op.op == "ttg.local_store" else op.operands[0]
    chain = view_chain(ops, source) if op.op != "ttg.local_alloc" else None
    text, harness = probe_modules(op, header, attrs, _subslice_offsets(ops, source), chain)
    pid = hashlib.sha1(text.encode()).hexdigest()[:12]
    PROBES.mkdir(exist_ok=True)
    path = PROBES / f"{pid}.ttgir"
    path.write_text(text)
    path.with_suffix(".harness.ttgir").write_text(harness)
    if pid not in probes:
        result, err = _run_child(["probe", str(path)])
        if result is None:
            probes[pid] = {"error": err}
        else:
            got, low = Counter(result["probe"]), Counter(result["lowering"])
            got.subtract(result["harness"])
            low.subtract(result["lowering_harness"])
            probes[pid] = {
                "instructions": {k: v for k, v in sorted(got.items()) if v},
                "harness": result["harness"],
                "triton_lowering": {k: v for k, v in sorted(low.items()) if v},
                "triton_lowering_harness": result["lowering_harness"],
            }
        probes[pid]["op"] = op.op
        probes[pid]["types"] = op.types
        print(
            f"    probe {pid} {op.op}: {probes[pid].get('instructions', probes[pid].get('error'))}"
        )
    return pid


def build_expected(name: str, out: Path, meta: dict, probes: dict) -> dict:
    ttgir = (out / "kernel.ttgir").read_text()
    alloc = (out / "kernel.alloc.mlir").read_text()
    asm = (out / "kernel.amdgcn").read_text()
    ops = tt.ops(ttgir)
    header = tt.alias_lines(ttgir)
    attrs = tt.module_attributes(ttgir)
    placed = _placed(ops, tt.ops(alloc), name)
    buffers, lds_ops = [], []
    for op in ops:
        offs = placed.get(op.index)
        if offs is not None:
            buffers.append(
                {
                    "index": op.index,
                    "op": op.op,
                    "name": op.result,
                    "offsets": offs,
                    "type": op.types[-1] if op.types else None,
                    "loc": op.loc,
                }
            )
        if op.op not in LDS_OPS and offs is None:
            continue
        entry = {
            "index": len(lds_ops),
            "line": op.line,
            "op": op.op,
            "name": op.result,
            "operands": op.operands,
            "types": op.types,
            "loc": op.loc,
        }
        if (
            op.operands
            and op.op in ACCESSES
            and op.op not in ("ttg.local_alloc", "ttg.convert_layout")
        ):
            source = op.operands[1 if op.op == "ttg.local_store" else 0]
            chain = view_chain(ops, source) or []
            entry["views"] = [
                {"op": v.op, "index": v.index, "attrs": v.attrs.strip(), "type": v.types[-1]}
                for v in chain[1:]
            ]
            entry["root"] = chain[0].index if chain else None
        access = op.op in ACCESSES and not (op.op == "ttg.local_alloc" and not op.operands)
        access = access and (op.op != "ttg.convert_layout" or offs is not None)
        if access:
            pid = _probe(op, ops, header, attrs, probes)
            entry["kind"] = ACCESSES[op.op][0]
            entry["probe"] = pid
            entry["instructions"] = probes[pid].get("instructions")
            entry["triton_lowering"] = probes[pid].get("triton_lowering")
            if "error" in probes[pid]:
                entry["probe_error"] = probes[pid]["error"]
        lds_ops.append(entry)
    shared = tt.int_attribute(alloc, "ttg.shared")
    return {
        "name": name,
        "kernel": meta["name"],
        "num_warps": tt.int_attribute(ttgir, "ttg.num-warps"),
        "ttg_shared": shared,
        "metadata_shared": meta["shared"],
        "buffers": buffers,
        "ops": lds_ops,
        "assembly": {
            "ds": dict(sorted(Counter(_DS.findall(asm)).items())),
            "instructions": dict(sorted(Counter(_COUNTED.findall(asm)).items())),
            "loops": _loops(asm),
        },
    }


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


_LANE_BYTES = re.compile(r"_b(\d+)$")
_ELEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4, "i16": 2}


def detect_items(expected: dict, ttgir: str) -> list[str]:
    """The issue-11 items a compiled case exercises, read from its artefacts."""
    items = set()
    aliases = tt.aliases(ttgir)
    probed = [o for o in expected["ops"] if o.get("instructions") and o["kind"] != "convert"]
    for o in probed:
        asm, low = o["instructions"], o.get("triton_lowering") or {}
        md = tt.memdesc(o["types"][0 if o["kind"] == "load" else 1])
        ten = tt.tensor(o["types"][1 if o["kind"] == "load" else 0])
        shared = tt.resolve(md.encoding, aliases)
        if any("2addr" in k for k in asm):
            items.add("1")
        accesses = sum(v * (2 if "2addr" in k else 1) for k, v in asm.items())
        if o["kind"] == "load" and accesses < sum(low.values()):
            items.add("2")
        if any("tr4" in k for k in asm):
            items.add("3")
        if "#ttg.shared_linear" in shared:
            items.add("4-shared_linear")
        if o["kind"] == "load" and ten.encoding.startswith("#ttg.slice"):
            items.add("4-slice")
        if len(ten.shape) == 3 and "amd_wmma" in tt.resolve(ten.encoding, aliases):
            items.add("4-rank3")
        if o.get("views") or (md.alloc_shape and md.alloc_shape != md.shape):
            items.add("5")
        pads = [int(p) for p in re.findall(r":\+(\d+)", shared)]
        widths = [int(m[1]) // 8 for k in asm if (m := _LANE_BYTES.search(k))]
        if pads and widths and min(pads) * _ELEM_BYTES.get(md.elem, 1) % max(widths):
            items.add("6")
        if tt.piece_shape_differs(shared, md.alloc_shape or md.shape):
            items.add("7")
        if o["kind"] == "store":
            items.add("10")
    return sorted(items)


def _covers(case, detected: list[str]) -> list[str]:
    """What the case covers: the items detected in its artefacts, plus its declared features
    (a declared item the artefacts do not show is reported and left out)."""
    item = re.compile(r"^\d+(-\w+)?$")
    for tag in case.covers:
        if item.match(tag) and tag not in detected:
            print(f"  note: {case.name} declares item {tag}, which its artefacts do not show")
    return sorted(set(detected) | {t for t in case.covers if not item.match(t)})


def regenerate(names: list[str], fresh: bool = False, reuse: bool = False) -> int:
    from kernels import all_cases

    cases = all_cases()
    known = {c.name for c in cases}
    for n in names:
        if n not in known:
            print(f"unknown case {n!r}; --list shows the cases", file=sys.stderr)
            return 2
    selected = [c for c in cases if not names or c.name in names]
    probes_path = PROBES / "index.json"
    # Probes are named by the hash of their module, so a stored result is that module's.
    probes = json.loads(probes_path.read_text()) if probes_path.exists() and not fresh else {}
    index = json.loads(INDEX.read_text()) if INDEX.exists() and names else {"cases": {}}
    failures = 0
    for case in selected:
        print(f"{case.name} ({case.language}, {case.num_warps} warps)", flush=True)
        out = FIXTURES / case.name
        if reuse and (out / "expected.json").exists() and not case.rejects:
            old = json.loads((out / "expected.json").read_text())
            meta, err = {"shared": old["metadata_shared"], "name": old["kernel"]}, ""
        else:
            meta, err = _run_child(["compile", case.name, str(out)])
        if case.rejects:
            refused = meta is None and case.rejects in err
            print(f"  refused as expected: {err}" if refused else "  NOT refused as expected")
            index["cases"][case.name] = {
                "language": case.language,
                "rejected": err if refused else None,
                "expects": case.rejects,
                "alloc": list(case.rejected_alloc[:2]) + [case.rejected_alloc[2]],
                "note": case.note,
                "covers": list(case.covers),
            }
            failures += not refused
            continue
        if meta is None:
            print(f"  compile failed: {err}")
            index["cases"][case.name] = {"error": err, "language": case.language}
            failures += 1
            continue
        try:
            expected = build_expected(case.name, out, meta, probes)
        except Exception as exc:  # one bad case must not lose the run
            print(f"  reading the artefacts failed: {exc!r}")
            index["cases"][case.name] = {"error": repr(exc), "language": case.language}
            failures += 1
            continue
        finally:
            _write_json(probes_path, dict(sorted(probes.items())))
        _write_json(out / "expected.json", expected)
        ttgir = (out / "kernel.ttgir").read_text()
        index["cases"][case.name] = {
            "language": case.language,
            "num_warps": case.num_warps,
            "source": str(Path(case.fn.fn.__code__.co_filename).resolve().relative_to(ROOT)),
            "function": case.fn.__name__,
            "constexprs": {k: repr(v) for k, v in case.constexprs.items()},
            "note": case.note,
            "covers": _covers(case, detect_items(expected, ttgir)),
            "files": ["kernel.ttgir", "kernel.alloc.mlir", "kernel.amdgcn", "expected.json"],
            "ops": len(expected["ops"]),
            "accesses": sum(o.get("kind") in ("load", "store") for o in expected["ops"]),
        }
    used = {
        o["probe"]
        for d in FIXTURES.iterdir()
        if (d / "expected.json").exists()
        for o in json.loads((d / "expected.json").read_text())["ops"]
        if "probe" in o
    }
    _write_json(probes_path, {k: v for k, v in sorted(probes.items()) if k in used})
    for stale in PROBES.glob("*.ttgir"):
        if stale.name.split(".")[0] not in used:
            stale.unlink()
    if not names:  # a full run: cases no longer in the corpus go
        for stale in FIXTURES.iterdir():
            if stale.name not in known:
                shutil.rmtree(stale)
    index["cases"] = dict(sorted(index["cases"].items()))
    _write_json(INDEX, index)
    print(f"{len(selected) - failures} of {len(selected)} cases compiled")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="cases to regenerate (default: all)")
    parser.add_argument("--list", action="store_true", help="print the case names")
    parser.add_argument(
        "--fresh", action="store_true", help="compile every probe again (default: reuse results)"
    )
    parser.add_argument(
        "--probes-only",
        action="store_true",
        help="keep the compiled kernels, rebuild expected.json (with --fresh: probes again)",
    )
    parser.add_argument("--target", choices=WAVE_SIZES, default=TARGET[1], help=argparse.SUPPRESS)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    set_target(args.target)
    if args.child:
        what, *rest = args.child
        if what == "compile":
            print(json.dumps(child_compile(rest[0], Path(rest[1]))))
        else:
            print(json.dumps(child_probe(Path(rest[0]))))
        return 0
    if args.list:
        from kernels import all_cases

        for c in all_cases():
            print(c.name)
        return 0
    return regenerate(args.names, args.fresh, args.probes_only)


if __name__ == "__main__":
    sys.exit(main())
