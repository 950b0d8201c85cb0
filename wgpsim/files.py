"""Writing files safely: every file wgpsim writes goes through :func:`atomic_write`, and an
output directory of several files is written as a whole (:func:`staged`).

A writer fills a temporary file beside the target, which is then renamed onto it, so an
interrupted run never leaves a half-written trace, table or figure behind. A verb that writes a
directory of files (``run``, ``search --out``, ``init``, ``calibrate probes``) writes them into
the directory's stage, ``DIR/.wgpsim-partial/``, and moves them into ``DIR`` only once every one
of them is written: a run that fails (a full disk, a bad value found late) leaves ``DIR`` as it
was and removes its stage, so the files of two runs never mix.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> atomic_write(d / "hello.txt", lambda tmp: tmp.write_text("hi")).read_text()
'hi'
>>> with staged(d / "kit") as stage:
...     _ = (stage / "a.txt").write_text("a")
>>> sorted(p.name for p in (d / "kit").iterdir())
['a.txt']
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

STAGE = ".wgpsim-partial"
"""The directory inside an output directory where a run's files wait until all are written."""


def atomic_write(path: str | Path, writer: Callable[[Path], object]) -> Path:
    """Call ``writer(tmp_path)``, then rename the temporary file onto ``path``; return ``path``.

    The directory of ``path`` must exist (a typo in it is an error, not a new directory):
    callers that write into an output directory create it first.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no such directory", str(path.parent))
    if path.is_dir():  # named here, not by the temporary file os.replace would name
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", str(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        writer(Path(tmp))
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; results are ordinary files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


_SAFE_STEM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,99}")


def is_safe_stem(name: str) -> bool:
    """Whether ``name`` may become part of a file name as it is: letters, digits and ``_.+-``,
    at most 100 characters, not starting with a dot or a dash (no ``/``, no ``..``, no hidden or
    option-like files).

    >>> is_safe_stem("swizzled_partitioned"), is_safe_stem("a/b"), is_safe_stem("..")
    (True, False, False)
    """
    return isinstance(name, str) and _SAFE_STEM.fullmatch(name) is not None


def prepare_stage(out: Path, keep: tuple[str, ...] = ()) -> Path:
    """``out``'s stage, created (with ``out``) and emptied of what an interrupted run left in
    it except the files named in ``keep`` (a checkpoint to resume from)."""
    stage = Path(out) / STAGE
    stage.mkdir(parents=True, exist_ok=True)
    for entry in stage.iterdir():
        if entry.name in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    return stage


def commit_stage(out: Path) -> None:
    """Move every file of ``out``'s stage to the same place in ``out`` and remove the stage,
    with SIGINT and SIGTERM held until done (renames in one file system: no disk space needed,
    nothing can stop half-way but a kill -9). A target that is a directory, or under a file, is
    refused before anything moves."""
    out = Path(out)
    stage = out / STAGE
    files = sorted(p.relative_to(stage) for p in stage.rglob("*") if not p.is_dir())
    for rel in files:
        target = out / rel
        if target.is_dir() and not target.is_symlink():
            raise IsADirectoryError(errno.EISDIR, "is a directory, not a file", str(target))
        for parent in reversed(target.parents):
            if parent.exists() and not parent.is_dir():  # a file where a directory must be
                raise NotADirectoryError(errno.ENOTDIR, "is a file, not a directory", str(parent))
    with _signals_held():
        for rel in files:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / rel, out / rel)
        shutil.rmtree(stage)


def discard_stage(out: Path, keep: tuple[str, ...] = (), created: bool = False) -> None:
    """Remove ``out``'s stage (all but ``keep``: a checkpoint to resume from); and ``out``
    itself if this run ``created`` it and it is empty."""
    stage = Path(out) / STAGE
    if stage.is_dir():
        prepare_stage(out, keep)
        with contextlib.suppress(OSError):
            stage.rmdir()  # not empty: a kept checkpoint
    if created:
        with contextlib.suppress(OSError):
            Path(out).rmdir()


@contextlib.contextmanager
def staged(out: str | Path) -> Iterator[Path]:
    """Write ``out`` as a whole: yield its (empty) stage to write into, then move the files into
    ``out``; on any error (or Ctrl-C) remove the stage and leave ``out`` as it was."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "is a file, not a directory", str(out))
    created = not out.exists()
    stage = prepare_stage(out)
    try:
        yield stage
        commit_stage(out)
    except BaseException:
        discard_stage(out, created=created)
        raise


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP wait until the block ends (main thread, POSIX only)."""
    held = {signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)}
    if (
        not hasattr(signal, "pthread_sigmask")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
