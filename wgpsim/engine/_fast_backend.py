"""Where the fast engine's compiled kernels come from: an extension module built ahead of time
from the numba sources, or numba's just-in-time compile of the same sources.

The fast engine calls three kernels: ``run_loop`` (``_fast_loop``), ``fill_passes``
(``_fast_pass_kernels``) and ``rows_are_valid`` (``_fast_check``). Numba can serve them from its
on-disk cache, but a process pays about 0.45 CPU-s to import numba, build its typing registries
and load the cached machine code before the first call. The same functions compiled ahead of
time by ``numba.pycc`` into a CPython extension module load in about a millisecond, without
numba. So ``kernels()`` gives, by ``WGPSIM_FAST_KERNELS``:

- ``built`` (the default): the extension module, built into ``directory()`` on the first use
  of the fast engine (about 17 CPU-s on a 2-core machine, as long as numba's own first compile;
  the compile notice is printed), found again by the digest of the kernels' sources, the
  Python, NumPy and numba versions and the machine. Each kernel is exported once per argument
  types the engine passes on the shipped configs (``fast.EXEMPLARS``); a call with other types, a
  machine without a C compiler (``compiler()``) or a failed build fall back to numba's JIT;
- ``jit``: numba's JIT and its cache only (what the mutation check's mutants use).

Both run the same sources, so their results are the same cycle for cycle (the engines'
differential test runs both). The choice of arguments is exact: a variant is called only for
arguments whose ``type_key`` (dtype, dimensions, layout and flags of every array, type of every
scalar) equals the one it was built for.

>>> type_key((np.zeros((2, 3), np.int32), True, 4))
"(('a', '<i4', 4, 2, True, True, True), 'bool', 'int')"
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import shutil
import sys
import sysconfig
import tempfile
import warnings
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

KERNELS = ("run_loop", "fill_passes", "rows_are_valid")
SOURCES = (
    "_fast_backend.py",
    "_fast_check.py",
    "_fast_grant.py",
    "_fast_heaps.py",
    "_fast_loop.py",
    "_fast_pass_kernels.py",
    "_fast_passes.py",
    "_fast_state.py",
    "fast.py",
)
"""The files whose change makes a built module stale: the kernels, what they inline, this
recipe, and the code that assembles the kernels' arguments (their types choose the variants)."""
MODE = "WGPSIM_FAST_KERNELS"


def type_key(value) -> str:
    """What decides which compiled variant of a kernel takes ``value`` (the arguments'
    tuple): numba's type of each argument, as text."""
    return repr(_key(value))


def _key(value):
    if isinstance(value, np.ndarray):
        f = value.flags
        dtype = value.dtype
        name = dtype.str if dtype.fields is None else f"{dtype.descr}/{dtype.itemsize}"
        return ("a", name, dtype.alignment, value.ndim, f.c_contiguous, f.writeable, f.aligned)
    if isinstance(value, tuple):
        return tuple(_key(v) for v in value)
    if isinstance(value, np.generic):
        return value.dtype.str
    return type(value).__name__


class Built:
    """The kernels of a built module: each call goes to the variant built for its argument
    types, or to numba's JIT when none was."""

    def __init__(self, module, variants: dict[str, dict[str, str]]) -> None:
        self.table = {
            kernel: {key: getattr(module, export) for key, export in variants[kernel].items()}
            for kernel in KERNELS
        }

    def call(self, kernel: str, *args):
        found = self.table[kernel].get(type_key(args))
        return (found or getattr(_jit(), kernel))(*args)

    def run_loop(self, *args):
        return self.call("run_loop", *args)

    def fill_passes(self, *args):
        return self.call("fill_passes", *args)

    def rows_are_valid(self, *args):
        return self.call("rows_are_valid", *args)


_active: list = []  # the kernels this process uses, once chosen


def kernels(exemplars: Callable[[], None] | None = None):
    """The fast engine's kernels for this process, chosen at the first call (see the module
    docstring): a built module if there is one, else one built now if ``exemplars`` (the
    engine's calls on ``fast.EXEMPLARS``, which ``build`` records) is given, else numba's JIT."""
    if not _active:
        built = None
        if os.environ.get(MODE, "built") != "jit":
            built = load() or (build(exemplars) if exemplars else None)
        _active.append(built or _jit())
    return _active[0]


