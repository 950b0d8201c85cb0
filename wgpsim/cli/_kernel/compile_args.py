"""The compile flags that ``wgpsim compile`` and ``wgpsim kernel FILE.py:FUNCTION`` share, and
running the compile (`wgpsim.frontend.compile_file`) with a line on stderr while it works. The
chip is the one ``--target NAME`` (or ``--hw FILE``'s ``target:`` field) names, else MI450's
gfx1250 (`wgpsim.frontend.compile.resolve_target`)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from wgpsim.errors import ModuleError

if TYPE_CHECKING:
    from wgpsim.frontend.compile import CompileTarget

FLAGS = ("warps", "stages", "constexpr", "signature", "out")
#: The hardware file a compile without ``--target`` is for.
DEFAULT_TARGET = "mi450"


def add_compile_args(parser: argparse.ArgumentParser, title: str | None = None) -> None:
    """``--warps``, ``--stages``, ``--constexpr NAME=VALUE`` (repeatable), ``--signature``,
    ``--out DIR`` (the cache root)."""
    group = parser.add_argument_group(title) if title else parser
    group.add_argument("--warps", type=int, help="num_warps (default 4)")
    group.add_argument("--stages", type=int, help="num_stages (default: Triton's)")
    group.add_argument(
        "--constexpr",
        action="append",
        metavar="NAME=VALUE",
        help="a constexpr argument's value, e.g. BLOCK_M=128 (repeat for each)",
    )
    group.add_argument(
        "--signature",
        metavar="NAME=TYPE,...",
        help="the runtime arguments' Triton types, e.g. 'a_ptr=*fp16,b_ptr=*fp16,M=i32'",
    )
    group.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="cache root for the entry (default: $TRITON_CACHE_DIR, else ~/.triton/cache)",
    )


def given_compile_flags(args: argparse.Namespace) -> list[str]:
    """The compile flags given on the command line (``--warps``, ...)."""
    return [f"--{f}" for f in FLAGS if getattr(args, f, None) not in (None, [])]


def compile_chip(args: argparse.Namespace) -> CompileTarget:
    """The chip to compile for: ``--target NAME``'s hardware file (``args.hw``, its path) or
    ``--hw FILE``'s ``target:`` field, else `DEFAULT_TARGET`'s."""
    from wgpsim.frontend.compile import resolve_target

    hw = getattr(args, "hw", None)
    if hw is None:
        return resolve_target(DEFAULT_TARGET)
    from wgpsim.hw.config import load_hardware

    return resolve_target(load_hardware(hw).target or DEFAULT_TARGET)


def compile_target(args: argparse.Namespace, target: str) -> tuple[str, Path, Path]:
    """Compile ``FILE.py:FUNCTION`` as the flags say; (kernel name, entry folder, cache root).
    Says on stderr what it is doing (a first compile takes seconds to a minute)."""
    from wgpsim.frontend.compile_file import (
        TIMEOUT,
        CompileRequest,
        compile_file,
        default_cache_dir,
        parse_constexprs,
        parse_signature,
        parse_target,
    )

    source, function = parse_target(target)
    chip = compile_chip(args)
    warps = 4 if args.warps is None else args.warps
    if not 1 <= warps <= 32 or warps & (warps - 1):
        raise ModuleError(f"--warps {warps}: a power of two in 1..32")
    if args.stages is not None and not 1 <= args.stages <= 8:
        raise ModuleError(f"--stages {args.stages}: valid 1..8")
    cache = args.out if args.out is not None else default_cache_dir()
    if cache.exists() and not cache.is_dir():
        raise ModuleError(f"--out {cache}: is a file; give a directory (a cache root)")
    request = CompileRequest(
        source,
        function,
        parse_signature(args.signature),
        parse_constexprs(args.constexpr),
        warps,
        args.stages,
        cache,
        chip.name,
    )
    print(
        f"compiling {target} for {chip.arch} on the CPU (Triton, in a child process; "
        f"seconds for a small kernel, up to a minute for a large GEMM; stops after {TIMEOUT} s)",
        file=sys.stderr,
        flush=True,
    )
    name, folder = compile_file(request)
    return name, folder, cache


def next_command(folder: Path) -> str:
    """The command that reports the entry, quoted for a shell."""
    return f"wgpsim kernel {shlex.quote(str(folder))}"
