"""The ``wgpsim`` command.

Each verb lives in its own module in this package and exposes ``register(subparsers)``, which adds
its sub-parser and sets ``handler`` (a function of the parsed ``argparse.Namespace`` returning an
exit code). Verbs are discovered automatically, so adding a verb is adding a module.

Errors a user can cause (``wgpsim.errors.WgpsimError``, a missing or unreadable file, any
other ``OSError``) become one line on stderr and exit code 2, never a traceback.

The command itself (``entry``: the ``wgpsim`` script and ``python -m wgpsim``) leaves without
the interpreter's teardown, which frees every module and object one by one (about 1 CPU-s
after a ``wgpsim run`` with pandas, matplotlib and numba loaded): once ``main`` has returned,
every file it wrote is closed, so it flushes stdout and stderr, runs the ``atexit`` handlers
(worker pools, temporary files) and ends the process with ``os._exit``.
"""

from __future__ import annotations

import argparse
import atexit
import errno
import functools
import importlib
import os
import pkgutil
import sys
from typing import Any, NoReturn

from wgpsim import __version__
from wgpsim.errors import WgpsimError, closest, shown


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wgpsim",
        description="LDS datapath simulator and layout toolkit for AMD MI450 (gfx1250).",
    )
    parser.add_argument("--version", action="version", version=f"wgpsim {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    _mark_verbs(parser)
    return parser


def _mark_verbs(parser: argparse.ArgumentParser) -> None:
    """Give every (sub-)parser's namespace ``_parser``, itself: after parsing, the deepest verb
    chosen (``layout show``) is the one whose usage an unknown flag gets."""
    parser.set_defaults(_parser=parser)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _mark_verbs(child)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """Parse ``argv``; an unknown flag gets the usage of the verb it was given to, a line
    naming it and that verb's flags (argparse alone would print the top-level usage).

    The verb's parser exits with argparse's code 2 after printing its usage, as for a missing
    flag."""
    args, extra = _parser().parse_known_args(argv)
    if extra:
        verb = args._parser
        flags = [o for a in verb._actions for o in a.option_strings if o.startswith("--")]
        unknown = next((e for e in extra if e.startswith("-")), extra[0])
        name = unknown.split("=", 1)[0]
        guess = closest(name.lstrip("-"), [f[2:] for f in flags]) if name[:1] == "-" else None
        guess = f" (did you mean '--{guess}'?)" if guess else ""
        what = "flag" if name.startswith("-") else "argument"
        verb.error(
            f"unrecognized {what} {shown(name)}{guess}; valid flags: {', '.join(flags) or 'none'}"
        )
    return args


@functools.cache
def _parser() -> argparse.ArgumentParser:
    """The parser, built once per process (18 ms; every call of :func:`main` in one process,
    as the tests and the fuzz suite make, reuses it: parsing keeps no state in it)."""
    return build_parser()


def main(argv: list[str] | None = None) -> int:
    """Run the command; its exit code. Ctrl-C, whatever was running (a sweep, a figure being
    drawn, a destructor that Python would have reported as "Exception ignored"), ends it with
    ``wgpsim: interrupted`` and 130; SIGTERM (a batch system's kill) with ``wgpsim:
    terminated`` and 143, after the same clean-up: no temporary file is left, a run's stage
    keeps its checkpoint for ``--resume`` (:class:`_Interrupts`). An interrupt that reached
    it as another error (``_failed``) counts as the interrupt."""
    with _Interrupts() as interrupts:
        try:
            code = _main(argv, interrupts)
        except KeyboardInterrupt:  # while parsing, or while reporting another error
            code = 130
    if interrupts.terminated:
        print("wgpsim: terminated", file=sys.stderr)
        return 143
    if code == 130 or interrupts.seen:
        print("wgpsim: interrupted", file=sys.stderr)
        return 130
    return code


class _Interrupts:
    """While active (main thread only): SIGINT raises KeyboardInterrupt as Python's own handler
    does and is also remembered in ``seen``; SIGTERM, which would end the process at once
    (leaving an ``atomic_write`` temporary behind), raises it too and is remembered in
    ``terminated``; a KeyboardInterrupt that Python can only report as unraisable (raised in a
    ``__del__`` or a weakref callback: matplotlib's figure teardown) is not printed. So an
    interrupt swallowed on its way up still ends the command with 130 (143)."""

    def __init__(self) -> None:
        self.seen = False
        self.terminated = False
        self._before: dict[int, Any] = {}
        self._hook: Any = None

    def __enter__(self) -> _Interrupts:
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._before[signum] = signal.signal(signum, self._on_signal)
            self._hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        return self

    def __exit__(self, *exc: object) -> None:
        import signal

        if self._hook is not None:
            for signum, before in self._before.items():
                signal.signal(signum, before)
            sys.unraisablehook = self._hook

    def _on_signal(self, signum: int, frame: Any) -> None:
        import signal

        self.seen = True
        self.terminated |= signum == signal.SIGTERM
        raise KeyboardInterrupt

    def _unraisable(self, unraisable: Any) -> None:
        if issubclass(unraisable.exc_type, KeyboardInterrupt):
            self.seen = True
            return
        self._hook(unraisable)


def _main(argv: list[str] | None, interrupts: _Interrupts) -> int:
    if sys.stdout is None:  # started with stdout closed (`wgpsim ... >&-`): refuse before any work
        return _error("stdout is closed; redirect it (>/dev/null) instead")
    try:
        args = _parse(argv)  # inside: a flag's own check may raise a WgpsimError (--engine)
        code = int(args.handler(args) or 0)
        sys.stdout.flush()  # inside the try: a reader that left is seen here, not at exit
        return code
    except KeyboardInterrupt:  # main says so
        return 130
    except Exception as err:
        if interrupts.seen:  # the interrupt, turned into another error on its way up
            return 130
        return _failed(err)


def _failed(err: Exception) -> int:
    """The exit code of a command that raised ``err``, after its one line on stderr; an error
    no user can cause (a defect) is raised again.

    After a Ctrl-C, ``_main`` returns 130 instead: an interrupt can reach it as another error.
    Python 3.11 wraps an exception raised in a class body's ``__set_name__`` in a RuntimeError
    (a Ctrl-C while matplotlib defines ``_AxesBase``), and a C extension whose initialisation is
    interrupted raises ImportError (numpy's "Importing the numpy C-extensions failed",
    matplotlib's ``ft2font``: "initialization failed")."""
    if isinstance(
        err, WgpsimError
    ):  # every problem it reports (a config's bad fields): a line each
        return _error(*err.messages)
    if isinstance(err, BrokenPipeError):  # `wgpsim ... --json | head`: the reader left
        _silence_stdout()
        return 0
    if isinstance(err, FileNotFoundError):
        return _error(f"{err.filename}: {_missing(err.filename)}")
    if isinstance(err, OSError):  # a directory where a file was expected, no permission, disk full
        where = f"{err.filename}: " if err.filename else ""
        if err.errno == errno.ELOOP:
            return _error(f"{where}{_LOOP}")
        return _error(f"{where}{err.strerror or err}")
    raise err


def entry() -> NoReturn:
    """Run ``main`` on the command line's arguments and exit with its code, skipping the
    interpreter's teardown (see the module's docstring). Numpy's OpenBLAS starts one thread
    per core on import unless told otherwise (0.04 CPU-s of every command on 2 cores); the
    command calls no BLAS routine large enough to use them, so it asks for one thread
    (``OPENBLAS_NUM_THREADS``, unless the caller set it: their value is kept). A Ctrl-C
    (SIGTERM) while it exits, after ``main`` returned, ends it as one in ``main`` does."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    with _Interrupts() as late:  # main's own ends where its work does: this one covers the exit
        try:
            code = main()
        except SystemExit as done:  # argparse: --help, --version, a usage error (an int code)
            code = done.code or 0
            if not isinstance(code, int):  # sys.exit("message"), as Python handles it
                print(code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt:  # before main's own handler was in place: 130 below
            code = 1
        try:
            _flush_streams()
            atexit._run_exitfuncs()  # an interrupted handler is reported as unraisable: seen
        except KeyboardInterrupt:
            pass
    if late.seen and code not in (130, 143):  # after main had returned: said here, once
        code = 143 if late.terminated else 130
        print(f"wgpsim: {'terminated' if code == 143 else 'interrupted'}", file=sys.stderr)
    os._exit(code)


def _flush_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # the reader left (a pipe), or it was closed
            if stream is sys.stdout:
                _silence_stdout()


_LOOP = "a symlink loop (following its links leads back to a link already followed)"


def _missing(name: object) -> str:
    """Why ``name`` cannot be opened when the error said "no such file": a symlink loop or a
    dangling link said as such (``os.path.exists`` is False for both)."""
    try:
        os.stat(str(name))
    except OSError as err:
        if err.errno == errno.ELOOP:
            return _LOOP
        if os.path.islink(str(name)):
            return f"a symbolic link to {shown(os.readlink(str(name)))}, which does not exist"
    return "no such file or directory"


def _error(*messages: str) -> int:
    """Print each message as one error line (a quoted value's line breaks escaped); 2."""
    for message in messages if sys.stderr is not None else ():
        one_line = message.replace("\r", "\\r").replace("\n", "\\n")
        print(f"wgpsim: error: {one_line}", file=sys.stderr)
    return 2


def _silence_stdout() -> None:
    """Point stdout at /dev/null so Python's exit-time flush does not fail again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":  # pragma: no cover
    entry()
