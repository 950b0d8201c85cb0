"""The corpus kernels: Gluon and plain Triton sources, and the cases compiled from them.

Each module of this package defines ``CASES``, a list of ``Case``: one compile of one kernel
(signature, constexprs, warps). ``regenerate.py`` compiles every case for gfx1250 on the CPU.
Importing a kernel module needs the triton extra; this file does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

#: The kernel modules, in corpus order.
MODULES = (
    "gluon_gemm",
    "gluon_bandwidth",
    "gluon_access",
    "triton_matmul",
    "triton_attention",
    "triton_misc",
)


@dataclass(frozen=True)
class Case:
    """One compile: ``fn`` (a ``@gluon.jit`` or ``@triton.jit`` function) with its
    ``signature`` (argument name -> Triton type, ``"constexpr"`` for constexprs), the
    ``constexprs`` values, ``num_warps``, and the issue-11 items it is meant to cover
    (``regenerate.py`` adds the items it detects in the compiled artefacts)."""

    name: str
    fn: Any
    signature: dict[str, str]
    constexprs: dict[str, Any] = field(default_factory=dict)
    num_warps: int = 4
    covers: tuple[str, ...] = ()
    note: str = ""
    #: For a case Triton must refuse: a piece of the error it gives, and the refused
    #: allocation as (shape, dtype, #ttg encoding) for the tests.
    rejects: str = ""
    rejected_alloc: tuple[tuple[int, ...], str, str] | None = None

    @property
    def language(self) -> str:
        return "gluon" if type(self.fn).__name__ == "GluonJITFunction" else "triton"


def signature(args: str, constexprs: dict[str, Any]) -> dict[str, str]:
    """``"a_ptr:*fp16 M:i32"`` plus the constexpr names -> a Triton signature dict."""
    sig = dict(item.split(":") for item in args.split())
    return {**sig, **dict.fromkeys(constexprs, "constexpr")}


def all_cases() -> list[Case]:
    """Every case of every kernel module (imports triton)."""
    cases: list[Case] = []
    for module in MODULES:
        cases.extend(import_module(f"{__name__}.{module}").CASES)
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise ValueError(
            f"corpus case names repeat: {sorted(n for n in names if names.count(n) > 1)}"
        )
    return cases
