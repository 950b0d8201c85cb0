"""The tables of a ``gemm_candidates`` run, built from plain rows (JSON values).

Each candidate's :class:`~wgpsim.microbench.gemm.CandidateAnalysis` becomes rows of every table
(:func:`candidate_rows`, what one sweep point returns); :func:`tables_from_rows` joins the
candidates' rows, ranks them and builds the DataFrames; :func:`display` formats the main table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from wgpsim.engine import Result
from wgpsim.layout.notation import to_text
from wgpsim.measures.ranking import rank
from wgpsim.microbench.candidates import OPERANDS
from wgpsim.microbench.gemm import CandidateAnalysis, OperandAnalysis

# pandas is imported where a table is built, so `import wgpsim.microbench` stays light
if TYPE_CHECKING:
    import pandas as pd


def _bases_text(bases: tuple[tuple[int, ...], ...]) -> str:
    return str([list(b) for b in bases])


def _cycles(result: Result) -> dict[str, Any]:
    cycles = int(result.measurement())
    return {
        "cycles": cycles,
        "bytes": int(result.bytes),
        "bytes_per_cycle": float(result.bytes) / cycles,
        "partition_conflict_cycles": int(sum(result.partition_stall_cycles.values())),
        "bank_conflict_cycles": int(result.bank_conflict_cycles),
    }


def operand_row(c: CandidateAnalysis, o: OperandAnalysis) -> dict[str, Any]:
    """One operand of one candidate (the ``operands`` table; ``a_``/``b_`` in the main one)."""
    p = o.pieces
    return {
        "shared": to_text(o.shared),
        "partitioned_auto": o.auto is not None,
        "co_located": bool(o.co_located),
        "co_located_instructions": len(o.co_located),
        "same_partition": bool(o.same_partition),
        "same_partition_instructions": len(o.same_partition),
        "lockstep_conflict_loads": len(o.lockstep_overlaps),
        "pieces": p.num_pieces,
        "num_partitions": p.num_partitions,
        "num_groups": p.num_groups,
        "partition_dim": p.partition_dim,
        "piece_shape": list(p.piece_shape),
        "tdm_instructions": p.tdm_instructions,
        "tdm_instructions_triton": p.tdm_instructions_triton,
        "piece_row_bytes": p.row_bytes,
        "cacheline_use": p.cacheline_use,
        "offsets": list(o.bases),
        # as the assembly holds them (pairs merged, duplicates removed), as the timing runs them
        "load": "+".join(o.lowering.counts),
        "loads_per_warp": len(o.lowering.issued),
        # as Triton's LLVM-dialect lowering asks for them (one row each in the ``loads`` table)
        "dialect_load": o.lowering.instruction,
        "dialect_loads_per_warp": o.lowering.num_instructions,
        "load_eligibility": o.lowering.eligibility,
        **_cycles(o.result),
    }


def tables(analyses: list[CandidateAnalysis]) -> dict[str, pd.DataFrame]:
    """``results`` (one row per candidate, ranked), ``operands``, ``instructions`` (who reads
    which band, piece and partitions in each WMMA instruction), ``loads`` (every local_load
    instruction of one K step: warp, pair, LDS partitions, lowest address) and ``allocation``."""
    return tables_from_rows([candidate_rows(c) for c in analyses])


def candidate_rows(c: CandidateAnalysis) -> dict[str, list[dict[str, Any]]]:
    """One candidate's rows of every table (``results`` before ranking: one row)."""
    ops, instr, loads = [], [], []
    row: dict[str, Any] = {
        "candidate": c.spec.name,
        "cta_register": _bases_text(c.wmma.reg_bases),
        "cta_warp": _bases_text(c.wmma.warp_bases),
        **_cycles(c.result),
        "tdm_instructions": sum(o.pieces.tdm_instructions for o in c.operands),
        "lds_bytes": int(c.allocation.size),
    }
    for o in c.operands:
        fields = operand_row(c, o)
        row.update({f"{OPERANDS[o.op]}_{k}": v for k, v in fields.items()})
        ops.append({"candidate": c.spec.name, "operand": OPERANDS[o.op], **fields})
        tiles = c.tiles.tolist()
        for r, per_warp in enumerate(tiles):
            for w, tile in enumerate(per_warp):
                b = tile[o.op]
                instr.append(
                    {
                        "candidate": c.spec.name,
                        "operand": OPERANDS[o.op],
                        "instruction": r,
                        "warp": w,
                        "pair": c.pairs[w],
                        "tile_row": tile[0],
                        "tile_col": tile[1],
                        "band": b,
                        "pieces": list(o.band_pieces[b]),
                        "partitions": list(o.band_partitions[b]),
                    }
                )
        loads.extend(_loads(c, o))
    alloc = [
        {"candidate": c.spec.name, **r, "partitions": list(r["partitions"])}
        for r in c.allocation.rows()
    ]
    return {
        "results": [row],
        "operands": ops,
        "instructions": instr,
        "loads": loads,
        "allocation": alloc,
    }


def infeasible_rows(name: str, reason: str) -> dict[str, list[dict[str, Any]]]:
    """The rows of a candidate that cannot run (its layouts do not fit the LDS or cannot be
    lowered): one ``results`` row naming the reason, nothing in the other tables."""
    return {
        "results": [{"candidate": name, "infeasible": reason}],
        **{t: [] for t in ("operands", "instructions", "loads", "allocation")},
    }


