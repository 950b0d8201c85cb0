"""The kernels ``kernel --all`` and ``diff`` read: one kernel, or every kernel of a cache root.

A path is one kernel when it is a file or a folder that holds a kernel's module itself (a
cache entry); any other folder is a root whose kernels are listed as ``(name, folder)``
(`entries`). Reading many kernels shows a tqdm bar on stderr (`progress`) when there are more
than `BAR_FROM`; one kernel that cannot be read is its one-line reason (`figures_or_reason`),
never the end of the run.
"""

from __future__ import annotations

import sys
from pathlib import Path

from wgpsim.errors import WgpsimError

BAR_FROM = 4
"""More kernels than this show a progress bar."""


def holds_kernel(path: Path) -> bool:
    """Whether ``path`` is one kernel: a file, or a folder with a module of its own."""
    from wgpsim.frontend.cache_index import holds_kernel as folder_holds_kernel

    return path.is_file() or folder_holds_kernel(path)


def entries(root: Path) -> list[tuple[str, Path]]:
    """(kernel name, folder) of every kernel in ``root`` and below, by name then folder
    (`wgpsim.frontend.cache_index.find_kernels`); none is a `ModuleError` saying so."""
    from wgpsim.frontend.cache_index import find_kernels

    index = find_kernels(root)
    index.matching(None)  # raises the error naming what a root holds when it holds nothing
    if index.truncated:
        print(f"wgpsim: note: {root}: the walk stopped at a cap; some kernels are left out",
              file=sys.stderr)  # fmt: skip
    return [(e.name, e.folder) for e in index.entries]


def progress(items, total: int, desc: str):
    """``items`` with a progress bar on stderr when there are more than `BAR_FROM`."""
    if total <= BAR_FROM:
        return items
    from tqdm import tqdm

    return tqdm(items, total=total, desc=desc, file=sys.stderr, leave=False)


def figures_or_reason(
    where: Path, name: str | None, hw, engine: str, loop: bool = True, suggest: bool = True
):
    """`KernelFigures` of the kernel ``name`` at ``where``, or the one-line reason it cannot
    be read."""
    from wgpsim.kernel.figures import kernel_figures

    try:
        return kernel_figures(where, hw, engine=engine, name=name, loop=loop, suggest=suggest)
    except WgpsimError as err:
        return "; ".join(m.replace("\n", " ") for m in err.messages)
    except OSError as err:
        return f"{err.filename or where}: {err.strerror or err}"
