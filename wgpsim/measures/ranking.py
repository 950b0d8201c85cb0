"""Rank layout candidates by a list of criteria (smaller is better), with the reason in words.

Each candidate is compared with its neighbours on the criteria in order; the reason names the
first criterion that decides its place:

>>> rows = [{"candidate": "plain", "cycles": 323, "tdm_instructions": 2, "lds_bytes": 65536},
...         {"candidate": "split", "cycles": 195, "tdm_instructions": 3, "lds_bytes": 98304},
...         {"candidate": "coarse", "cycles": 195, "tdm_instructions": 2, "lds_bytes": 98304}]
>>> for name, place, reason in rank(rows):
...     print(place, name, "-", reason)
1 coarse - fewest LDS cycles (195), tied with split; then fewest TDM instructions (2 vs 3)
2 split - 195 LDS cycles, tied with coarse; but 3 TDM instructions vs 2
3 plain - 323 LDS cycles vs 195 for split

A criterion given as ``(field, words, "most")`` prefers the larger value ("most cacheline
use"); the others prefer the smaller.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: The default criteria: (field, words), most important first.
CRITERIA = (
    ("cycles", "LDS cycles"),
    ("tdm_instructions", "TDM instructions"),
    ("lds_bytes", "bytes of LDS"),
)


def rank(
    rows: Sequence[Mapping[str, Any]],
    criteria: Sequence[tuple[str, ...]] = CRITERIA,
    name: str = "candidate",
) -> list[tuple[str, int, str]]:
    """(name, place, reason) per candidate, best first. Candidates equal on every criterion
    share a place (competition ranking: 1, 2, 2, 4) and keep the input order."""
    key = [tuple(_signed(row, c) for c in criteria) for row in rows]
    order = sorted(range(len(rows)), key=lambda i: key[i])
    ranked = [rows[i] for i in order]
    out = []
    place = 0
    for n, row in enumerate(ranked):
        if n == 0 or key[order[n]] != key[order[n - 1]]:
            place = n + 1
        if n == 0:
            reason = _best(row, ranked[1] if len(ranked) > 1 else None, criteria, name)
        else:
            reason = _behind(row, ranked[n - 1], criteria, name)
        out.append((str(row[name]), place, reason))
    return out


def _signed(row: Mapping[str, Any], criterion: Sequence[str]) -> Any:
    """The sort key of one criterion (negated when the larger value is better)."""
    value = row[criterion[0]]
    return -value if _most(criterion) else value


def _most(criterion: Sequence[str]) -> bool:
    return len(criterion) > 2 and criterion[2] == "most"


def _best(row, runner_up, criteria, name) -> str:
    if runner_up is None:
        return "the only candidate"
    ties = []
    for c in criteria:
        field, words = c[0], c[1]
        mine, theirs = row[field], runner_up[field]
        if mine != theirs:
            best = "most" if _most(c) else "fewest"
            if not ties:
                return f"{best} {words} ({mine} vs {theirs} for {runner_up[name]})"
            return (
                f"{_tied(row, ties)}, tied with {runner_up[name]}; "
                f"then {best} {words} ({mine} vs {theirs})"
            )
        ties.append(c)
    return f"{_tied(row, criteria[:1])}, tied with {runner_up[name]} on every criterion"


def _tied(row, ties) -> str:
    """``fewest LDS cycles (195) and TDM instructions (2)``: a word per change of direction."""
    parts, last = [], None
    for c in ties:
        best = "most" if _most(c) else "fewest"
        parts.append(f"{best + ' ' if best != last else ''}{c[1]} ({row[c[0]]})")
        last = best
    return " and ".join(parts)


def _behind(row, above, criteria, name) -> str:
    ties = []
    for field, words, *_ in criteria:
        mine, theirs = row[field], above[field]
        if mine != theirs:
            if not ties:
                return f"{mine} {words} vs {theirs} for {above[name]}"
            tied = "; ".join(f"{row[f]} {w}" for f, w in ties)
            return f"{tied}, tied with {above[name]}; but {mine} {words} vs {theirs}"
        ties.append((field, words))
    return f"ties with {above[name]} on every criterion"


__all__ = ["CRITERIA", "rank"]