def built_present() -> bool:
    """Whether a built module for these sources is ready to load (using it costs nothing).
    A module once found stays (a process asks at every ``simulate``): only the finding is
    remembered, per directory, so a module built later is still seen."""
    if os.environ.get(MODE, "built") == "jit":
        return False
    root = os.environ.get("NUMBA_CACHE_DIR")
    if root in _found:
        return True
    if _paths()[1].is_file():
        _found.add(root)
        return True
    return False


_found: set[str | None] = set()  # NUMBA_CACHE_DIR values under which a built module was found


def directory() -> Path:
    """Where built modules live: ``$NUMBA_CACHE_DIR/wgpsim`` when set, else ``__pycache__``
    beside this file (as numba's cache), else ``~/.cache/wgpsim`` when that is not writable."""
    root = os.environ.get("NUMBA_CACHE_DIR")
    if root:
        return Path(root) / "wgpsim"
    beside = Path(__file__).resolve().parent / "__pycache__"
    if os.access(beside if beside.is_dir() else beside.parent, os.W_OK):
        return beside
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wgpsim"


@lru_cache(maxsize=1)
def digest() -> str:
    """16 hex digits naming the sources, versions and machine a built module is valid for."""
    h = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for name in SOURCES:
        h.update((here / name).read_bytes())
    h.update(f"{sys.version_info[:2]} {platform.machine()} numpy {np.__version__}".encode())
    h.update(_numba_version().encode())
    return h.hexdigest()[:16]


def _numba_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("numba")
    except PackageNotFoundError:
        return "-"


def _paths() -> tuple[str, Path, Path]:
    """The module's name, its file and its variants' table (json)."""
    name = f"wgpsim_fast_{digest()}"
    folder = directory()
    return name, folder / f"{name}{sysconfig.get_config_var('EXT_SUFFIX')}", folder / f"{name}.json"


