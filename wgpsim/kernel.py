"""From kernel source to an LDS report in one call (the notebook's entry point).

``report(fn, signature, constexprs, num_warps=...)`` compiles a ``@triton.jit`` / ``@gluon.jit``
function for gfx1250 on the CPU (the triton extra; `wgpsim.frontend.compile`) and returns its
`wgpsim.analysis.kernel_report.KernelReport`; it also takes an already compiled kernel
(``triton.compile(...)``), a `wgpsim.frontend.compile.Compiled`, a kernel model, or a path that
``wgpsim kernel`` reads::

    from wgpsim.kernel import report
    rep = report(matmul, {"a_ptr": "*fp16", ...}, {"BM": 128, "BN": 128, "BK": 64}, num_warps=4)
    rep.ops[0]["instructions"], rep.lds_bytes, rep.ttg_shared
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wgpsim.analysis.kernel_report import KernelReport, kernel_report
from wgpsim.frontend.compile import Compiled, compile_for_gfx1250, from_compiled
from wgpsim.frontend.model import Kernel

__all__ = ["compile_for_gfx1250", "report"]


def report(
    kernel: Any,
    signature: dict[str, str] | None = None,
    constexprs: dict[str, Any] | None = None,
    *,
    num_warps: int = 4,
    hw=None,
    engine: str = "fast",
    **options: Any,
) -> KernelReport:
    """The LDS report of ``kernel`` (see the module docstring for what it may be)."""
    if isinstance(kernel, str | Path | Kernel):
        return kernel_report(kernel, hw, engine=engine)
    if isinstance(kernel, Compiled):
        compiled = kernel
    elif hasattr(kernel, "asm"):
        compiled = from_compiled(kernel)
    else:
        if signature is None:
            raise TypeError("report(fn, signature, ...): a jit function needs its signature")
        compiled = compile_for_gfx1250(
            kernel, signature, constexprs, num_warps=num_warps, **options
        )
    return kernel_report(compiled.kernel(), hw, engine=engine)
