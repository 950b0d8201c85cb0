"""One executor for the points of a sweep: in this process, a local process pool, or Dask.

A sweep is a module-level function ``fn`` of one point (a small picklable tuple or dict) and the
list of points; :func:`run_points` returns ``[fn(p) for p in points]``, in the order of
``points``, wherever the points ran::

    rows = run_points(partial(measure_point, cfg), [("plain", 1), ("plain", 2)])

Where the points run:

* ``scheduler`` names a Dask scheduler (``tcp://host:8786``): every point goes there, in
  :data:`DASK_CHUNKS_PER_WORKER` chunks per worker, through ``distributed.Client`` (imported
  only then; the ``dask`` extra). A scheduler that does not answer within :data:`CONNECT_TIMEOUT` seconds is a
  one-line :class:`~wgpsim.errors.ConfigError`.
* ``workers=1``: in this process, one point after the other.
* otherwise (``workers=None`` means every core this process may use) the points start in this
  process, and the sweep moves to a pool of ``workers`` processes only when it is big enough to
  pay for one. **The rule:** after at least two points in-process (the first one warms caches),
  if the last point's time times the points left exceeds :data:`INLINE_SECONDS`, the rest goes
  to the pool, in chunks of about :data:`CHUNK_SECONDS` of work each (at most a quarter of each
  worker's share, so the workers stay balanced); otherwise the sweep finishes in-process. A
  dozen 20 ms points never start a process; a thousand do. Pool workers are forked where the
  platform allows it, so they inherit the imported modules and the compiled engine.

``progress`` is a tqdm-like wrapper ``progress(iterable, total=..., desc=...)``: it is advanced
once per finished point. ``checkpoint`` (a :class:`~wgpsim.sweeps.checkpoint.Checkpoint`) records every finished point as
it arrives; with ``Checkpoint(path, resume=True)`` the points already in the file are not run
again. A point that raises stops the sweep: points finished before it (and the chunks running
beside it) are in the checkpoint, then the error is raised.

>>> run_points(abs, [-3, 1, -2], workers=1)
[3, 1, 2]
>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "checkpoint.jsonl"
>>> run_points(abs, [-3, 1], workers=1, checkpoint=Checkpoint(path), desc="demo")
[3, 1]
>>> run_points(abs, [-3, 1, -2], workers=1, checkpoint=Checkpoint(path, resume=True), desc="demo")
[3, 1, 2]
>>> len(path.read_text().splitlines())  # -3 and 1 came from the file; only -2 ran again
3
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import json
import math
import multiprocessing
import os
import pickle
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as futures_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wgpsim.errors import ConfigError
from wgpsim.extras import require
from wgpsim.sweeps.checkpoint import Checkpoint

INLINE_SECONDS = 1.0
"""A sweep whose remaining points would take less than this (at the measured pace) stays in
this process: starting a pool would cost about as much."""

CHUNK_SECONDS = 0.1
"""Target work per pool task: long enough to hide the per-task cost (about a millisecond),
short enough that the workers finish together and the checkpoint and progress bar advance
often."""

DASK_CHUNKS_PER_WORKER = 16
"""Dask gets no probe of the pace: the points are cut into this many tasks per worker, enough
to balance them at a few milliseconds of scheduling each."""

CONNECT_TIMEOUT = 3.0
"""Seconds to wait for a Dask scheduler before giving up with a ConfigError."""

SCHEDULER_ENV = "WGPSIM_SCHEDULER"
"""The environment variable that names a Dask scheduler when ``--scheduler`` is not given.

