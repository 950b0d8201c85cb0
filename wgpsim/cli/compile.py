"""``wgpsim compile``: compile FILE.py:FUNCTION on the CPU into a Triton cache entry,
for MI450 (gfx1250) or the chip --target names (gfx950, gfx942).

::

    wgpsim compile my_gemm.py:matmul --warps 4 --stages 2 \\
        --constexpr BLOCK_M=128 --constexpr BLOCK_N=128 --constexpr BLOCK_K=64 \\
        --signature "a_ptr=*fp16,b_ptr=*fp16,c_ptr=*fp16,M=i32,N=i32,K=i32"

needs no GPU (the triton extra: Triton 3.9.0). ``--target gfx950`` (MI350X/MI355X) or
``--target gfx942`` (MI300X/MI325X) compiles for that chip (wave64) instead of the default
``mi450`` (gfx1250, wave32): Triton's ``GPUTarget`` is the hardware file's ``target:`` and
``wgp.warp_size``, and ``wgpsim kernel`` then reports it with that file. Triton writes its cache entry (a hash folder with
``NAME.ttgir``, ``NAME.amdgcn``, ``NAME.json``, ...) under ``--out DIR``, else
``$TRITON_CACHE_DIR``, else Triton's default ``~/.triton/cache``; wgpsim adds ``NAME.post.mlir``
(the module after Triton's ``allocate-shared-memory``: every buffer's offset). The command
prints the entry's folder and the ``wgpsim kernel`` command that reports it;
``wgpsim kernel my_gemm.py:matmul`` with the same flags does both. ``--signature`` gives every
runtime argument's Triton type (``*fp16``, ``*bf16``, ``*fp32``, ``i32``, ``i64``, ``fp32``);
each ``--constexpr NAME=VALUE`` one ``tl.constexpr`` argument (one with a default may be left
out). The compile runs in a child process: a Triton abort is one line and exit code 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from wgpsim.cli._common import add_target_option, print_json
from wgpsim.cli._kernel.compile_args import (
    add_compile_args,
    compile_chip,
    compile_target,
    next_command,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compile",
        help="compile FILE.py:FUNCTION on the CPU (gfx1250, or --target's) into a Triton cache "
        "entry",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("::", 1)[1].split("\n\n", 2)[1],
    )
    parser.add_argument("target", metavar="FILE.py:FUNCTION", help="the @triton.jit function")
    add_compile_args(parser)
    add_target_option(parser, "the chip to compile for: {choices} (default mi450: gfx1250)")
    parser.add_argument("--json", action="store_true", help="print name, folder, next as JSON")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    name, folder, cache = compile_target(args, args.target)
    folder, cache = Path(folder).absolute(), Path(cache).absolute()  # usable from any directory
    command = next_command(folder)
    if args.json:
        print_json({"name": name, "folder": str(folder), "cache_dir": str(cache), "next": command})
        return 0
    files = sorted(p.name for p in folder.iterdir() if p.name.startswith(f"{name}."))
    print(f"compiled {name} for {compile_chip(args).arch}: {folder}")
    print(f"  {', '.join(files)}")
    if args.out is None:
        print(f"  (cache root {cache}: $TRITON_CACHE_DIR or Triton's default; --out DIR moves it)")
    print(f"next: {command}")
    return 0
