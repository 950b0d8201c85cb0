"""Partition-conflict rate against issue jitter: one line per candidate, its CI as a band.

At jitter 0 the warps run in lock step (the seed's assumption) and the rate is one number; as
they drift apart, pairs that share a partition meet less often and the rate falls, while pairs
kept in separate partitions stay at 0 whatever the jitter. The band is the confidence interval
of the mean over the seeds (``drift.csv``; :mod:`wgpsim.analysis.drift`).

>>> import pandas as pd
>>> drift = pd.DataFrame({"layout": ["plain"] * 3 + ["partitioned"] * 3,
...     "jitter_cycles": [0, 8, 32] * 2, "seeds": 20,
...     "conflict_rate": [0.99, 0.97, 0.18, 0, 0, 0],
...     "conflict_rate_ci_low": [0.99, 0.96, 0.16, 0, 0, 0],
...     "conflict_rate_ci_high": [0.99, 0.98, 0.20, 0, 0, 0]})
>>> fig = conflict_rate_vs_jitter(drift)
>>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
['plain', 'partitioned']
>>> fig.axes[0].get_xlabel()
'issue jitter (cycles, 0..J per instruction)'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

#: Experiment kinds whose results :func:`result_figures` draws (``wgpsim run`` looks here).
KINDS = ("lds_bandwidth", "gemm_candidates")


def conflict_rate_vs_jitter(
    drift: pd.DataFrame,
    *,
    title: str = "Partition-conflict rate against issue jitter",
) -> Figure:
    """One line per candidate (the table's first column names it): mean rate against jitter,
    with the band ``[conflict_rate_ci_low, conflict_rate_ci_high]``."""
    name = drift.columns[0]
    fig = Figure(figsize=(8, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for i, (label, rows) in enumerate(drift.groupby(name, sort=False)):
        color = f"C{i % 10}"
        rows = rows.sort_values("jitter_cycles")
        ax.plot(rows["jitter_cycles"], rows["conflict_rate"], "o-", color=color, label=label)
        ax.fill_between(
            rows["jitter_cycles"],
            rows["conflict_rate_ci_low"],
            rows["conflict_rate_ci_high"],
            color=color,
            alpha=0.2,
            linewidth=0,
        )
    seeds = sorted(set(drift["seeds"])) if "seeds" in drift else []
    ax.set_xscale("symlog", linthresh=1)
    jitters = sorted(set(drift["jitter_cycles"]))
    ax.set_xticks(jitters, [str(j) for j in jitters])
    ax.set_xlabel("issue jitter (cycles, 0..J per instruction)")
    ax.set_ylabel("partition-stall cycles per pass")
    shown = f" ({', '.join(map(str, seeds))} seeds, mean and CI)" if seeds else ""
    ax.set_title(title + shown)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(title=name, fontsize="small")
    return fig


def result_figures(result: Any) -> dict[str, Callable[[], Figure]]:
    """``conflict_rate_vs_jitter`` when the result has a ``drift`` table, else nothing."""
    drift = result.tables.get("drift")
    if drift is None or drift.empty:
        return {}
    title = result.title("Partition-conflict rate against issue jitter")
    return {"conflict_rate_vs_jitter": lambda: conflict_rate_vs_jitter(drift, title=title)}


__all__ = ["KINDS", "conflict_rate_vs_jitter", "result_figures"]
