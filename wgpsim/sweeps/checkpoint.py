"""The checkpoint of a run's sweeps: an append-only JSON Lines file of finished points, so an
interrupted run resumes where it stopped (``wgpsim run --resume``).

:func:`~wgpsim.sweeps.executor.run_points` writes a line per finished point and, with
``resume``, reads back the points already there:

>>> import tempfile, pathlib
>>> c = Checkpoint(pathlib.Path(tempfile.mkdtemp()) / "checkpoint.jsonl", resume=True)
>>> c.append("demo", "fp", [('[-3]', 3), ('[1]', 1)])
[3, 1]
>>> c.load("demo", "fp"), c.load("other", "fp")
({'[-3]': 3, '[1]': 1}, {})
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from wgpsim.errors import ConfigError
from wgpsim.files import atomic_write

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows: no directory lock)
    fcntl = None


class Checkpoint:
    """An append-only JSON Lines file of finished points, one line each, flushed as they finish.

    A line is ``{"sweep": desc, "fingerprint": ..., "key": point_key(point), "result": ...}``.
    Nothing in the file is lost before a run succeeds: lines already there are kept (a run that
    fails, on a bad config or after its sweep, leaves the file as it found it plus the points it
    finished), only reused with ``resume``, and :meth:`finish` (called once the run's results are
    written) rewrites the file atomically with just the lines of this run. A line cut short by an
    interruption is ignored. Results must be JSON values (a row dict of numbers and strings);
    what a sweep returns is what reading its line gives back, so a resumed run's tables equal an
    uninterrupted run's.

    With ``lock`` the first sweep also takes an exclusive lock on the directory's
    ``.checkpoint.jsonl.lock`` (released and removed by :meth:`close`): a second run into the same directory
    is refused with a ConfigError instead of interleaving its lines with the first one's.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        resume: bool = False,
        lock: bool = False,
        lock_path: Path | None = None,
        seed: Path | None = None,
    ):
        self.path = Path(path)
        self.resume = resume
        self.lock = lock
        self._lock_file = lock_path
        self.seed = seed
        self.prepare: Callable[[], object] | None = None
        self._started = False
        self._used: set[tuple[str, str, str]] = set()
        self._lock_fd: int | None = None

    def _start(self) -> None:
        """Under the lock: ``prepare`` the directory (a run's stage), then open the file, a copy
        of ``seed`` (the last finished run's checkpoint) if there is none yet."""
        if self._started:
            return
        if self.lock:
            self.acquire()
        if self.prepare is not None:
            self.prepare()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._started = True
        if not self.path.exists():
            seed = self.seed if self.seed is not None and self.seed.is_file() else None
            atomic_write(self.path, lambda tmp: shutil.copyfile(seed, tmp) if seed else None)
            if not seed:
                return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):  # an interrupted write: end its line
            with self.path.open("ab") as f:
                f.write(b"\n")

    def acquire(self) -> None:
        """Take the directory's lock (idempotent); a ConfigError if another run holds it."""
        if self._lock_fd is not None or fcntl is None:
            return
        self._lock_path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
                os.close(fd)
                raise ConfigError(
                    f"{self.path.parent}: another wgpsim run (pid {holder}) is writing its "
                    "results here; wait for it to finish or give another --out"
                ) from None
            try:  # the holder before us may have removed the file as we opened it: retry
                if os.stat(self._lock_path).st_ino == os.fstat(fd).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    @property
    def started(self) -> bool:
        """Whether a sweep (or :meth:`start`) opened the file: this run holds the directory."""
        return self._started

    def start(self) -> None:
        """Take the lock and open the file now (a run with no sweep, before it writes)."""
        self._start()

    @property
    def _lock_path(self) -> Path:
        return self._lock_file or self.path.with_name(f".{self.path.name}.lock")

    def close(self) -> None:
        """Release the lock, if held, and remove its file."""
        if self._lock_fd is not None:
            self._lock_path.unlink(missing_ok=True)
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None

    def _entries(self) -> Iterator[dict[str, Any]]:
        with self.path.open() as f:
            for line in f:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short
                if isinstance(entry, dict) and {"sweep", "fingerprint", "key"} <= entry.keys():
                    yield entry

    def load(self, sweep: str, fp: str) -> dict[str, Any]:
        """Results already in the file for ``sweep`` with fingerprint ``fp``, by point key
        (none without ``resume``)."""
        self._start()
        if not self.resume:
            return {}
        found: dict[str, Any] = {}
        for entry in self._entries():
            if entry["sweep"] == sweep and entry["fingerprint"] == fp:
                found[entry["key"]] = entry.get("result")
        self._used.update((sweep, fp, key) for key in found)
        return found

    def append(self, sweep: str, fp: str, items: Sequence[tuple[str, Any]]) -> list[Any]:
        """Write one line per ``(key, result)`` and flush; return the results as read back."""
        self._start()
        lines = []
        for key, result in items:
            entry = {"sweep": sweep, "fingerprint": fp, "key": key, "result": result}
            try:
                lines.append(json.dumps(entry, default=_plain))
            except TypeError as err:
                raise TypeError(
                    f"sweep {sweep!r}: result of point {key} cannot go in the checkpoint ({err}); "
                    "return a row of numbers and strings, or map(..., save=False)"
                ) from None
        with self.path.open("a") as f:
            f.write("".join(line + "\n" for line in lines))
            f.flush()
            os.fsync(f.fileno())
        self._used.update((sweep, fp, key) for key, _ in items)
        return [json.loads(line)["result"] for line in lines]

    def finish(self) -> None:
        """The run succeeded: keep only its own lines (one per point), atomically."""
        if not self._started:
            return
        kept: dict[tuple[str, str, str], str] = {}
        for entry in self._entries():
            ident = (entry["sweep"], entry["fingerprint"], entry["key"])
            if ident in self._used:
                kept[ident] = json.dumps(entry)
        atomic_write(
            self.path, lambda tmp: tmp.write_text("".join(v + "\n" for v in kept.values()))
        )


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"{type(value).__name__} is not a JSON value")


__all__ = ["Checkpoint"]
