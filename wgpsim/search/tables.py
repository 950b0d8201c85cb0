"""The tables and the printed report of a ``layout_search`` run (``wgpsim run`` and ``wgpsim
search`` print :func:`report`, and write :func:`tables`: one route for both verbs).

Tables: ``results`` (the first ``top`` rows of the ranking, equivalent candidates as one row,
``equivalents`` counting the others), ``equivalents`` (every candidate of those rows),
``pareto`` (one row per point of the front over cycles, LDS bytes, TDM instructions),
``winners`` (``#ttg`` text and Gluon code of the rows), ``references`` (the config's
hand-made candidates: rank, cycles, gap to the winner and why they lose) and ``counts``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wgpsim.search.gluon_code import winner_code
from wgpsim.search.rank import FIELDS, against_winner
from wgpsim.search.search import SearchResult

# pandas is imported where a table is built, so `import wgpsim.search` stays light
if TYPE_CHECKING:
    import pandas as pd

RESULT_COLUMNS = [
    "rank",
    "candidate",
    "equivalents",
    *FIELDS,
    "a_instruction",
    "b_instruction",
    "lower_bound",
    "a_pieces",
    "b_pieces",
    "cta_warp",
    "cta_register",
    "a",
    "b",
    "b_transposed_loads",
    "reason",
]
MEMBER_COLUMNS = ["rank", "representative", "candidate", *FIELDS, "cta_warp", "cta_register",
                  "a", "b", "b_transposed_loads"]  # fmt: skip
REFERENCE_COLUMNS = ["reference", "rank", "cycles", "gap_cycles", "gap_percent",
                     "partition_stall_cycles", "bank_conflict_cycles", "lockstep_overlaps",
                     "lds_bytes", "tdm_instructions", "representative", "reason"]  # fmt: skip


def tables(result: SearchResult, top: int) -> dict[str, pd.DataFrame]:
    """Every table of the run (module docstring); ``top`` counts rows, not candidates."""
    import pandas as pd

    rows = result.rows()[:top]
    by_name = result.by_name
    members = [
        {"rank": g.rank, "representative": g.name, **by_name[name].row()}
        for g in result.ranking[:top]
        for name in g.members
    ]
    winners = pd.DataFrame(
        [
            {"rank": r["rank"], "candidate": r["candidate"], **winner_code(c, result.problem)}
            for r, c in zip(rows, result.ranked[:top], strict=True)
        ]
    )
    out = {
        "results": _frame(rows, RESULT_COLUMNS),
        "equivalents": _frame(members, MEMBER_COLUMNS),
        "pareto": _pareto(result),
        "winners": winners,
        "references": _frame(_references(result), REFERENCE_COLUMNS),
        "counts": pd.DataFrame(
            [
                {
                    "candidates": result.scored,
                    "cannot_be_built": result.invalid,
                    "pruned": result.pruned,
                    "simulated": result.simulated,
                    "distinct_simulations": result.simulations,
                    "rows": len(result.ranking),
                }
            ]
        ),
    }
    return out


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame([{k: r[k] for k in columns} for r in rows], columns=columns)


def _pareto(result: SearchResult) -> pd.DataFrame:
    """One row per point of the front: the best row on it, how many rows and candidates."""
    import pandas as pd

    places = {g.name: g for g in result.ranking}
    points: dict[tuple, list[Any]] = {}
    for c in result.pareto():
        key = (c.cycles, int(c.allocation.size), c.row()["tdm_instructions"])
        points.setdefault(key, []).append(c)
    rows = []
    for (cycles, lds, tdm), front in sorted(points.items()):
        groups = sorted((places[c.name] for c in front), key=lambda g: g.rank)
        rows.append(
            {
                "cycles": cycles,
                "lds_bytes": lds,
                "tdm_instructions": tdm,
                "rank": groups[0].rank,
                "candidate": groups[0].name,
                "rows": len(groups),
                "candidates": sum(len(g.members) for g in groups),
            }
        )
    columns = ["cycles", "lds_bytes", "tdm_instructions", "rank", "candidate", "rows", "candidates"]
    return pd.DataFrame(rows, columns=columns)


def _references(result: SearchResult) -> list[dict[str, Any]]:
    """The config's references in their order: rank, gap to the winner, why they lose."""
    if not result.ranking:
        return []
    by_name = result.by_name
    group_of = {name: g for g in result.ranking for name in g.members}
    winner = by_name[result.ranking[0].name].row()
    out = []
    for name, *_ in result.problem.references:
        row, group = by_name[name].row(), group_of[name]
        gap = row["cycles"] - winner["cycles"]
        out.append(
            {
                **row,
                "reference": name,
                "rank": group.rank,
                "gap_cycles": gap,
                "gap_percent": round(100 * gap / winner["cycles"], 1),
                "representative": group.name,
                "reason": against_winner(row, winner),
            }
        )
    return out


def report(t: dict[str, pd.DataFrame]) -> str:
    """The run in words (what both verbs print): counts, the rows with their reasons, the
    references against the winner, the Pareto front, the winner's ``#ttg`` and Gluon code."""
    counts = t["counts"].iloc[0]
    lines = [
        f"{counts['candidates']} candidates: {counts['cannot_be_built']} cannot be built, "
        f"{counts['pruned']} pruned by the static bounds, {counts['simulated']} simulated "
        f"({counts['distinct_simulations']} distinct simulations) in {counts['rows']} rows of "
        "equivalent candidates (equal on every criterion)"
    ]
    for row in t["results"].to_dict(orient="records"):
        more = f" (and {row['equivalents']} equivalent)" if row["equivalents"] else ""
        lines.append(
            f"{row['rank']:>3}. {row['cycles']} cycles, {row['lds_bytes']} B LDS, "
            f"{row['tdm_instructions']} TDM, {row['local_loads']} local_loads, cacheline use "
            f"{row['cacheline_use']}, {row['pieces']} pieces: {row['candidate']}{more}"
        )
        lines.append(f"     {row['reason']}")
    refs = t["references"].to_dict(orient="records")
    if refs:
        lines.append("References (the config's hand-made candidates) against the winner:")
    for r in refs:
        shown = "" if r["representative"] == r["reference"] else f" (as {r['representative']})"
        lines.append(
            f"  {r['reference']}: rank {r['rank']}{shown}, {r['cycles']} cycles, "
            f"{r['gap_cycles']:+d} cycles ({r['gap_percent']:+.1f}%); {r['reason']}"
        )
    pareto = t["pareto"]
    lines.append(
        f"Pareto front (cycles, LDS bytes, TDM instructions): {len(pareto)} points, "
        f"{pareto['candidates'].sum()} candidates"
    )
    for p in pareto.to_dict(orient="records"):
        more = f" (and {p['candidates'] - 1} more)" if p["candidates"] > 1 else ""
        lines.append(
            f"  {p['cycles']} cycles, {p['lds_bytes']} B, {p['tdm_instructions']} TDM: "
            f"rank {p['rank']}, {p['candidate']}{more}"
        )
    first = t["winners"].iloc[0]
    lines += ["Winner, #ttg:", *(f"  {first[k]}" for k in ("ttg_wmma", "ttg_a", "ttg_b"))]
    lines += ["Winner, Gluon:", first["gluon"]]
    return "\n".join(lines)


__all__ = ["report", "tables"]
