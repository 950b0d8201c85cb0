"""Read proton's intra-kernel Chrome trace (per-warp scope spans in cycles) into measurements.

Proton (Triton's profiler, ``third_party/proton``) in intra-kernel mode records, per warp, the
cycle counter at entry and exit of each scope a kernel marks (``pl.enter_scope`` /
``pl.exit_scope``) and writes a Chrome trace JSON. Its writer
(``StreamChromeTraceWriter::writeKernel`` / ``writeProfileEvents`` in proton's
``TraceDataIO/TraceWriter.cpp``) emits one complete event per warp per scope span:

=========  ==========================================================================
key        value
=========  ==========================================================================
``ph``     ``"X"``
``name``   the scope's name
``cat``    the kernel's name
``pid``    ``"<kernel> Core<proc> CTA<block>"`` (older versions append
           ``" [measure in clock cycle (assume 1GHz)]"``)
``tid``    ``"warp <uid> (line <n>)"``
``ts``     start cycle / 1000 (cycles shown as nanoseconds: "assume 1GHz", or
           ``Frequency (MHz)`` 1000 in ``args``), relative to the kernel's first event
``dur``    (end cycle - start cycle) / 1000
=========  ==========================================================================

So a span's cycles are ``dur * 1000`` (rounded: older versions print a float). Each event
becomes one measurements row: ``probe`` (the scope's name, or the kernel's with
``by="kernel"``), ``warp``, ``cycles``, and ``kernel``, ``cta``, ``repeat`` (the n-th span
of that scope in that warp and CTA). Other events (flows, metadata, async) are skipped.

>>> trace = {"displayTimeUnit": "ns", "traceEvents": [
...     {"ph": "X", "name": "banks_s4", "cat": "banks_s4", "pid": "banks_s4 Core3 CTA0",
...      "tid": "warp 0 (line 0)", "ts": 0.0, "dur": 0.062, "args": {"Frequency (MHz)": 1000.0}}]}
>>> read_proton_trace(trace).to_dict("records")
[{'probe': 'banks_s4', 'warp': 0, 'cycles': 62, 'kernel': 'banks_s4', 'cta': 0, 'repeat': 0}]
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wgpsim.calibration.measured_values import MAX_CYCLES, MAX_WARP, whole_number
from wgpsim.errors import ModuleError, shown
from wgpsim.inputs import json_value, read_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CYCLES_PER_UNIT", "read_proton_trace"]

CYCLES_PER_UNIT = 1000
"""Proton writes cycles / 1000 into ``ts`` and ``dur`` (its 1 GHz, 1000 MHz convention)."""

_WARP = re.compile(r"^warp (\d+)(?: \(line \d+\))?$")
_CTA = re.compile(r"\bCTA(\d+)\b")


def _load(source: str | Path | dict) -> tuple[dict, str]:
    if isinstance(source, dict):
        return source, "<proton trace>"
    path = Path(source)
    try:
        text = read_text(path, "proton trace", ModuleError)  # at most 8 MiB, UTF-8
    except FileNotFoundError:
        raise ModuleError(f"{path}: no such proton trace") from None
    return json_value(text, str(path), ModuleError), str(path)


def _cycles(dur: Any, where: str) -> int:
    """A span's ``dur`` (cycles / 1000) as whole cycles in 0..MAX_CYCLES."""
    if isinstance(dur, bool) or not isinstance(dur, (int, float)):
        raise ModuleError(f"{where}: no numeric 'dur'")
    high = MAX_CYCLES / CYCLES_PER_UNIT
    if not 0 <= dur <= high:  # JSON has no NaN or infinity (json_value refuses them)
        raise ModuleError(f"{where}: 'dur' {shown(dur)} is out of range (valid: 0..{high:g})")
    return round(dur * CYCLES_PER_UNIT)


def _number(digits: str, high: int, where: str) -> int:
    """A warp or CTA number of a ``tid`` or ``pid``, in 0..high."""
    try:
        return whole_number(digits, 0, high)
    except ValueError as err:
        raise ModuleError(f"{where}: {err}") from None


def read_proton_trace(source: str | Path | dict[str, Any], *, by: str = "scope") -> pd.DataFrame:
    """Measurements rows from a proton intra-kernel trace (file or parsed JSON); ``by``
    ``"scope"`` names a row's probe by the scope, ``"kernel"`` by the kernel."""
    import pandas as pd

    if by not in ("scope", "kernel"):
        raise ModuleError(f"proton trace: by={by!r} (valid: scope, kernel)")
    data, where = _load(source)
    events = data.get("traceEvents") if isinstance(data, dict) else None
    if not isinstance(events, list):
        raise ModuleError(f"{where}: no 'traceEvents' list (not a Chrome trace)")
    rows, seen = [], {}
    for i, ev in enumerate(events):
        if not isinstance(ev, dict) or ev.get("ph") != "X":
            continue
        warp = _WARP.match(str(ev.get("tid", "")))
        if warp is None or ev.get("cat") in ("flow", "async", "call_path"):
            continue
        cycles = _cycles(ev.get("dur"), f"{where}: traceEvents[{i}]")
        warp_id = _number(warp.group(1), MAX_WARP, f"{where}: traceEvents[{i}] 'tid'")
        kernel = str(ev.get("cat", ""))
        cta_match = _CTA.search(str(ev.get("pid", "")))
        cta = (
            _number(cta_match.group(1), MAX_WARP, f"{where}: traceEvents[{i}] 'pid' CTA")
            if cta_match
            else 0
        )
        probe = str(ev.get("name", "")) if by == "scope" else kernel
        key = (probe, kernel, cta, warp_id)
        repeat = seen.get(key, 0)
        seen[key] = repeat + 1
        rows.append((probe, warp_id, cycles, kernel, cta, repeat))
    if not rows:
        raise ModuleError(f"{where}: no per-warp scope events ('tid': 'warp N (line L)')")
    return pd.DataFrame(rows, columns=["probe", "warp", "cycles", "kernel", "cta", "repeat"])
