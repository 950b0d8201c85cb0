"""Simulated against measured probe spans, one marker per probe, coloured by family, with the
line where the two agree (``wgpsim compare --figure``); for a gfx942 / gfx950 lane-pair kit, the
extra conflict cycles per instruction of each probe, measured against simulated."""

from __future__ import annotations

from typing import Any

__all__ = ["compare_figure", "lane_compare_figure"]


def compare_figure(per_probe: Any) -> Any:
    """A figure of ``compare``'s per-probe table (columns family, measured, simulated)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 5))
    for family, rows in per_probe.groupby("family", sort=False):
        ax.scatter(rows["measured"], rows["simulated"], label=family, s=22)
    low = max(1.0, float(min(per_probe["measured"].min(), per_probe["simulated"].min())) * 0.8)
    high = float(max(per_probe["measured"].max(), per_probe["simulated"].max())) * 1.2
    ax.plot([low, high], [low, high], color="0.5", lw=1, ls="--", label="simulated = measured")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured cycles (median over warps and runs)")
    ax.set_ylabel("simulated cycles")
    ax.set_title("wgpsim probes: simulated vs measured")
    ax.legend(fontsize=8)
    return fig


def lane_compare_figure(per_probe: Any, conflict: float) -> Any:
    """A figure of a lane-pair kit's per-probe table (``lane_compare``: columns op, measured,
    simulated, agrees): extra conflict cycles per instruction, one marker per probe, coloured by
    instruction, hollow where the two disagree on whether the pair conflicts (the dotted lines
    at ``conflict`` cycles split conflict from none)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 5))
    for op, rows in per_probe.groupby("op", sort=False):
        (dot,) = ax.plot(rows.loc[rows["agrees"], "measured"], rows.loc[rows["agrees"],
                         "simulated"], "o", ms=5, label=op)  # fmt: skip
        wrong = rows.loc[~rows["agrees"]]
        ax.plot(wrong["measured"], wrong["simulated"], "o", ms=7, mfc="none", color=dot.get_color())
    high = max(1.0, float(max(per_probe["measured"].max(), per_probe["simulated"].max()))) * 1.1
    ax.plot([0, high], [0, high], color="0.5", lw=1, ls="--", label="simulated = measured")
    ax.axvline(conflict, color="0.7", lw=1, ls=":")
    ax.axhline(conflict, color="0.7", lw=1, ls=":")
    ax.set_xlabel("measured extra cycles per instruction (hollow: disagrees on conflict)")
    ax.set_ylabel("simulated extra cycles per instruction")
    ax.set_title("wgpsim lane-pair probes: simulated vs measured")
    ax.legend(fontsize=8)
    return fig
