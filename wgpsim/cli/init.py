"""``wgpsim init [DIR]``: write a starting set of configs and traces to edit.

::

    wgpsim init my_study && cd my_study
    wgpsim run lds_bandwidth.yaml             # the AMD blog's microbenchmark, 323 / 195 cycles
    wgpsim run gemm_128x128.yaml              # the blog's GEMM layout candidates
    wgpsim replay traces/two_pairs_conflict.jsonl

writes the example experiment configs shipped in the package (``lds_bandwidth.yaml``,
``lds_drift.yaml``, ``gemm_128x128.yaml``, ...), a copy of the hardware file they name
(``mi450.yaml``: edit it, or leave it out and the configs use the packaged one) and the example
traces (``traces/``). Existing files are never overwritten: a file already there is an error
naming it (``--force`` replaces them). The files are written as a whole (``wgpsim.files.staged``):
all of them, or (a full disk, a directory in the way) none.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from wgpsim.errors import ConfigError
from wgpsim.files import staged
from wgpsim.packaged import example_configs, example_traces, hardware_path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "init",
        help="write example configs, the hardware file and example traces into DIR",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
    )
    parser.add_argument(
        "dir", nargs="?", type=_directory, default=Path("."), help="directory (default: here)"
    )
    parser.add_argument("--force", action="store_true", help="replace files that exist")
    parser.set_defaults(handler=handle)


def starting_files(directory: Path) -> dict[Path, Path]:
    """Target path -> packaged source, for everything ``init`` writes into ``directory``."""
    files = {directory / p.name: p for p in example_configs()}
    files[directory / "mi450.yaml"] = hardware_path()
    files.update({directory / "traces" / p.name: p for p in example_traces()})
    return files


def _directory(text: str) -> Path:
    """DIR as given; empty text (``wgpsim init "$DIR"`` with DIR unset) is refused rather than
    read as the current directory, which ``Path("")`` would be."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty text; give a directory (. for here)")
    return Path(text)


def handle(args: argparse.Namespace) -> int:
    directory: Path = args.dir
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"{directory}: is a file; give a directory to write the examples into")
    files = starting_files(directory)
    existing = [str(p) for p in files if p.exists()]
    if existing and not args.force:
        raise ConfigError(
            f"{existing[0]}: already exists ({len(existing)} of the {len(files)} files do); "
            "use --force to replace them or give another directory"
        )
    with staged(directory) as stage:  # all of them or none (a full disk, a directory in the way)
        for target, source in files.items():
            copy = stage / target.relative_to(directory)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
    print(f"wrote {len(files)} files into {directory}:")
    for target in files:
        print(f"  {target}")
    print(f"next: cd {directory} && wgpsim run lds_bandwidth.yaml")
    return 0
