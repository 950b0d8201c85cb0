"""Simulated against measured probe spans, one marker per probe, coloured by family, with the
line where the two agree (``wgpsim compare --figure``)."""

from __future__ import annotations

from typing import Any

__all__ = ["compare_figure"]


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
