"""The one line the fast engine prints while numba compiles it, on a cold cache only.

Numba compiles a ``cache=True`` function on its first call in a process unless its on-disk cache
(the ``.nbi`` index and ``.nbc`` files in ``__pycache__`` beside the module) holds a match for
the signature and the source's stamp. Only on that miss does ``Dispatcher.compile`` emit the
``numba:compile`` event; a cache hit loads the machine code without it. So a listener for that
event sees exactly the cold compiles: the first run on a fresh machine, or after an engine file
changed. We chose it over the two alternatives: looking for the index files ourselves would
repeat numba's stamp and signature checks (and get them wrong when a source changed), and timing
the dispatcher's first call cannot speak before the compile and misreads a loaded machine, where
loading a warm cache is slow too.

The line is printed once per process, on stderr, before the compile starts:

>>> from numba import njit
>>> notice = CompileNotice(announce=lambda: print("compiling"))
>>> event.register("numba:compile", notice)
>>> f = njit(lambda x: x + 1)  # compiled at its first call (not cached)
>>> f(1), f(2)
compiling
(2, 3)
>>> event.unregister("numba:compile", notice)
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from numba.core import event

MESSAGE = "wgpsim: compiling the fast engine (first run only, ~{seconds} s)..."
SECONDS = 18
"""Roughly how long the first compile takes on a 2-core machine: 18.0 CPU-s measured on
2026-12-04 for a first ``simulate(engine="fast")`` with an empty ``NUMBA_CACHE_DIR`` that builds
the engine's extension module (``_fast_backend.build``: one variant of each kernel, and numba's
C helpers; 32.4 CPU-s while the 8-bit and 16-bit partition masks needed two); numba's JIT alone
(``WGPSIM_FAST_KERNELS=jit``, or no C compiler) took 14.1-15.8 CPU-s."""


def _announce() -> None:
    if sys.stderr is not None:
        print(MESSAGE.format(seconds=SECONDS), file=sys.stderr, flush=True)


def announce_once() -> None:
    """Print the line now, unless this process printed it already (the build of the engine's
    extension module, ``_fast_backend.build``, says it too)."""
    if not _announced:
        _announced.append(True)
        _announce()


class CompileNotice(event.Listener):
    """Calls ``announce`` at the first ``numba:compile`` of a function of ``wgpsim.engine``."""

    def __init__(self, announce: Callable[[], None] = announce_once) -> None:
        self.announce = announce
        self.done = False

    def on_start(self, ev) -> None:
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if not self.done and getattr(func, "__module__", "").startswith("wgpsim.engine"):
            self.done = True
            self.announce()

    def on_end(self, ev) -> None:
        pass


def install() -> None:
    """Listen for the engine's compiles in this process (once; the line is printed once)."""
    global _installed
    if not _installed:
        event.register("numba:compile", CompileNotice())
        _installed = True


_installed = False
_announced: list[bool] = []  # the line was printed in this process
