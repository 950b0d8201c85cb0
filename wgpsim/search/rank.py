"""The layout search's ranking: equivalent candidates as one row, each row's place and reason,
and the config's reference candidates measured against the winner.

Two candidates are *equivalent* when they are equal on every criterion of :data:`CRITERIA`
(cycles, TDM instructions, LDS bytes, local_load instructions, cacheline use, pieces,
partition-stall and bank-conflict cycles, lock-step overlaps): whatever a kernel author
compares them on, they are the same choice, e.g. the symmetric twins that swap the two SIMD
pairs' tiles. A group is one row, shown by one representative: a reference candidate if the
group holds one, else the simplest ctaLayout (fewest bases that mix two tile bits, then the
smallest sum of basis entries, then the name), so the choice does not depend on the search's
order. The criteria after the first four only separate what the first four tie, so the order
of the rows refines the order of the candidates by (cycles, TDM, LDS bytes, local_loads).

>>> rows = [{"candidate": n, **dict(zip(FIELDS, v))} for n, v in (
...     ("twin-b", (188, 2, 101352, 32, 1.0, 4, 0, 0, 0)),
...     ("twin-a", (188, 2, 101352, 32, 1.0, 4, 0, 0, 0)),
...     ("plain", (316, 2, 73680, 32, 1.0, 2, 254, 0, 32)))]
>>> [(g.rank, g.members, g.reason) for g in group_rows(rows, key=lambda r: r["candidate"])]
[(1, ('twin-a', 'twin-b'), 'fewest LDS cycles (188 vs 316 for plain)'), (2, ('plain',), '316 LDS cycles vs 188 for twin-a')]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from wgpsim.measures.ranking import rank

#: Ranking criteria: (field, words[, "most"]), most important first; equal on all: equivalent.
CRITERIA = (
    ("cycles", "LDS cycles"),
    ("tdm_instructions", "TDM instructions"),
    ("lds_bytes", "bytes of LDS"),
    ("local_loads", "local_load instructions"),
    ("cacheline_use", "cacheline use", "most"),
    ("pieces", "pieces"),
    ("partition_stall_cycles", "partition-stall cycles"),
    ("bank_conflict_cycles", "bank-conflict cycles"),
    ("lockstep_overlaps", "lock-step overlaps"),
)
FIELDS = tuple(c[0] for c in CRITERIA)


@dataclass(frozen=True)
class Group:
    """One row of the ranking: its place, its members' names (the representative first) and
    the reason for its place (against the row above, or for the first, the row below)."""

    rank: int
    members: tuple[str, ...]
    reason: str

    @property
    def name(self) -> str:
        return self.members[0]

    @property
    def equivalents(self) -> int:
        return len(self.members) - 1


def group_rows(
    rows: Sequence[Mapping[str, Any]], key: Callable[[Mapping[str, Any]], Any]
) -> list[Group]:
    """The rows (each with ``candidate`` and the :data:`FIELDS`) grouped by equivalence and
    ranked, best first; ``key`` orders a group's members (the first represents it)."""
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[f] for f in FIELDS), []).append(row)
    heads = {}
    for members in groups.values():
        members.sort(key=key)
        heads[members[0]["candidate"]] = members
    ranked = rank([m[0] for m in heads.values()], CRITERIA)
    return [
        Group(place, tuple(str(m["candidate"]) for m in heads[name]), reason)
        for name, place, reason in ranked
    ]


def simplicity(row: Mapping[str, Any]) -> tuple:
    """A candidate's place among its equivalents: references first, then the ctaLayout with
    the fewest mixing bases, the smallest basis entries, then the name.

    >>> simplicity({"candidate": "x", "cta_warp": [[2, 4], [1, 0]], "cta_register": [[0, 1]]})
    (1, 1, 8, 'x')
    """
    bases = [*row["cta_warp"], *row["cta_register"]]
    mixes = sum(1 for b in bases if all(b))
    return (0 if row.get("reference") else 1, mixes, sum(map(sum, bases)), str(row["candidate"]))


def against_winner(row: Mapping[str, Any], winner: Mapping[str, Any]) -> str:
    """Why ``row`` is not the winner: the first criterion on which they differ, and what its
    loads suffer (partition stalls, bank conflicts).

    >>> w = {"candidate": "w", "cycles": 188, "partition_stall_cycles": 0}
    >>> r = {"candidate": "r", "cycles": 316, "partition_stall_cycles": 254,
    ...      "bank_conflict_cycles": 0, "lockstep_overlaps": 32}
    >>> against_winner(r, w)
    'loses on LDS cycles (316 vs 188): 254 partition-stall cycles in 32 lock-step overlaps, 0 bank-conflict cycles'
    """
    for c in CRITERIA:
        field, words = c[0], c[1]
        if row[field] != winner[field]:
            why = f"loses on {words} ({row[field]} vs {winner[field]})"
            if field == "cycles":
                why += (
                    f": {row['partition_stall_cycles']} partition-stall cycles in "
                    f"{row['lockstep_overlaps']} lock-step overlaps, "
                    f"{row['bank_conflict_cycles']} bank-conflict cycles"
                )
            return why
    return "equivalent to the winner"


__all__ = ["CRITERIA", "FIELDS", "Group", "against_winner", "group_rows", "simplicity"]
