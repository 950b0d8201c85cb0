"""What each value a ``tt.scan`` / ``tt.reduce`` combine region returns is computed from.

The region's block takes the left operands then the right ones (``^bb0(%l0, ..., %r0, ...)``)
and returns one value per operand (``tt.scan.return`` / ``tt.reduce.return``). For each
returned value, the block arguments it depends on (through the region's ops): LLVM drops the
scratch loads of a partial whose values only feed results nobody reads
(`wgpsim.trace.scratch.scan.live_partials`).

A first-order recurrence ``x = g_r * x_l + x_r`` carried with ``g = g_r * g_l``:

>>> region = [
...     "^bb0(%arg3: f32 loc(unknown), %arg4: f32, %arg5: f32, %arg6: f32):",
...     "  %4 = arith.mulf %arg5, %arg3 : f32 loc(#loc25)",
...     "  %5 = arith.mulf %arg5, %arg4 : f32",
...     "  %6 = arith.addf %5, %arg6 : f32",
...     "  tt.scan.return %4, %6 : f32, f32 loc(#loc8)",
... ]
>>> [sorted(d) for d in combine_deps(region)]
[[0, 2], [1, 2, 3]]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from wgpsim.frontend.mlir_text import SSA, strip_loc

_ARG = re.compile(r"(%[\w$.\-]+)\s*:")
_RETURNS = ("tt.scan.return", "tt.reduce.return")


def combine_deps(region: Sequence[str]) -> tuple[frozenset[int], ...] | None:
    """Per returned value, the indices of the block arguments it depends on; ``region`` the
    region's lines from its ``^bb0(...)`` label to its return. None if the lines do not read
    as one block ending in a return (the caller then assumes every partial is read)."""
    lines = [strip_loc(line)[0].strip() for line in region]
    if not lines or not lines[0].startswith("^"):
        return None
    deps: dict[str, frozenset[int]] = {
        name: frozenset((i,)) for i, name in enumerate(_ARG.findall(lines[0]))
    }
    for line in lines[1:]:
        lhs, eq, rhs = line.partition(" = ")
        body = rhs if eq else line
        reads = frozenset().union(*(deps.get(v, frozenset()) for v in SSA.findall(body)))
        if body.startswith(_RETURNS):
            values = SSA.findall(body.split(" : ")[0])
            return tuple(deps.get(v, frozenset()) for v in values)
        if eq:
            for name in SSA.findall(lhs):
                deps[name] = reads
    return None
