"""What ``wgpsim kernel PATH`` reads: a kernel file or cache entry as given, the one kernel
under a cache or dump root (``--name`` picks it; several are listed), or a fresh compile of
``FILE.py:FUNCTION``. A ``.py`` without ``:FUNCTION`` is one line naming the command to use.

A root holding several kernels and no ``--name`` (or a ``--name`` that several folders hold:
the same kernel compiled with other constexprs) prints the list and exits 0: the list is the
answer to "what is in my cache", and each row's folder is a path ``wgpsim kernel`` takes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wgpsim.errors import ModuleError
from wgpsim.packaged import target_names, triton_targets

__all__ = ["kernel_source", "format_listing"]


def kernel_source(args: argparse.Namespace) -> tuple[Path, str | None] | None:
    """(path, name) for ``read_kernel``; ``None`` when a listing was printed instead."""
    from wgpsim.cli._kernel.compile_args import compile_target, given_compile_flags, next_command
    from wgpsim.frontend.cache_index import find_kernels, holds_kernel
    from wgpsim.frontend.compile_file import is_target

    path: Path = args.path
    text = str(path)
    if not path.exists() and is_target(text):
        name, folder, _ = compile_target(args, text)
        print(f"compiled {name} into {folder} (next time: {next_command(folder)})", file=sys.stderr)
        return folder, name
    flags = given_compile_flags(args)
    if flags:
        raise ModuleError(f"{', '.join(flags)}: only with FILE.py:FUNCTION (a kernel to compile)")
    if path.suffix == ".py" and path.is_file():
        raise ModuleError(
            f"{path}: Python source, not a compiled kernel: compile a function of it with "
            f"'wgpsim kernel {path}:FUNCTION --signature ... --constexpr ...' "
            f"(or 'wgpsim compile {path}:FUNCTION ...'; see wgpsim compile --help)"
        )
    if path.suffix in (".yaml", ".yml") and path.is_file():
        raise ModuleError(
            f"{path}: a YAML file, not a compiled kernel (an experiment config runs with "
            "'wgpsim run CONFIG', a hardware file goes to --hw); wgpsim kernel reads *.ttgir, "
            "a cache entry or root, *.ndjson or FILE.py:FUNCTION"
        )
    if not path.is_dir() or holds_kernel(path):
        return path, args.name
    index = find_kernels(path)
    found = index.matching(args.name)
    if len(found) == 1 and not index.truncated:
        entry = found[0]
        if not args.json:
            print(f"{entry.name} in {entry.folder} (the one kernel{_named(args.name)} in {path})")
        if entry.target is not None and entry.target not in triton_targets():
            print(
                f"wgpsim: note: {entry.name} was compiled for {entry.target}; wgpsim models "
                f"{target_names()} (wgpsim compile FILE.py:FUNCTION --target NAME compiles for "
                "one of them on the CPU)",
                file=sys.stderr,
            )
        return entry.folder, entry.name
    rows = [e.row(index.root) for e in found]
    if args.json:
        from wgpsim.cli._common import print_json

        print_json({"root": str(path), "kernels": rows, "truncated": index.truncated})
    else:
        print(format_listing(path, rows, args.name, index.truncated))
    return None


def _named(name: str | None) -> str:
    return f" named {name}" if name else ""


def format_listing(root: Path, rows: list[dict], name: str | None, truncated: bool) -> str:
    """The kernels as a table, then how to pick one.

    >>> rows = [{"name": "add", "folder": "X1", "warps": 4, "lds_bytes": 0,
    ...          "target": "hip:gfx1250", "stages": 2, "hash": "d752296391"},
    ...         {"name": "matmul", "folder": "Q7", "warps": 8, "lds_bytes": None, "target": None,
    ...          "stages": None, "hash": None}]
    >>> print(format_listing(Path("cache"), rows, None, False))
    cache: 2 kernels
    name    folder  warps  stages  LDS bytes  target       hash
    add     X1      4      2       0          hip:gfx1250  d752296391
    matmul  Q7      8      -       -          -            -
    pick one: wgpsim kernel cache --name NAME (or wgpsim kernel cache/FOLDER)
    """
    head = ("name", "folder", "warps", "stages", "LDS bytes", "target", "hash")
    keys = ("name", "folder", "warps", "stages", "lds_bytes", "target", "hash")
    cells = [tuple("-" if r[k] is None else str(r[k]) for k in keys) for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
    lines = [f"{root}: {len(rows)} kernels{_named(name)}"]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
              for r in (head, *cells)]  # fmt: skip
    if truncated:
        lines.append(
            "(the walk stopped at its cap on folders: some kernels are not listed; "
            "point at a smaller directory)"
        )
    if name is None:
        lines.append(f"pick one: wgpsim kernel {root} --name NAME (or wgpsim kernel {root}/FOLDER)")
    else:
        lines.append(f"pick one by its folder: wgpsim kernel {root}/FOLDER")
    return "\n".join(lines)
