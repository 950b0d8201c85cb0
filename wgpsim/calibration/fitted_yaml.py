r"""The fitted hardware file: a hardware YAML's text with the constants a calibration fit
identified replaced, each under a comment naming where the value comes from (the house rule:
every constant says its source). The text is edited, not re-dumped, so every other comment and
the file's order stay as they were.

>>> from wgpsim.calibration.fit import CalibrationFit, Constant
>>> text = "timing:\n  lds_latency: 56\n"
>>> c = Constant("timing.lds_latency", 40.2, 0.3, 56, True, ("round_trip",), 12)
>>> print(fitted_yaml(CalibrationFit({c.key: c}, None, None, None, None), text,
...                   _dt.date(2026, 12, 2)), end="")
timing:
  # fit: round_trip, 2026-12-02, 12 measurements: 40.20 +- 0.30 cycles (was 56)
  lds_latency: 40
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

from wgpsim.calibration.fit import CalibrationFit
from wgpsim.errors import ModuleError

__all__ = ["fitted_yaml"]


def fitted_yaml(fit: CalibrationFit, text: str, date: _dt.date | None = None) -> str:
    """``text`` (a hardware YAML) with every identified constant replaced by its fitted value,
    a comment above it saying ``fit: <families>, <date>, <n> measurements`` with the estimate
    and its standard error; constants not identified are left as they were."""
    date = date or _dt.date.today()
    for c in fit.constants.values():
        if not c.identified:
            continue
        section, name = c.key.split(".")
        if c.stderr is not None:
            what = ", ".join(c.families)
            estimate = f"{c.value:.2f} +- {c.stderr:.2f} cycles"
        else:
            what = ", ".join(c.families)
            estimate = f"{c.written}, residual sum of squares " + ", ".join(
                f"{v}: {r:.4g}" for v, r in c.rss
            )
        comment = f"fit: {what}, {date.isoformat()}, {c.measurements} measurements: {estimate}"
        text = _set_value(text, section, name, c.written, f"{comment} (was {c.previous})")
    return text


def _set_value(text: str, section: str, name: str, value: Any, comment: str) -> str:
    """Replace ``name: ...`` inside top-level ``section:`` by ``name: value``, a comment line
    above it (the rest of the old line's comment is dropped: the fit replaces its source)."""
    block = re.search(rf"(?m)^{re.escape(section)}:\n((?:[ \t#].*\n|\n)*)", text)
    if block is None:
        raise ModuleError(f"hardware YAML: no section {section!r}")
    line = re.search(rf"(?m)^([ \t]+){re.escape(name)}:[^\n]*$", block.group(1))
    if line is None:
        raise ModuleError(f"hardware YAML: no field {section}.{name}")
    indent = line.group(1)
    start = block.start(1) + line.start()
    end = block.start(1) + line.end()
    return text[:start] + f"{indent}# {comment}\n{indent}{name}: {value}" + text[end:]
