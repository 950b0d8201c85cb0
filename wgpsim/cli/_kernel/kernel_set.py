"""The kernels ``kernel --all`` and ``diff`` read: one kernel, or every kernel of a cache root.

A path is one kernel when it is a file or a folder that holds a kernel's module itself (a
cache entry); any other folder is a root whose kernels are listed as ``(name, folder)``
(`entries`). Reading many kernels shows a tqdm bar on stderr (`progress`) when there are more
than `BAR_FROM`; one kernel that cannot be read is its one-line reason (`figures_or_reason`),
never the end of the run.
"""

from __future__ import annotations

import sys
from dataclasses import replace
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


class HardwarePicker:
    """The hardware file of each kernel read: its ``ttg.target``'s (as a one-kernel report
    picks it), or the one ``--hw``/``--target`` names for all; ``--set`` applied to each. With
    ``--hw``/``--target``, a kernel compiled for another chip is remembered in ``foreign`` as
    (kernel, its target), for a note.

    >>> import argparse
    >>> pick = HardwarePicker(argparse.Namespace(hw=None, overrides=[]))
    >>> pick("k", "hip:gfx942").name, pick("k", "hip:gfx1250").name, pick.foreign
    ('gfx942', 'mi450', [])
    """

    def __init__(self, args) -> None:
        self.args = args
        self.foreign: list[tuple[str, str]] = []
        self._loaded: dict[str | None, object] = {}

    def __call__(self, kernel: str, target: str | None):
        from wgpsim.cli._common import hardware_from_args

        key = None if self.args.hw is not None else target
        if key not in self._loaded:
            self._loaded[key] = hardware_from_args(self.args, target)
        hw = self._loaded[key]
        if key is None and target and hw.target and target != hw.target:
            self.foreign.append((kernel, target))
        return hw

    def note(self) -> str | None:
        """One line naming the kernels simulated on another target's hardware file."""
        if not self.foreign:
            return None
        hw = self._loaded[None]
        kernels = ", ".join(f"{k} ({t})" for k, t in self.foreign)
        return (
            f"note: simulated on {hw.name}'s hardware file ({hw.target}, --hw/--target) though "
            f"compiled for another chip: {kernels}"
        )


def figures_or_reason(
    where: Path, name: str | None, pick, engine: str, loop: bool = True, suggest: bool = True
):
    """`KernelFigures` of the kernel ``name`` at ``where`` on the hardware file ``pick`` (a
    `HardwarePicker`) gives for its target, or the one-line reason it cannot be read."""
    from wgpsim.frontend.sources import read_kernel
    from wgpsim.kernel.figures import kernel_figures

    try:
        kernel = read_kernel(where, name)
        hw = pick(kernel.name or str(where), kernel.target)
        figures = kernel_figures(kernel, hw, engine=engine, loop=loop, suggest=suggest)
        return replace(figures, path=str(where))
    except WgpsimError as err:
        return "; ".join(m.replace("\n", " ") for m in err.messages)
    except OSError as err:
        return f"{err.filename or where}: {err.strerror or err}"
