"""From kernel source to an LDS report in one call (the notebook's entry point).

``report(fn, signature, constexprs, num_warps=..., target=...)`` compiles a ``@triton.jit`` /
``@gluon.jit`` function on the CPU (the triton extra; `wgpsim.frontend.compile.compile_for`) for
``target`` (``"gfx1250"``, MI450, by default; ``"gfx950"``, ``"gfx942"``: the hardware file whose
``target:`` names it, which the report then uses) and returns its
`wgpsim.kernel.report.KernelReport`; it also takes an already compiled kernel
(``triton.compile(...)``), a `wgpsim.frontend.compile.Compiled`, a kernel model, or a path that
``wgpsim kernel`` reads::

    from wgpsim.kernel import report
    rep = report(matmul, {"a_ptr": "*fp16", ...}, {"BM": 128, "BN": 128, "BK": 64}, num_warps=4)
    rep.ops[0]["instructions"], rep.lds_bytes, rep.ttg_shared
    report(matmul, {...}, {...}, num_warps=4, target="gfx950")  # MI350X/MI355X, wave64

``loop(...)`` takes the same kernels and returns the traces of its main loop as the assembly
runs it (`wgpsim.kernel.loop.traces.KernelLoopTrace`: every warp, N iterations, per-row
provenance), which ``wgpsim kernel PATH --timeline`` times::

    lt = loop("tests/corpus/fixtures/gemm_tdm_partitioned_fp16/kernel.ttgir", iterations=4)
    lt.program.notes, lt.trace, lt.op_name, lt.iteration
"""

from __future__ import annotations

# The submodule `report` and the package `loop` are imported here, before the functions of
# the same names are defined: the functions then stay the package's `report` and `loop`. The
# loop's program and traces, and the compiler, are imported where they are used (the compile
# functions on first use, `wgpsim.lazy`): a plain ``wgpsim kernel`` report needs neither.
from pathlib import Path
from typing import TYPE_CHECKING, Any

import wgpsim.kernel.loop  # noqa: F401 (the package, before the function `loop`)
from wgpsim.frontend.model import Kernel
from wgpsim.frontend.sources import read_kernel
from wgpsim.kernel.report import KernelReport, kernel_report
from wgpsim.lazy import exports

if TYPE_CHECKING:
    from wgpsim.kernel.loop.traces import KernelLoopTrace

__all__ = ["compile_for", "compile_for_gfx1250", "loop", "report"]

__getattr__ = exports(
    __name__,
    {"compile_for": "wgpsim.frontend.compile", "compile_for_gfx1250": "wgpsim.frontend.compile"},
)[0]


def report(
    kernel: Any,
    signature: dict[str, str] | None = None,
    constexprs: dict[str, Any] | None = None,
    *,
    num_warps: int = 4,
    target: str = "gfx1250",
    hw=None,
    engine: str = "auto",
    **options: Any,
) -> KernelReport:
    """The LDS report of ``kernel`` (see the module docstring for what it may be); ``target``
    is the chip a jit function is compiled for (a compiled kernel says its own)."""
    if isinstance(kernel, str | Path | Kernel):
        return kernel_report(kernel, hw, engine=engine)
    model = _model(kernel, signature, constexprs, num_warps=num_warps, target=target, **options)
    return kernel_report(model, hw, engine=engine)


def loop(
    kernel: Any,
    signature: dict[str, str] | None = None,
    constexprs: dict[str, Any] | None = None,
    *,
    num_warps: int = 4,
    target: str = "gfx1250",
    asm: str | None = None,
    which: str | int | None = None,
    iterations: int | None = None,
    hw=None,
    **options: Any,
) -> KernelLoopTrace:
    """The traces of ``kernel``'s loop ``which`` (a label or index; default: the loop with the
    most ``ds_*``, or the whole kernel if it has none), from ``asm`` or the kernel's own
    assembly (without any, from the TTGIR by rule), over ``iterations`` (default: the constant
    trip count, else `wgpsim.kernel.loop.traces.DEFAULT_ITERATIONS`); ``target`` as for
    `report`."""
    from wgpsim.kernel.loop.program import loop_program
    from wgpsim.kernel.loop.traces import loop_trace

    model = _model(kernel, signature, constexprs, num_warps=num_warps, target=target, **options)
    program = loop_program(model, asm, loop=which, hw=hw)
    return loop_trace(program, iterations, hw)


def _model(
    kernel: Any, signature, constexprs, *, num_warps: int, target: str, **options: Any
) -> Kernel:
    """The kernel model of whatever ``report``/``loop`` were given."""
    from wgpsim.frontend.compile import Compiled, compile_for, from_compiled

    if isinstance(kernel, Kernel):
        return kernel
    if isinstance(kernel, str | Path):
        return read_kernel(kernel)
    if isinstance(kernel, Compiled):
        compiled = kernel
    elif hasattr(kernel, "asm"):
        compiled = from_compiled(kernel)
    else:
        if signature is None:
            raise TypeError("a jit function needs its signature")
        compiled = compile_for(
            kernel, signature, constexprs, num_warps=num_warps, target=target, **options
        )
    return compiled.kernel()
