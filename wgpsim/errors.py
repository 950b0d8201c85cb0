"""Domain errors. The CLI turns each into one line on stderr and exit code 2.

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
