"""The values a measurement holds, and their ranges: a warp id, a span in cycles, each a whole
number read from a CSV cell or a JSON number. The kit's two readers share them:
`wgpsim.calibration.measurements` (``measurements.csv``, which re-exports them) and
`wgpsim.calibration.proton_trace` (proton's trace, which the first one calls).

>>> whole_number("62", 0, MAX_WARP), MAX_CYCLES == 2**48
(62, True)
"""

from __future__ import annotations

from wgpsim.errors import shown

__all__ = ["MAX_CYCLES", "MAX_WARP", "whole_number"]

MAX_CYCLES = 1 << 48
"""Longest span a measurement may report, in cycles: 2**48 (three days at 1 GHz), the bound of a
trace's delays (``wgpsim.trace.validate.MAX_DELAY_CYCLES``), so no count read nears int64."""

MAX_WARP = (1 << 16) - 1
"""Highest warp id a measurement may name (the traces' bound, ``wgpsim.trace.io.MAX_WARPS``;
a probe has at most 32 warps)."""


def whole_number(value: object, low: int, high: int) -> int:
    """``value`` (a CSV cell or a JSON number: ``62``, ``"62"``, ``62.0``) as an int in
    ``low..high``; a ValueError saying what it is otherwise (never a wrapped int64).

    >>> whole_number(" 62 ", 0, 100), whole_number(62.0, 0, 100)
    (62, 62)
    >>> whole_number("9223372036854775808", 0, 2**48)
    Traceback (most recent call last):
    ...
    ValueError: '9223372036854775808' is out of range (valid: 0..281474976710656)
    >>> whole_number("1e30", 0, 2**48)
    Traceback (most recent call last):
    ...
    ValueError: '1e30' is out of range (valid: 0..281474976710656)
    """
    valid = f"(valid: {low}..{high})"
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.lstrip("+-").isdigit():
        digits = len(text.lstrip("+-"))
        if digits > 20:
            raise ValueError(f"an integer of {digits} digits is out of range {valid}")
        number: float = int(text)
    elif isinstance(value, (int, float, str)) and not isinstance(value, bool):
        try:
            number = float(text)
        except (TypeError, ValueError):
            raise ValueError(f"{shown(value)} is not a whole number {valid}") from None
    else:
        raise ValueError(f"{shown(value)} is not a whole number {valid}")
    if number != number or not float(low) <= number <= float(high):  # NaN, inf, too large
        raise ValueError(f"{shown(value)} is out of range {valid}")
    if number != int(number):
        raise ValueError(f"{shown(value)} is not a whole number {valid}")
    return int(number)