def tables_from_rows(parts: list[Mapping[str, list[dict[str, Any]]]]) -> dict[str, pd.DataFrame]:
    """The tables of :func:`tables` from each candidate's :func:`candidate_rows` (or
    :func:`infeasible_rows`), in order. Infeasible candidates rank last, their reason as the
    ranking's reason."""
    import pandas as pd

    rows = [dict(row) for part in parts for row in part["results"]]
    main = [r for r in rows if not r.get("infeasible")]
    ops, instr, loads, alloc = (
        [row for part in parts for row in part[name]]
        for name in ("operands", "instructions", "loads", "allocation")
    )
    places = {n: (p, why) for n, p, why in rank(main)} if main else {}
    for row in rows:
        if row.get("infeasible"):
            row["rank"], row["rank_reason"] = len(main) + 1, f"infeasible: {row['infeasible']}"
        else:
            row["rank"], row["rank_reason"] = places[row["candidate"]]
            row["infeasible"] = ""
    main = rows
    ints = {k for r in main for k, v in r.items() if isinstance(v, int) and not isinstance(v, bool)}
    nullable = ("a_partition_dim", "b_partition_dim")
    if len(main) > len(places):  # infeasible rows leave gaps: keep ints (and None), not floats
        nullable += tuple(sorted(ints - set(nullable)))
    table = _frame(main, nullable)
    table = table.sort_values("rank", kind="stable").reset_index(drop=True)
    first = ["candidate", "rank"]
    table = table[first + [c for c in table.columns if c not in first]]
    return {
        "results": table,
        "operands": _frame(ops, ("partition_dim",)),
        "instructions": pd.DataFrame(instr),
        "loads": pd.DataFrame(loads),
        "allocation": pd.DataFrame(alloc),
    }


def _loads(c: CandidateAnalysis, o: OperandAnalysis) -> list[dict[str, Any]]:
    """Per warp and Triton-level load: its LDS partitions (a bitmask per load, decoded once per
    mask) and lowest address, over the active lanes."""
    low, size = o.lowering, c.allocation.partition_size
    addr = low.addresses
    active = addr >= 0
    masks = np.bitwise_or.reduce(np.where(active, 1 << np.where(active, addr // size, 0), 0), -1)
    lowest = np.where(active, addr, np.iinfo(np.int64).max).min(axis=-1)
    masks, lowest = masks.tolist(), lowest.tolist()
    names = {m: [p for p in range(m.bit_length()) if m >> p & 1] for r in masks for m in r}
    conflict = set(o.lockstep_overlaps)
    return [
        {
            "candidate": c.spec.name,
            "operand": OPERANDS[o.op],
            "warp": w,
            "pair": c.pairs[w],
            "load": k,
            "instruction": low.instruction,
            "partitions": list(names[m]),
            "min_address": a,
            "lockstep_conflict": k in conflict,
        }
        for w, (row_masks, row_lowest) in enumerate(zip(masks, lowest, strict=True))
        for k, (m, a) in enumerate(zip(row_masks, row_lowest, strict=True))
    ]


def _frame(rows: list[dict[str, Any]], nullable: tuple[str, ...]) -> pd.DataFrame:
    """A DataFrame whose ``nullable`` columns keep ints and None (not floats and NaN)."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    for col in nullable:
        frame[col] = pd.Series([r.get(col) for r in rows], dtype=object)
    return frame


def display(table: pd.DataFrame) -> pd.DataFrame:
    """The main table for people: per operand, whether the SIMD pairs read the same bytes, the
    same physical partition, or neither (``apart``), and its pieces (count [shape] groups)."""
    import pandas as pd

    def pairs(row: pd.Series, op: str) -> str:
        if row[f"{op}_co_located"]:
            return "same bytes"
        return "same partition" if row[f"{op}_same_partition"] else "apart"

    def pieces(row: pd.Series, op: str) -> str:
        shape = "x".join(str(s) for s in row[f"{op}_piece_shape"])
        return f"{int(row[f'{op}_pieces'])} [{shape}] g{int(row[f'{op}_num_groups'])}"

    def loads(row: pd.Series) -> str:
        return "+".join(
            f"{int(row[f'{op}_loads_per_warp'])} {row[f'{op}_load'].removeprefix('ds_load_')}"
            for op in OPERANDS
        )

    rows = [r for _, r in table.iterrows()]
    ok = [not r.get("infeasible") for r in rows]

    def each(fn, r_ok):  # an infeasible candidate's cells say so
        return [fn(r) if good else "-" for r, good in zip(rows, r_ok, strict=True)]

    def number(column: str, fmt=str) -> list[str]:
        return each(lambda r: fmt(int(r[column])), ok)

    out = {
        "candidate": table["candidate"],
        "#": table["rank"],
        "cycles": number("cycles"),
        "part. stalls": number("partition_conflict_cycles"),
        "bank confl.": number("bank_conflict_cycles"),
        "TDM": number("tdm_instructions"),
        "LDS KiB": number("lds_bytes", lambda b: f"{b / 1024:.1f}"),
        "A pairs": each(lambda r: pairs(r, "a"), ok),
        "A pieces": each(lambda r: pieces(r, "a"), ok),
        "B pairs": each(lambda r: pairs(r, "b"), ok),
        "B pieces": each(lambda r: pieces(r, "b"), ok),
        "loads/warp": each(loads, ok),
        "why": table["rank_reason"],
    }
    return pd.DataFrame(out)


__all__ = [
    "candidate_rows",
    "display",
    "infeasible_rows",
    "operand_row",
    "tables",
    "tables_from_rows",
]
