"""Partition-conflict rate against issue jitter: one line per candidate, its CI as a band.

At jitter 0 the warps run in lock step (the AMD blog's assumption) and the rate is one number; as
they drift apart, pairs that share a partition meet less often and the rate falls, while pairs
kept in separate partitions stay at 0 whatever the jitter (drawn on the axis). The simulated
cycles, beside it, rise with the jitter: at 32 cycles both layouts take twice as long. The band is the confidence interval
of the mean over the seeds (``drift.csv``; :mod:`wgpsim.measures.drift`).

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
'issue jitter J (cycles, 0..J per instruction)'

With simulated cycles (the clock reads' span), a second panel shows what the drift costs (the blog's plain layout at
J = 32: 323 -> 646 cycles, x2.0, although its conflict rate fell to 0.19):

>>> drift["cycles"] = [323, 324, 646, 195, 221, 646]
>>> fig = conflict_rate_vs_jitter(drift)
>>> [t.get_text() for t in fig.axes[1].texts]
['plain x2.0', 'partitioned x3.3']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure

from wgpsim.plots.captions import add_details

if TYPE_CHECKING:  # a drift table is a DataFrame; `wgpsim run` without one imports no pandas
    import pandas as pd


def conflict_rate_vs_jitter(
    drift: pd.DataFrame,
    *,
    title: str = "Partition-conflict rate against issue jitter",
    details: tuple[str, ...] = (),
) -> Figure:
    """Left: one line per candidate (the table's first column names it), the mean
    partition-conflict rate against jitter with the band ``[conflict_rate_ci_low,
    conflict_rate_ci_high]``; a candidate at 0 everywhere is drawn on the axis, not under it.
    Right (when the table has ``cycles``): the simulated cycles against jitter, each line
    labelled with its growth from lock step at the largest jitter (``x2.0``): a falling
    conflict rate does not mean a faster kernel when the drift itself costs cycles (the label
    left of the last point, inside the axes); ``details`` go in a small caption."""
    name = drift.columns[0]
    panels = 2 if "cycles" in drift else 1
    fig = Figure(figsize=(6.5 * panels, 4.8), layout="constrained")
    axes = fig.subplots(1, panels, squeeze=False)[0]
    jitters = sorted(set(drift["jitter_cycles"]))
    groups = list(drift.groupby(name, sort=False))
    for i, (label, rows) in enumerate(groups):
        color, marker = f"C{i % 10}", _MARKERS[i % len(_MARKERS)]
        rows = rows.sort_values("jitter_cycles")
        for ax, column in zip(axes, ("conflict_rate", "cycles"), strict=False):
            ax.plot(
                rows["jitter_cycles"],
                rows[column],
                marker=marker,
                linestyle="-",
                color=color,
                markersize=8 - 1.5 * (i % 3),
                label=label,
                clip_on=False,  # a line at 0 stays visible on the axis
                zorder=3,
            )
            low, high = f"{column}_ci_low", f"{column}_ci_high"
            if low in rows and high in rows:
                ax.fill_between(
                    rows["jitter_cycles"], rows[low], rows[high], color=color, alpha=0.2, lw=0
                )
        if panels == 2:
            first, last = rows["cycles"].iloc[0], rows["cycles"].iloc[-1]
            if first:  # left of the last point, inside the axes: never cut by the edge
                axes[1].annotate(
                    f"{label} x{last / first:.1f}",
                    (rows["jitter_cycles"].iloc[-1], last),
                    textcoords="offset points",
                    xytext=(-10, 4 + 14 * i),
                    ha="right",
                    va="bottom",
                    color=color,
                    fontsize=10,
                )
    seeds = sorted(set(drift["seeds"])) if "seeds" in drift else []
    for ax in axes:
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xticks(jitters, [str(j) for j in jitters])
        ax.set_xlabel("issue jitter J (cycles, 0..J per instruction)", fontsize=11)
        ax.tick_params(labelsize=10)
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
        ax.margins(x=0.08)
    axes[0].set_ylabel("simulated partition-stall cycles per pass", fontsize=11)
    axes[0].set_title("partition-conflict rate", fontsize=11)
    axes[0].legend(title=name, fontsize=10)
    if panels == 2:
        axes[1].set_ylim(0, 1.25 * float(drift["cycles"].max()))  # room for the labels above
        axes[1].set_ylabel("simulated cycles", fontsize=11)
        axes[1].set_title("simulated cycles (drift costs cycles too)", fontsize=11)
    counts = f", {', '.join(map(str, seeds))} seeds, mean and CI" if seeds else ""
    shown = f" (simulated{counts})"
    fig.suptitle(title + shown, fontsize=12)
    add_details(fig, details)
    return fig


_MARKERS = ("o", "s", "^", "D", "v")


def result_figures(result: Any) -> dict[str, Callable[[], Figure]]:
    """``conflict_rate_vs_jitter`` when the result has a ``drift`` table, else nothing."""
    drift = result.tables.get("drift")
    if drift is None or drift.empty:
        return {}
    title, details = "Partition-conflict rate against issue jitter", result.details
    return {
        "conflict_rate_vs_jitter": lambda: conflict_rate_vs_jitter(
            drift, title=title, details=details
        )
    }


__all__ = ["conflict_rate_vs_jitter", "result_figures"]
