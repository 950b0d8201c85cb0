"""``--fail-on``: the thresholds a ``wgpsim diff`` checks, in a small grammar.

A threshold is ``METRIC OP NUMBER[%]``: a kernel-level figure of
`wgpsim.kernel.figures.TOTALS` (``exposed``, ``lds_bytes``, ``partition_stalls``,
...), ``>`` or ``<``, a signed number, and ``%`` for a change relative to the old value
(without it, the change in the figure's own unit). A kernel *regresses* under it when its
change (new - old, or 100 * (new - old) / old) is beyond the number in that direction:
``exposed>+5%`` fails when the exposed LDS cycles per iteration grow by more than 5 %,
``lds_bytes>+0`` when the LDS bytes grow at all, ``loop_cycles<-100`` when the loop got more
than 100 cycles faster (a check that a fix is still in). From an old value of 0 any growth is
``+inf%``. A figure missing on either side (a loop not timed) never fails; the check says so.

>>> t = parse_threshold("exposed>+5%")
>>> t.metric, t.above, t.value, t.percent
('exposed', True, 5.0, True)
>>> t.crossed(100.0, 106.0), t.crossed(100.0, 104.0), t.crossed(0, 1)
(True, False, True)
>>> parse_threshold("lds_bytes>+0").crossed(65536, 65536)
False
>>> parse_threshold("exposed>>5")
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: --fail-on 'exposed>>5': expected METRIC>NUMBER or METRIC<NUMBER with a signed number and an optional % (e.g. exposed>+5%)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from wgpsim.errors import ConfigError, closest
from wgpsim.kernel.figures import TOTALS

__all__ = ["Threshold", "parse_threshold", "relative_change"]

_GRAMMAR = re.compile(r"^\s*([a-z_]+)\s*([<>])\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(%?)\s*$")


def relative_change(old: float, new: float) -> float:
    """100 * (new - old) / old; from 0, +inf for growth, -inf for a fall, 0 for none."""
    if old == 0:
        return 0.0 if new == 0 else math.copysign(math.inf, new)
    return 100.0 * (new - old) / abs(old)


@dataclass(frozen=True)
class Threshold:
    """One ``--fail-on``: ``metric`` changes ``above`` (``>``) or below (``<``) ``value``."""

    text: str
    metric: str
    above: bool
    value: float
    percent: bool

    def change(self, old: float, new: float) -> float:
        """The change the threshold reads: absolute, or relative in percent."""
        return relative_change(old, new) if self.percent else new - old

    def crossed(self, old: float | None, new: float | None) -> bool:
        """Whether the change from ``old`` to ``new`` is a regression (None: never)."""
        if old is None or new is None:
            return False
        change = self.change(old, new)
        return change > self.value if self.above else change < self.value


def parse_threshold(text: str) -> Threshold:
    """The threshold ``text`` (module docstring); a bad one is a `ConfigError` of one line."""
    m = _GRAMMAR.match(text)
    if m is None:
        raise ConfigError(
            f"--fail-on {text!r}: expected METRIC>NUMBER or METRIC<NUMBER with a signed number "
            "and an optional % (e.g. exposed>+5%)"
        )
    metric, op, number, pct = m.groups()
    if metric not in TOTALS:
        guess = closest(metric, list(TOTALS))
        hint = f" (did you mean {guess!r}?)" if guess else ""
        raise ConfigError(
            f"--fail-on {text!r}: unknown metric {metric!r}{hint}; valid: {', '.join(TOTALS)}"
        )
    return Threshold(text.strip(), metric, op == ">", float(number), pct == "%")
