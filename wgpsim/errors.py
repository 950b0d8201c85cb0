"""Domain errors, and the "did you mean" every unknown-name message offers. The CLI turns each into one line on stderr and exit code 2.

Every message names the thing that is wrong (file, field, value) and what would be valid:

>>> raise LayoutError("lane basis 3 [0, 64]: out of range for dim1 of size 64")
Traceback (most recent call last):
...
wgpsim.errors.LayoutError: lane basis 3 [0, 64]: out of range for dim1 of size 64
"""


class WgpsimError(Exception):
    """Base of every error a user can cause with bad input."""


class LayoutError(WgpsimError, ValueError):
    """A layout, encoding or attribute text that is malformed or impossible."""


class TraceError(WgpsimError, ValueError):
    """A trace (file or in-memory) that the model cannot replay."""


class ConfigError(WgpsimError, ValueError):
    """A hardware or experiment config with a missing, unknown or invalid field."""


class AllocationError(WgpsimError, ValueError):
    """Buffers that the LDS allocator cannot place (for example more than 320 KiB)."""


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
