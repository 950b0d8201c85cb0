"""Compile a ``@triton.jit`` / ``@gluon.jit`` function on the CPU (the triton extra) for any
packaged target, and take the module after Triton's ``allocate-shared-memory`` pass.

``compile_for(fn, signature, constexprs, num_warps, target="gfx950")`` runs ``triton.compile``
with the ``GPUTarget`` the target's hardware file names (its ``target:`` field, ``hip:gfx950``,
and ``wgp.warp_size``, 64; no GPU needed) and returns a `Compiled`: the TTGIR, the assembly, the
metadata and the post-allocation module (``allocation.offset`` on every buffer and
``ttg.shared``), which `post_allocation` gets by running the passes ``make_llir`` runs before
allocation, with the module's own arch, in a subprocess (a pass that aborts takes only the child
down). ``compile_for_gfx1250`` is ``compile_for(..., target="gfx1250")``.
``Compiled.kernel()`` is the kernel model with Triton's own offsets. An already compiled
kernel (``triton.compile(...)``'s result, or ``fn.warmup(...)``'s) goes through `from_compiled`.

>>> resolve_target("gfx950")
CompileTarget(name='gfx950', arch='gfx950', warp_size=64)
>>> resolve_target("gfx1250") == resolve_target("mi450") == resolve_target("hip:gfx1250")
True
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wgpsim.errors import ModuleError
from wgpsim.frontend.model import Kernel
from wgpsim.packaged import (
    hardware_fact,
    target_names,
    target_stem,
    target_vocabulary,
    triton_targets,
)

__all__ = [
    "CompileTarget",
    "Compiled",
    "compile_for",
    "compile_for_gfx1250",
    "from_compiled",
    "post_allocation",
    "resolve_target",
]

#: The passes of Triton 3.9.0's AMD ``make_llir`` up to ``allocate-shared-memory``, run on a
#: parsed TTGIR module with the arch ``argv[2]`` (``options.arch``: the same passes on gfx9 and
#: gfx1250, each given the arch); prints the module (with locations) on stdout.
_POST_ALLOCATION = r"""
import sys
from triton._C.libtriton import ir, passes, amd
ctx = ir.context()
ir.load_dialects(ctx)
amd.load_dialects(ctx)
mod = ir.parse_mlir_module(sys.argv[1], ctx)
mod.context = ctx
arch = sys.argv[2]
pm = ir.pass_manager(ctx)
amd.passes.ttgpuir.add_update_async_wait_count(pm, arch)
amd.passes.ttgpuir.add_warp_pipeline_conversion(pm, arch)
passes.convert.add_scf_to_cf(pm)
passes.gluon.add_inliner(pm)
passes.convert.add_index_to_llvmir(pm)
amd.passes.ttgpuir.add_allocate_shared_memory(pm, arch)
pm.run(mod, "make_llir")
sys.stdout.write(mod.str())
"""


@dataclass(frozen=True)
class Compiled:
    """One kernel compiled for a packaged target: its IR texts and metadata."""

    name: str
    ttgir: str = field(repr=False)
    amdgcn: str | None = field(repr=False)
    post_alloc: str | None = field(repr=False)
    metadata: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def kernel(self) -> Kernel:
        """The kernel model: the TTGIR's structure with the post-allocation offsets."""
        from wgpsim.frontend.sources import attach, merge_offsets
        from wgpsim.frontend.ttgir import read_ttgir

        kernel = read_ttgir(self.ttgir, source=f"{self.name}.ttgir")
        if self.post_alloc is not None:
            kernel = merge_offsets(
                kernel, read_ttgir(self.post_alloc, source=f"{self.name}.post.mlir")
            )
        return attach(kernel, self.amdgcn, self.metadata)

    def write(self, directory: str | Path, paths: dict[str, str] | None = None) -> Path:
        """Write ``NAME.ttgir``, ``NAME.amdgcn``, ``NAME.json``, ``NAME.post.mlir`` (as a Triton
        dump directory holds them) into ``directory``; returns it. ``paths`` rewrites source
        paths in the texts (``{"/home/me/src": "src"}``)."""
        import json

        def clean(text: str) -> str:
            for old, new in (paths or {}).items():
                text = text.replace(old, new)
            return text

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{self.name}.ttgir").write_text(clean(self.ttgir))
        if self.amdgcn is not None:
            (out / f"{self.name}.amdgcn").write_text(clean(self.amdgcn))
        if self.post_alloc is not None:
            (out / f"{self.name}.post.mlir").write_text(clean(self.post_alloc))
        (out / f"{self.name}.json").write_text(json.dumps(self.metadata, indent=1, default=str))
        return out


@dataclass(frozen=True)
class CompileTarget:
    """A packaged target as Triton compiles for it: the hardware file's name (``mi450``), the
    arch of its ``target:`` field (``gfx1250``) and its ``wgp.warp_size``."""

    name: str
    arch: str
    warp_size: int


def resolve_target(target: str = "gfx1250") -> CompileTarget:
    """The packaged target ``target`` names: a hardware file (``mi450``, ``gfx950``), an arch
    (``gfx1250``) or Triton's name (``hip:gfx1250``); another is a `ModuleError` naming the
    valid ones (see the module docstring for examples)."""
    name = target_stem(target)
    if name is None:
        raise ModuleError(f"unknown target {target!r} (valid: {target_vocabulary()})")
    arch = str(hardware_fact("target", name=name)).removeprefix("hip:")
    return CompileTarget(name, arch, int(hardware_fact("wgp", "warp_size", name=name)))


