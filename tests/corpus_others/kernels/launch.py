"""One row of the corpus' launch table (``Kernel``); it imports no triton."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

PACKAGE = __name__.rpartition(".")[0]  # the kernels package


@dataclass(frozen=True)
class Kernel:
    """One compile: ``fn`` names ``module:function``; ``args`` is ``"name:type ..."`` (the
    constexprs are added from ``constexprs``); ``origin`` the public source it follows or
    reproduces; ``regression`` the held-out failure it pins (empty for the public kernels)."""

    name: str
    fn: str
    args: str
    constexprs: dict[str, Any] = field(default_factory=dict)
    num_warps: int = 4
    num_stages: int = 2
    origin: str = ""
    regression: str = ""
    #: further HIP compile options the source's AMD configs set (``matrix_instr_nonkdim``,
    #: ``waves_per_eu``, ``kpack``)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def signature(self) -> dict[str, str]:
        sig = dict(item.split(":") for item in self.args.split())
        return {**sig, **dict.fromkeys(self.constexprs, "constexpr")}

    def function(self) -> Any:
        """The ``@triton.jit`` / ``@gluon.jit`` function (imports triton)."""
        module, name = self.fn.split(":")
        return getattr(import_module(f"{PACKAGE}.{module}"), name)

    @property
    def constexpr_values(self) -> dict[str, Any]:
        """The constexprs, with Gluon layouts built from their ``module:name`` strings."""
        out = {}
        for k, v in self.constexprs.items():
            if isinstance(v, str) and v.startswith("@"):
                module, name = v[1:].split(":")
                v = getattr(import_module(f"{PACKAGE}.{module}"), name)
            out[k] = v
        return out
