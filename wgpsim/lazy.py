"""Package attributes imported on first use (PEP 562), so that importing a package, or one light
module of it, does not import everything the package offers: ``import wgpsim`` and ``wgpsim
--help`` stay fast (issue 18).

A package lists which module holds each name and hands the two functions to Python:

>>> import types
>>> pkg = types.ModuleType("pkg")
>>> pkg.__getattr__, pkg.__dir__ = exports("pkg", {"dumps": "json", "sqrt": "math"})
>>> "json" in pkg.__dir__(), pkg.sqrt(9.0)
(False, 3.0)
>>> pkg.loads
Traceback (most recent call last):
...
AttributeError: module 'pkg' has no attribute 'loads'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module


def exports(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of module ``package`` for the names of ``where``
    (name -> the module that holds it)."""

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(where)

    return __getattr__, __dir__
