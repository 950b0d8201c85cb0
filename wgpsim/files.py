"""Writing files safely: every file wgpsim writes goes through :func:`atomic_write`.

A writer fills a temporary file beside the target, which is then renamed onto it, so an
interrupted run never leaves a half-written trace, table or figure behind.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> atomic_write(d / "hello.txt", lambda tmp: tmp.write_text("hi")).read_text()
'hi'
"""

from __future__ import annotations

import errno
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: str | Path, writer: Callable[[Path], object]) -> Path:
    """Call ``writer(tmp_path)``, then rename the temporary file onto ``path``; return ``path``.

    The directory of ``path`` must exist (a typo in it is an error, not a new directory):
    callers that write into an output directory create it first.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no such directory", str(path.parent))
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
