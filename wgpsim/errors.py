"""Domain errors, and the "did you mean" every unknown-name message offers. The CLI turns each into one line on stderr and exit code 2.

Every message names the thing that is wrong (file, field, value) and what would be valid:

>>> raise LayoutError("lane basis 3 [0, 64]: out of range for dim1 of size 64")
Traceback (most recent call last):
...
wgpsim.errors.LayoutError: lane basis 3 [0, 64]: out of range for dim1 of size 64
"""

import math


class WgpsimError(Exception):
    """Base of every error a user can cause with bad input.

    One error may report several problems of one input (every bad field of a config, found
    before any is reported): :attr:`messages` lists them, one line each in the CLI.

    >>> ConfigError.every(["a.yaml: field 'warps': 0", "a.yaml: field 'seed': -1"]).messages
    ("a.yaml: field 'warps': 0", "a.yaml: field 'seed': -1")
    """

    @classmethod
    def every(cls, messages):
        """One error reporting each of ``messages`` (repeats dropped), in order."""
        messages = tuple(dict.fromkeys(messages))
        err = cls("\n".join(messages))
        err._messages = messages
        return err

    @property
    def messages(self) -> tuple[str, ...]:
        """The problems this error reports (most errors report one)."""
        return getattr(self, "_messages", None) or (str(self),)


class LayoutError(WgpsimError, ValueError):
    """A layout, encoding or attribute text that is malformed or impossible."""


class LayoutRangeError(LayoutError):
    """A layout whose number is beyond what the hardware or Triton allows (``kWidth`` past
    the instruction's K, more warps than a CTA has): never valid, unlike a layout wgpsim does
    not model, which a kernel's reader reports and goes on."""


class TraceError(WgpsimError, ValueError):
    """A trace (file or in-memory) that the model cannot replay."""


class ConfigError(WgpsimError, ValueError):
    """A hardware or experiment config with a missing, unknown or invalid field."""


class AllocationError(WgpsimError, ValueError):
    """Buffers that the LDS allocator cannot place (for example more than 320 KiB)."""


class ModuleError(WgpsimError, ValueError):
    """A kernel (TTGIR module, cache directory, trace) that a frontend cannot read."""


class Unchecked(ConfigError):
    """A field already reported as bad was read: the check that needed it is skipped
    (:class:`Problems` drops it; its reason is among the problems already collected)."""


class Problems:
    """The problems of one input, collected so that every one is reported at once.

    Each independent check runs in :meth:`guard`; a :class:`ConfigError` it raises is kept and
    the next check runs. :meth:`raise_any` raises them all as one error (one line each).

    >>> problems = Problems()
    >>> with problems.guard():
    ...     raise ConfigError("a.yaml: field 'warps': 64 is out of range (valid: 1..32)")
    >>> with problems.guard():
    ...     raise Unchecked("warps")  # a later check that needed warps: already said
    >>> with problems.guard():
    ...     raise ConfigError("a.yaml: field 'seed': -1 is out of range")
    >>> problems.raise_any()
    Traceback (most recent call last):
    ...
    wgpsim.errors.ConfigError: a.yaml: field 'warps': 64 is out of range (valid: 1..32)
    a.yaml: field 'seed': -1 is out of range
    """

    def __init__(self) -> None:
        self.messages: list[str] = []

    def __bool__(self) -> bool:
        return bool(self.messages)

    def add(self, err: WgpsimError) -> None:
        if not isinstance(err, Unchecked):
            self.messages.extend(err.messages)

    def guard(self):
        """A context in which a ConfigError is kept rather than raised."""
        return _Guard(self)

    def raise_any(self, also: WgpsimError | None = None) -> None:
        """Raise every problem kept (and ``also``, an error that ended the checks) as one
        ConfigError; nothing if there is none (``also`` alone is raised as it is)."""
        if also is not None and not self.messages:
            raise also
        if also is not None:
            self.add(also)
        if self.messages:
            raise ConfigError.every(self.messages)


class _Guard:
    def __init__(self, problems: Problems) -> None:
        self.problems = problems

    def __enter__(self) -> Problems:
        return self.problems

    def __exit__(self, kind, err, tb) -> bool:
        if isinstance(err, ConfigError):
            self.problems.add(err)
            return True
        return False


def field_error(message: str, field: str, problem: str) -> ConfigError:
    """``ConfigError(message)`` that also says which dotted ``field`` is wrong (``err.field``)
    and the ``problem`` without the file (``err.problem``), so that an override's error can
    name what set the field (``--set timing.lds_latency``) instead of the hardware file.

    >>> err = field_error("hw.yaml: field 'timing.x' must be 1..9", "timing.x", "must be 1..9")
    >>> err.field, err.problem
    ('timing.x', 'must be 1..9')
    """
    err = ConfigError(message)
    err.field, err.problem = field, problem
    return err


SHOWN_CHARS = 40
"""Longest ``repr`` of a bad value that an error message quotes; a longer one is described."""


def shown(value: object) -> str:
    """The bad value as an error message quotes it: its ``repr`` if short, else its type and size.

    A message names the file and what was expected; it never echoes a whole file (a text file
    given where YAML was expected reads as one long string):

    >>> shown(-1), shown("fp16"), shown([1, 2])
    ('-1', "'fp16'", '[1, 2]')
    >>> shown("root:x:0:0:root:/root:/bin/bash daemon:x:1:1:daemon:/usr/sbin"), shown(10**5000)
    ('a string of 61 characters', 'an integer of about 5000 digits')
    >>> shown(list(range(100)))
    'a list of 100 items'
    """
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**SHOWN_CHARS:
        digits = math.floor(abs(value).bit_length() * math.log10(2))  # str() stops at 4300
        return f"an integer of about {digits} digits"
    text = repr(value)
    if len(text) <= SHOWN_CHARS:
        return text
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    if isinstance(value, (list, tuple, dict, set)):
        return f"a {type(value).__name__} of {len(value)} items".replace("a dict ", "a mapping ")
    return f"{text[: SHOWN_CHARS - 3]}..."


def closest(name: str, valid) -> str | None:
    """The valid name closest to a misspelt ``name`` (difflib), or None.

    >>> closest("burst_lenghts", ["warps", "burst_lengths", "report_burst"])
    'burst_lengths'
    """
    import difflib

    matches = difflib.get_close_matches(str(name), [str(v) for v in valid], n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(name: str, valid) -> str:
    """`` (did you mean 'x'?)`` for the valid name closest to ``name``, else ``''``.

    >>> did_you_mean("lds_latncy", ["issue_interval", "lds_latency", "clock_latency"])
    " (did you mean 'lds_latency'?)"
    """
    guess = closest(name, valid)
    return f" (did you mean '{guess}'?)" if guess is not None else ""
