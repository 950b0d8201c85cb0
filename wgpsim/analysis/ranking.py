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
    criteria: Sequence[tuple[str, str]] = CRITERIA,
    name: str = "candidate",
) -> list[tuple[str, int, str]]:
    """(name, place, reason) per candidate, best first. Candidates equal on every criterion
    share a place (competition ranking: 1, 2, 2, 4) and keep the input order."""
    keys = [f for f, _ in criteria]
    key = [tuple(row[k] for k in keys) for row in rows]
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


def _best(row, runner_up, criteria, name) -> str:
    if runner_up is None:
        return "the only candidate"
    ties = []
    for field, words in criteria:
        mine, theirs = row[field], runner_up[field]
        if mine != theirs:
            if not ties:
                return f"fewest {words} ({mine} vs {theirs} for {runner_up[name]})"
            tied = " and ".join(f"{w} ({row[f]})" for f, w in ties)
            return (
                f"fewest {tied}, tied with {runner_up[name]}; "
                f"then fewest {words} ({mine} vs {theirs})"
            )
        ties.append((field, words))
    field, words = criteria[0]
    return f"fewest {words} ({row[field]}), tied with {runner_up[name]} on every criterion"


def _behind(row, above, criteria, name) -> str:
    ties = []
    for field, words in criteria:
        mine, theirs = row[field], above[field]
        if mine != theirs:
            if not ties:
                return f"{mine} {words} vs {theirs} for {above[name]}"
            tied = "; ".join(f"{row[f]} {w}" for f, w in ties)
            return f"{tied}, tied with {above[name]}; but {mine} {words} vs {theirs}"
        ties.append((field, words))
    return f"ties with {above[name]} on every criterion"


__all__ = ["CRITERIA", "rank"]