def load() -> Built | None:
    """The built module of these sources, if there is one."""
    name, module_file, table = _paths()
    if not (module_file.is_file() and table.is_file()):
        return None
    spec = importlib.util.spec_from_file_location(name, module_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Built(module, json.loads(table.read_text()))


def compiler() -> str | None:
    """The C compiler a build would link with (``$CC``, else ``cc``/``gcc``/``clang``), or None."""
    names = [os.environ["CC"].split()[0]] if os.environ.get("CC") else ["cc", "gcc", "clang"]
    return next((found for n in names if (found := shutil.which(n))), None)


def build(exemplars: Callable[[], None]) -> Built | None:
    """Build the module for the argument types of the kernel calls ``exemplars()`` makes (half
    a minute's compile, with the notice), or None (numba's JIT serves) when there is no C
    compiler or the build failed here before (its ``.failed`` file says why)."""
    name, module_file, table = _paths()
    failed = table.with_suffix(".failed")
    if compiler() is None or failed.is_file():
        return None
    from wgpsim.engine import _compile_notice

    _compile_notice.announce_once()
    try:
        with tempfile.TemporaryDirectory(prefix="wgpsim-fast-") as tmp:
            variants = _compile(name, Path(tmp), record(exemplars))
            module_file.parent.mkdir(parents=True, exist_ok=True)
            built = Path(tmp) / module_file.name
            os.replace(built, module_file)
            _write(table, json.dumps(variants, indent=1))
    except Exception as error:  # noqa: BLE001 (any failure: numba's JIT serves instead)
        _write(failed, f"{type(error).__name__}: {error}\n")
        return None
    _drop_stale(module_file.parent, name)
    return load()


def _write(path: Path, text: str) -> None:
    """Write ``text`` whole or not at all (a rename), the directory created if need be."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.{os.getpid()}")
    part.write_text(text)
    os.replace(part, path)


def _drop_stale(folder: Path, keep: str) -> None:
    """Remove modules built from other sources (best effort: another process may use one)."""
    for stale in folder.glob("wgpsim_fast_*"):
        if not stale.name.startswith(keep):
            stale.unlink(missing_ok=True)


def _compile(name: str, out: Path, calls: list[tuple[str, tuple]]) -> dict[str, dict[str, str]]:
    """Compile every kernel for the argument types of each of ``calls`` (kernel, arguments)
    into module ``name`` in ``out``; returns {kernel: {type_key: exported name}}."""
    jit = _jit()
    from numba import typeof, types

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc's pending deprecation
        from numba.pycc import CC

    returns = {"run_loop": types.boolean, "fill_passes": types.int64}
    cc = CC(name)
    cc.output_dir = str(out)
    variants: dict[str, dict[str, str]] = {k: {} for k in KERNELS}
    for kernel, args in calls:
        key = type_key(args)
        if key in variants[kernel]:
            continue
        export = f"{kernel}_{len(variants[kernel])}"
        signature = returns.get(kernel, types.boolean)(*(typeof(a) for a in args))
        cc.export(export, signature)(getattr(jit, kernel).py_func)
        variants[kernel][key] = export
    cc.compile()
    return variants


def record(exemplars: Callable[[], None]) -> list[tuple[str, tuple]]:
    """(kernel, arguments) of every kernel call ``exemplars()`` makes, recorded without running
    a kernel: ``fill_passes`` returns a table of no pass, ``run_loop`` stops the run."""
    recorder = _Recorder()
    _active.insert(0, recorder)
    try:
        exemplars()
    finally:
        _active.remove(recorder)
    return recorder.calls


class Recorded(Exception):
    """``run_loop``'s arguments are recorded: the exemplar run stops there."""


class _Recorder:
    """Kernels that only record their arguments (``fill_passes``: a table of no pass)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple]] = []

    def rows_are_valid(self, *args):
        self.calls.append(("rows_are_valid", args))
        return True

    def fill_passes(self, *args):
        self.calls.append(("fill_passes", args))
        start = args[-1][-1]
        start[:] = 0
        return 0

    def run_loop(self, *args):
        self.calls.append(("run_loop", args))
        raise Recorded


@lru_cache(maxsize=1)
def _jit():
    """numba's JIT kernels, its cache loaded (or the engine compiled, with the notice) at the
    first call of each."""
    from types import SimpleNamespace

    from wgpsim.engine import _compile_notice, _fast_check, _fast_loop, _fast_pass_kernels

    _drop_stale_loop_cache()
    _skip_scipy_blas_probe()
    _compile_notice.install()  # one line on stderr while numba compiles the engine (cold cache)
    return SimpleNamespace(
        run_loop=_fast_loop.run_loop,
        fill_passes=_fast_pass_kernels.fill_passes,
        rows_are_valid=_fast_check.rows_are_valid,
    )


def _drop_stale_loop_cache() -> None:
    """Numba checks a cached function only against its own file, but ``run_loop`` inlines
    ``_fast_grant`` and ``_fast_heaps`` (and reads ``_fast_state``'s constants): when any of
    the four files changed since the cache was written, drop the cached loop so that it is
    compiled again."""
    from wgpsim.engine import _fast_grant, _fast_heaps, _fast_loop, _fast_state

    run_loop = _fast_loop.run_loop
    sources = (_fast_grant, _fast_heaps, _fast_state, _fast_loop)
    digest = hashlib.sha256(b"".join(Path(m.__file__).read_bytes() for m in sources)).hexdigest()
    try:
        cache = Path(run_loop._cache._cache_path)
        stamp = cache / "_fast_loop.sources.sha256"
        if stamp.is_file() and stamp.read_text() == digest:
            return
        for stale in (*cache.glob("_fast_loop.*.nb[ic]"), *cache.glob("_fast_heaps.*.nb[ic]")):
            stale.unlink(missing_ok=True)
        stamp.write_text(digest)
    except (AttributeError, OSError):  # no cache (or not ours to change): numba decides
        pass


def _skip_scipy_blas_probe() -> None:
    """Load numba's numpy registries without its BLAS probe: on its first dispatch numba
    imports ``numba.np.arraymath``, whose ``_check_blas`` imports ``scipy.linalg`` when SciPy
    is installed (0.2-0.25 CPU-s of a 0.55 CPU-s load, for a BLAS this engine never calls).
    With ``scipy.linalg.cython_blas`` absent for that one import the probe answers "no BLAS",
    which only sends numba's ``np.correlate``/``np.convolve`` to their plain loop in this
    process (``np.dot`` and ``np.linalg`` look for SciPy again when compiled). When the
    process has ``scipy.linalg`` already, numba finds it as usual."""
    name = "scipy.linalg.cython_blas"
    if "scipy.linalg" in sys.modules or "numba.np.arraymath" in sys.modules:
        return
    sys.modules[name] = None  # type: ignore[assignment]  (import of it: ImportError)
    try:
        import numba.np.arraymath  # noqa: F401  (its _check_blas runs once, here)
    finally:
        if sys.modules.get(name, 0) is None:
            del sys.modules[name]
