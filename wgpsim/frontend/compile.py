"""Compile a ``@triton.jit`` / ``@gluon.jit`` function for gfx1250 on the CPU (the triton extra),
and take the module after Triton's ``allocate-shared-memory`` pass.

``compile_for_gfx1250(fn, signature, constexprs, num_warps)`` runs ``triton.compile`` with
``GPUTarget("hip", "gfx1250", 32)`` (no GPU needed) and returns a `Compiled`: the TTGIR, the
assembly, the metadata and the post-allocation module (``allocation.offset`` on every buffer and
``ttg.shared``), which `post_allocation` gets by running the passes ``make_llir`` runs before
allocation, in a subprocess (a pass that aborts takes only the child down).
``Compiled.kernel()`` is the kernel model with Triton's own offsets. An already compiled
kernel (``triton.compile(...)``'s result, or ``fn.warmup(...)``'s) goes through `from_compiled`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wgpsim.errors import ModuleError
from wgpsim.frontend.model import Kernel
from wgpsim.packaged import target_names, triton_targets

__all__ = ["Compiled", "compile_for_gfx1250", "from_compiled", "post_allocation"]

#: The passes of Triton 3.9.0's AMD ``make_llir`` up to ``allocate-shared-memory``, run on a
#: parsed TTGIR module; prints the module (with locations) on stdout.
_POST_ALLOCATION = r"""
import sys
from triton._C.libtriton import ir, passes, amd
ctx = ir.context()
ir.load_dialects(ctx)
amd.load_dialects(ctx)
mod = ir.parse_mlir_module(sys.argv[1], ctx)
mod.context = ctx
pm = ir.pass_manager(ctx)
amd.passes.ttgpuir.add_update_async_wait_count(pm, "gfx1250")
amd.passes.ttgpuir.add_warp_pipeline_conversion(pm, "gfx1250")
passes.convert.add_scf_to_cf(pm)
passes.gluon.add_inliner(pm)
passes.convert.add_index_to_llvmir(pm)
amd.passes.ttgpuir.add_allocate_shared_memory(pm, "gfx1250")
pm.run(mod, "make_llir")
sys.stdout.write(mod.str())
"""


@dataclass(frozen=True)
class Compiled:
    """One kernel compiled for gfx1250: its IR texts and metadata."""

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


def post_allocation(ttgir: str, *, name: str = "kernel", timeout: float = 300) -> str:
    """The module after ``allocate-shared-memory`` (Triton's passes, in a subprocess); ops
    without a location of their own point into ``NAME.ttgir``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.ttgir"
        path.write_text(ttgir)
        proc = subprocess.run(
            [sys.executable, "-c", _POST_ALLOCATION, str(path)],
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
    post = post_allocation(asm["ttgir"], name=name) if allocate else None
    return Compiled(name, asm["ttgir"], asm.get("amdgcn"), post, meta)


def compile_for_gfx1250(
    fn: Any,
    signature: dict[str, str],
    constexprs: dict[str, Any] | None = None,
    *,
    num_warps: int = 4,
    num_stages: int | None = None,
    allocate: bool = True,
    **options: Any,
) -> Compiled:
    """Compile ``fn`` for gfx1250 on the CPU.

    ``signature`` maps each runtime argument to its Triton type (``"*fp16"``, ``"i32"``);
    ``constexprs`` gives the ``constexpr`` arguments' values (they need not be in
    ``signature``). ``options`` go to ``triton.compile`` (``num_ctas``, ...).
    """
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
    compiled = triton.compile(src, target=GPUTarget("hip", "gfx1250", 32), options=opts)
    return from_compiled(compiled, allocate=allocate)