A scheduler address is taken only from the command line or the environment, never from a
config file: connecting to a scheduler trusts it, because the results it returns are
unpickled in this process (a doctored cluster runs its code here). A config shared by someone
else must not be able to point a run at their cluster."""

_MISSING = object()

Fn = Callable[[Any], Any]
Progress = Callable[..., Iterable]


def default_workers() -> int:
    """Cores this process may run on (its CPU affinity where the OS tells, else the count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def point_key(point: Any) -> str:
    """The stable key of a point in a checkpoint: its canonical JSON.

    >>> point_key(("plain", 32)), point_key({"warps": 4, "layout": "x"})
    ('["plain",32]', '{"layout":"x","warps":4}')
    """
    return json.dumps(point, sort_keys=True, separators=(",", ":"), default=str)


def fingerprint(obj: Any) -> str:
    """A short hash of ``obj``'s pickle: what a sweep's results depend on besides the point.

    Checkpoint lines carry it, so a resumed run reuses only results of the same function with
    the same bound arguments and the same wgpsim source (a changed config, or an engine fix,
    makes them missing, not wrong).
    """
    buffer = io.BytesIO()
    _FingerprintPickler(buffer, protocol=4).dump(obj)
    digest = hashlib.sha256(buffer.getvalue())
    digest.update(_source_digest())
    return digest.hexdigest()[:16]


class _FingerprintPickler(pickle.Pickler):
    """Pickles a dataclass as its type and the fields it compares by: a field declared
    ``compare=False`` (where a value came from, such as ``HardwareConfig.source``, a path
    relative to the working directory) is not part of what a result depends on, so a run
    resumed from another directory finds its points."""

    def reducer_override(self, obj: Any) -> Any:
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            kept = tuple(
                (f.name, getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.compare
            )
            return tuple, ((type(obj).__module__, type(obj).__qualname__, kept),)
        return NotImplemented


@functools.cache
def _source_digest() -> bytes:
    """A hash of every module of the installed wgpsim package (a few ms, once per process)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.digest()


def run_points(
    fn: Fn,
    points: Iterable[Any],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: Progress | None = None,
    checkpoint: Checkpoint | None = None,
    desc: str = "points",
    fp: str | None = None,
) -> list[Any]:
    """``[fn(p) for p in points]``, run where the module docstring says, in ``points`` order.

    ``desc`` names the sweep (progress bar, checkpoint lines); ``fp`` is its fingerprint in the
    checkpoint (default :func:`fingerprint` of ``fn``, i.e. of its bound arguments).
    """
    points = list(points)
    if workers is not None and workers < 1:
        raise ConfigError(f"workers: {workers} must be >= 1 (or None for every core)")
    keys = [point_key(p) for p in points]
    if len(set(keys)) != len(keys):
        raise ValueError(f"sweep {desc!r}: two points have the same key")
    client = connect(scheduler) if scheduler is not None and points else None
    results: list[Any] = [_MISSING] * len(points)
    if checkpoint is not None:
        fp = fp or fingerprint(fn)
        done = checkpoint.load(desc, fp)
        for i, key in enumerate(keys):
            results[i] = done.get(key, _MISSING)
    todo = [i for i, r in enumerate(results) if r is _MISSING]

    def finished() -> Iterator[None]:
        for _ in range(len(points) - len(todo)):
            yield None
        if client is not None:
            batches = _on_dask(fn, points, todo, client)
        else:
            batches = _in_process(fn, points, todo, workers or default_workers())
        for indices, values in batches:
            if checkpoint is not None:
                items = [(keys[i], v) for i, v in zip(indices, values, strict=True)]
                values = checkpoint.append(desc, fp, items)
            for i, v in zip(indices, values, strict=True):
                results[i] = v
                yield None

    wrap = progress or (lambda items, **_: items)
    try:
        for _ in wrap(finished(), total=len(points), desc=desc):
            pass
    finally:
        if client is not None:
            client.close()
    return results


Batches = Iterator[tuple[list[int], list[Any]]]


def _in_process(fn: Fn, points: list[Any], todo: list[int], workers: int) -> Batches:
    """Points here, one by one, until the pace says a pool of ``workers`` would pay (see rule)."""
    pending = list(todo)
    ran, last = 0, 0.0
    while pending:
        if workers > 1 and ran >= 2 and last * len(pending) > INLINE_SECONDS:
            yield from _on_pool(fn, points, pending, workers, pace=last)
            return
        i = pending.pop(0)
        start = time.perf_counter()
        value = fn(points[i])
        last = time.perf_counter() - start
        ran += 1
        yield [i], [value]


def _chunks(
    todo: list[int], workers: int, pace: float | None, per_worker: int = 4
) -> list[list[int]]:
    """Consecutive runs of ``todo``: at least ``per_worker`` per worker, and about
    :data:`CHUNK_SECONDS` of work each when the ``pace`` (seconds per point) is known."""
    size = math.ceil(len(todo) / (per_worker * workers))
    if pace is not None and pace > 0:
        size = min(size, max(1, round(CHUNK_SECONDS / pace)))
    size = max(1, size)
    return [todo[k : k + size] for k in range(0, len(todo), size)]


def _run_chunk(fn: Fn, chunk: list[Any]) -> tuple[list[Any], BaseException | None]:
    """Run a chunk in a worker: the results before the first error, and that error."""
    done = []
    for point in chunk:
        try:
            done.append(fn(point))
        except Exception as err:  # noqa: BLE001 (handed back to the caller, raised there)
            return done, err
    return done, None


def _collect(
    completed: Iterable[Any],
    chunk_of: dict[Any, list[int]],
    result: Callable[[Any], tuple[list[Any], BaseException | None]],
    cancel: Callable[[], None],
) -> Batches:
    """Yield each chunk's finished points as it completes; on an error cancel what has not
    started, keep collecting the chunks already running, then raise the first error."""
    error = None
    for future in completed:
        if future.cancelled():
            continue
        done, err = result(future)
        yield chunk_of[future][: len(done)], done
        if err is not None and error is None:
            error = err
            cancel()
    if error is not None:
        raise error


def _on_pool(fn: Fn, points: list[Any], todo: list[int], workers: int, pace: float) -> Batches:
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    complete = False
    try:
        chunk_of = {
            pool.submit(_run_chunk, fn, [points[i] for i in chunk]): chunk
            for chunk in _chunks(todo, workers, pace)
        }

        def cancel() -> None:
            for future in chunk_of:
                future.cancel()

        yield from _collect(futures_completed(chunk_of), chunk_of, lambda f: f.result(), cancel)
        complete = True
    finally:
        if not complete:  # an error or an interruption: stop the workers now, not after the queue
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                process.terminate()
        pool.shutdown(wait=complete, cancel_futures=True)


def connect(scheduler: str) -> Any:
    """A ``distributed.Client`` for ``scheduler``, or a one-line ConfigError within
    :data:`CONNECT_TIMEOUT` seconds."""
    Client = require("distributed", "dask", f"scheduler {scheduler}").Client  # noqa: N806
    from distributed.comm.addressing import get_address_host_port, parse_address

    hint = (
        "give a running scheduler's address (tcp://HOST:8786) or leave it out to use local "
        "processes"
    )
    try:
        scheme = parse_address(str(scheduler), strict=False)[0]
        if scheme != "inproc":
            get_address_host_port(str(scheduler))
    except ValueError as err:
        raise ConfigError(f"scheduler {scheduler}: not an address ({err}); {hint}") from None
    if scheme == "inproc" and not _inproc_listening(str(scheduler)):
        raise ConfigError(
            f"scheduler {scheduler}: no scheduler of this process listens there (inproc:// "
            f"reaches only a scheduler started in the same process); {hint}"
        )
    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except Exception as err:  # noqa: BLE001 (OSError, TimeoutError, ...: all one line)
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ConfigError(
            f"scheduler {scheduler}: cannot connect within {CONNECT_TIMEOUT:g} s ({reason}); {hint}"
        ) from None


def _inproc_listening(address: str) -> bool:
    """Whether a Dask listener of this process serves the ``inproc://`` ``address``."""
    from distributed.comm.inproc import global_manager

    with global_manager.lock:
        return address.removeprefix("inproc://") in global_manager.listeners


def _on_dask(fn: Fn, points: list[Any], todo: list[int], client: Any) -> Batches:
    """Chunks of points as Dask tasks on ``client``'s cluster."""
    from distributed import as_completed

    if todo:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        chunk_of = {
            client.submit(_run_chunk, fn, [points[i] for i in chunk], pure=False): chunk
            for chunk in _chunks(todo, workers, None, per_worker=DASK_CHUNKS_PER_WORKER)
        }
        yield from _collect(
            as_completed(list(chunk_of), loop=client.loop),
            chunk_of,
            lambda f: f.result(),
            lambda: client.cancel([f for f in chunk_of if not f.done()]),
        )


@dataclass(frozen=True)
class Execution:
    """How an experiment runs its sweeps: where (workers, scheduler), the checkpoint, the
    progress bar. A kind runs each sweep with one call, :meth:`map`.

    >>> Execution(workers=1).map(abs, [-1, 2], desc="demo")
    [1, 2]
    """

    workers: int | None = None
    scheduler: str | None = None
    checkpoint: Checkpoint | None = None
    progress: Progress | None = None

    def map(
        self,
        fn: Fn,
        points: Iterable[Any],
        *,
        desc: str,
        fp: str | None = None,
        save: bool = True,
    ) -> list:
        """:func:`run_points` with these settings; ``desc`` names the sweep. ``save=False``
        keeps this sweep out of the checkpoint (for results that are not JSON values)."""
        return run_points(
            fn,
            points,
            workers=self.workers,
            scheduler=self.scheduler,
            progress=self.progress,
            checkpoint=self.checkpoint if save else None,
            desc=desc,
            fp=fp,
        )


__all__ = [
    "CHUNK_SECONDS",
    "CONNECT_TIMEOUT",
    "DASK_CHUNKS_PER_WORKER",
    "INLINE_SECONDS",
    "SCHEDULER_ENV",
    "Checkpoint",
    "Execution",
    "connect",
    "default_workers",
    "fingerprint",
    "point_key",
    "run_points",
]