_MODULE_TARGET = re.compile(r'ttg\.target = "hip:(?P<arch>[\w-]+)"')


FP_FUSION_ENV = "TRITON_DEFAULT_FP_FUSION"


def fp_fusion_default(options: dict[str, Any]) -> dict[str, Any]:
    """``{"enable_fp_fusion": True}`` when neither ``options`` nor ``$TRITON_DEFAULT_FP_FUSION``
    chooses: Triton 3.9's own default (fusion on), said explicitly, so the compile is the same
    (its options and hash resolve to ``True`` either way) without Triton's UserWarning that
    the default changes in 3.10. A user's choice (the option or the variable) is kept.

    >>> fp_fusion_default({}) if FP_FUSION_ENV not in os.environ else {"enable_fp_fusion": True}
    {'enable_fp_fusion': True}
    >>> fp_fusion_default({"enable_fp_fusion": False})
    {}
    """
    if "enable_fp_fusion" in options or os.environ.get(FP_FUSION_ENV) is not None:
        return {}
    return {"enable_fp_fusion": True}


def post_allocation(
    ttgir: str, *, arch: str | None = None, name: str = "kernel", timeout: float = 300
) -> str:
    """The module after ``allocate-shared-memory`` (Triton's passes for ``arch``, default the
    module's ``ttg.target``, in a subprocess); ops without a location of their own point into
    ``NAME.ttgir``."""
    if arch is None:
        found = _MODULE_TARGET.search(ttgir)
        arch = found["arch"] if found else "gfx1250"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.ttgir"
        path.write_text(ttgir)
        proc = subprocess.run(
            [sys.executable, "-c", _POST_ALLOCATION, str(path), arch],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    if proc.returncode != 0 or "module" not in proc.stdout:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise ModuleError(f"Triton's allocate-shared-memory failed on the module: {last}")
    return proc.stdout.replace(f'"{path}"', f'"{path.name}"')


def _metadata(compiled: Any) -> dict[str, Any]:
    meta = getattr(compiled, "metadata", None)
    if meta is None:
        return {}
    if hasattr(meta, "_asdict"):
        meta = meta._asdict()
    elif not isinstance(meta, dict):
        meta = dict(vars(meta))
    keep = ("name", "num_warps", "num_stages", "shared", "arch", "backend_name", "warp_size")
    out = {k: meta[k] for k in keep if k in meta}
    target = meta.get("target")
    if target is not None:
        out["target"] = f"{getattr(target, 'backend', '?')}:{getattr(target, 'arch', '?')}"
    return out


def from_compiled(compiled: Any, *, allocate: bool = True) -> Compiled:
    """A `Compiled` of a Triton ``CompiledKernel`` (``asm["ttgir"]``, ``asm["amdgcn"]``)."""
    asm = getattr(compiled, "asm", None)
    if not isinstance(asm, dict) or "ttgir" not in asm:
        raise ModuleError(
            f"expected a compiled Triton kernel (with asm['ttgir']), got {type(compiled).__name__}"
        )
    meta = _metadata(compiled)
    target = str(meta.get("target", "hip:gfx1250"))
    if target not in triton_targets():
        raise ModuleError(f"the kernel was compiled for {target}; wgpsim models {target_names()}")
    name = str(meta.get("name") or getattr(compiled, "name", "kernel"))
    arch = target.removeprefix("hip:")
    post = post_allocation(asm["ttgir"], arch=arch, name=name) if allocate else None
    return Compiled(name, asm["ttgir"], asm.get("amdgcn"), post, meta)


def compile_for(
    fn: Any,
    signature: dict[str, str],
    constexprs: dict[str, Any] | None = None,
    *,
    num_warps: int = 4,
    num_stages: int | None = None,
    target: str = "gfx1250",
    allocate: bool = True,
    **options: Any,
) -> Compiled:
    """Compile ``fn`` on the CPU for the packaged target ``target`` (`resolve_target`: ``mi450``
    or ``gfx1250``, ``gfx950``, ``gfx942``).

    ``signature`` maps each runtime argument to its Triton type (``"*fp16"``, ``"i32"``);
    ``constexprs`` gives the ``constexpr`` arguments' values (they need not be in
    ``signature``). ``options`` go to ``triton.compile`` (``num_ctas``, ...).
    """
    chip = resolve_target(target)
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
    except ImportError as err:  # pragma: no cover - the triton extra is missing
        raise ModuleError(
            f"compiling needs the triton extra (pip install wgpsim[triton]): {err}"
        ) from None
    constexprs = dict(constexprs or {})
    sig = dict(signature) | {k: "constexpr" for k in constexprs if k not in signature}
    source_cls = ASTSource
    if getattr(fn, "is_gluon", lambda: False)():
        from triton.experimental.gluon._runtime import GluonASTSource

        source_cls = GluonASTSource
    opts = {"num_warps": num_warps, **fp_fusion_default(options), **options}
    if num_stages is not None:
        opts["num_stages"] = num_stages
    src = source_cls(fn, sig, constexprs=constexprs)
    gpu = GPUTarget("hip", chip.arch, chip.warp_size)
    return from_compiled(triton.compile(src, target=gpu, options=opts), allocate=allocate)


def compile_for_gfx1250(
    fn: Any, signature: dict[str, str], constexprs: dict[str, Any] | None = None, **kw: Any
) -> Compiled:
    """``compile_for(..., target="gfx1250")``: the MI450 compile (older callers' name)."""
    return compile_for(fn, signature, constexprs, target="gfx1250", **kw)
