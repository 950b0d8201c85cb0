"""Optional dependencies: each serves one path and comes with an extra of the package.

``require(module, extra, purpose)`` imports ``module``, or raises :class:`MissingExtraError`
naming what needed it and the install command (the CLI prints it as one line, exit 2):

>>> require("json", "parquet", "reading Parquet").__name__
'json'
>>> require("not_a_module_wgpsim", "parquet", "reading Parquet")
Traceback (most recent call last):
...
wgpsim.extras.MissingExtraError: reading Parquet needs not_a_module_wgpsim: pip install 'wgpsim[parquet]'

The extras (``pyproject.toml``): ``parquet`` (pyarrow: Parquet traces and tables), ``dask``
(dask[distributed]: ``--scheduler`` and the Dask executor), ``stats`` (scipy: confidence
levels other than 95 %); ``dev`` holds them all.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from wgpsim.errors import WgpsimError


class MissingExtraError(WgpsimError, ImportError):
    """An optional dependency that is not installed, with the extra that installs it."""


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """``module`` imported, or a MissingExtraError: "<purpose> needs <package>: pip install ..."."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise MissingExtraError(
            f"{purpose} needs {package}: pip install 'wgpsim[{extra}]'"
        ) from None
