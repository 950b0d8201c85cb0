"""The kernels under a Triton cache root or dump root, found without reading their modules.

Triton keeps each compile in a folder of its own: ``$TRITON_CACHE_DIR`` (default
``~/.triton/cache``) and ``$TRITON_DUMP_DIR`` (``TRITON_KERNEL_DUMP=1``) hold one hash folder
per compile, each with ``NAME.ttgir``, ``NAME.amdgcn``, ``NAME.json`` and the other stages.
``find_kernels(root)`` walks ``root`` (at most :data:`MAX_DEPTH` folders deep and
:data:`MAX_FOLDERS` folders in all, each folder once, so a symlink loop ends) and returns a
`KernelIndex`: one `KernelEntry` per ``*.ttgir`` (or post-allocation ``*.post.mlir``) stem,
with its folder, warps, LDS bytes and target from ``NAME.json`` (or the module's attributes),
and the pipeline stages and the compile's hash from ``NAME.json``: two compiles of one kernel
(other constexprs, other ``num_stages``) differ in them.

>>> import tempfile, shutil
>>> root = Path(tempfile.mkdtemp())
>>> _ = shutil.copytree("examples/kernels/matmul", root / "JZ4Q")
>>> index = find_kernels(root)
>>> [(e.name, e.folder.name, e.warps, e.lds_bytes, e.target, e.stages) for e in index.entries]
[('matmul', 'JZ4Q', 4, 71632, 'hip:gfx1250', 2)]
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wgpsim.errors import ModuleError, closest

__all__ = ["MAX_DEPTH", "MAX_FOLDERS", "KernelEntry", "KernelIndex", "find_kernels", "holds_kernel"]

#: How deep below the root a kernel folder may sit (a cache root's hash folders are at 1;
#: ``~/.triton`` itself puts them at 2).
MAX_DEPTH = 4
#: How many folders one walk looks into before it stops (a cache of that many compiles is
#: listed in part, and the listing says so).
MAX_FOLDERS = 20_000
#: How many characters of a compile's hash (``NAME.json``) the listing shows: enough to tell
#: two compiles of one kernel apart (other constexprs, other options).
HASH_SHOWN = 10
#: The suffixes of a kernel's module in a folder (Triton's cache, wgpsim's own compiles).
MODULE_SUFFIXES = (".ttgir", ".post.mlir", ".alloc.mlir")


@dataclass(frozen=True)
class KernelEntry:
    """One compiled kernel: its name (the files' stem) and folder; what ``NAME.json`` says
    (``None`` where it says nothing)."""

    name: str
    folder: Path
    warps: int | None = None
    lds_bytes: int | None = None
    target: str | None = None
    stages: int | None = None
    hash: str | None = None

    def row(self, root: Path) -> dict[str, Any]:
        """The listing's row: the folder relative to ``root``."""
        try:
            folder = str(self.folder.relative_to(root)) or "."
        except ValueError:  # reached through a symlink that leads out of the root
            folder = str(self.folder)
        return {
            "name": self.name,
            "folder": folder,
            "warps": self.warps,
            "lds_bytes": self.lds_bytes,
            "target": self.target,
            "stages": self.stages,
            "hash": self.hash[:HASH_SHOWN] if self.hash else None,
        }


@dataclass(frozen=True)
class KernelIndex:
    """The kernels found under ``root``; ``truncated`` when the walk stopped at a cap."""

    root: Path
    entries: tuple[KernelEntry, ...]
    truncated: bool = False

    def matching(self, name: str | None) -> tuple[KernelEntry, ...]:
        """The entries named ``name`` (all of them for ``None``); none is a `ModuleError`
        naming the kernels there are."""
        if not self.entries:
            raise ModuleError(
                f"{self.root}: no kernel in this directory or below it (no *.ttgir: expected a "
                "Triton cache entry, a TRITON_CACHE_DIR or TRITON_DUMP_DIR root)"
            )
        found = tuple(e for e in self.entries if name is None or e.name == name)
        if not found:
            names = sorted({e.name for e in self.entries})
            guess = closest(str(name), names)
            shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            raise ModuleError(
                f"{self.root}: no kernel named {name!r}"
                + (f" (did you mean {guess!r}?)" if guess else "")
                + f"; kernels here: {shown}"
            )
        return found

    def one(self, name: str | None) -> KernelEntry:
        """The one entry named ``name`` (the only one for ``None``); several are a
        `ModuleError` naming them and how to pick."""
        found = self.matching(name)
        if len(found) > 1:
            shown = ", ".join(f"{e.name} in {e.row(self.root)['folder']}" for e in found[:6])
            more = ", ..." if len(found) > 6 else ""
            how = "pass its folder" if name is not None else "pick one with --name (or its folder)"
            raise ModuleError(f"{self.root}: {len(found)} kernels ({shown}{more}): {how}")
        return found[0]


def holds_kernel(folder: Path) -> bool:
    """Whether ``folder`` itself holds a kernel's module (a cache entry, not a root)."""
    try:
        return any(p.name.endswith(MODULE_SUFFIXES) and p.is_file() for p in folder.iterdir())
    except OSError:
        return False


def find_kernels(
    root: str | Path, *, max_depth: int = MAX_DEPTH, max_folders: int = MAX_FOLDERS
) -> KernelIndex:
    """The kernels in ``root`` and the folders below it (breadth first, each folder once)."""
    root = Path(root)
    seen: set[tuple[int, int]] = set()
    queue: deque[tuple[Path, int]] = deque([(root, 0)])
    entries: list[KernelEntry] = []
    visited = 0
    truncated = False
    while queue:
        folder, depth = queue.popleft()
        try:
            stat = folder.stat()
        except OSError:
            continue
        if (stat.st_dev, stat.st_ino) in seen:  # a symlink back up: a loop, or a second route
            continue
        seen.add((stat.st_dev, stat.st_ino))
        if visited == max_folders:
            truncated = True
            break
        visited += 1
        stems, children = _scan(folder)
        entries += (_entry(folder, stem) for stem in stems)
        if depth < max_depth:
            queue.extend((child, depth + 1) for child in children)
    entries.sort(key=lambda e: (e.name, str(e.folder)))
    return KernelIndex(root, tuple(entries), truncated)


def _scan(folder: Path) -> tuple[list[str], list[Path]]:
    """The kernel stems in ``folder`` and its sub-folders (symlinks to folders included)."""
    stems: dict[str, None] = {}
    children = []
    try:
        with os.scandir(folder) as it:
            for item in it:
                module = item.name.endswith(MODULE_SUFFIXES) and not item.name.startswith(".")
                try:
                    if item.is_dir():
                        children.append(Path(item.path))
                    elif module:
                        stems[item.name.split(".")[0]] = None
                except OSError:  # a symlink loop, a file gone meanwhile
                    if module:  # listed, so that reading it names what is wrong with it
                        stems[item.name.split(".")[0]] = None
    except OSError:  # no permission: a folder we cannot read holds nothing we can report
        return [], []
    return list(stems), sorted(children)


_WARPS = re.compile(r'"ttg\.num-warps"\s*=\s*(\d+)')
_TARGET = re.compile(r'ttg\.target\s*=\s*"([^"]+)"')
_SHARED = re.compile(r'"?ttg\.shared"?\s*=\s*(\d+)')


def _entry(folder: Path, stem: str) -> KernelEntry:
    """The entry of ``stem`` in ``folder``: ``NAME.json`` first, the module's attributes for
    what it lacks; a file that cannot be read or parsed leaves its fields empty."""
    meta = _metadata(folder / f"{stem}.json")
    warps = meta.get("num_warps")
    shared = meta.get("shared")
    target = meta.get("target")
    if isinstance(target, dict):  # Triton's cache: {"backend": "hip", "arch": "gfx1250", ...}
        target = f"{target.get('backend', '?')}:{target.get('arch', '?')}"
    if not isinstance(warps, int) or not isinstance(target, str) or not isinstance(shared, int):
        head = _module_text(folder, stem)
        warps = warps if isinstance(warps, int) else _first_int(_WARPS, head)
        target = target if isinstance(target, str) else _first(_TARGET, head)
        shared = shared if isinstance(shared, int) else _first_int(_SHARED, head)
    stages, digest = meta.get("num_stages"), meta.get("hash")
    stages = stages if isinstance(stages, int) else None
    digest = digest if isinstance(digest, str) else None
    return KernelEntry(stem, folder, warps, shared, target, stages, digest)


def _metadata(path: Path) -> dict[str, Any]:
    try:
        if path.stat().st_size > 1 << 20:
            return {}
        data = json.loads(path.read_text(errors="replace"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _module_text(folder: Path, stem: str) -> str:
    """The first 64 KiB of the kernel's post-allocation module, else of its TTGIR (the module
    attributes sit near the top, after the layout aliases)."""
    for suffix in (".post.mlir", ".alloc.mlir", ".ttgir"):
        try:
            with (folder / f"{stem}{suffix}").open("rb") as fh:
                return fh.read(1 << 16).decode(errors="replace")
        except OSError:
            continue
    return ""


def _first(pattern: re.Pattern, text: str) -> str | None:
    match = pattern.search(text)
    return match.group(1) if match else None


def _first_int(pattern: re.Pattern, text: str) -> int | None:
    value = _first(pattern, text)
    return int(value) if value is not None and len(value) < 12 else None
