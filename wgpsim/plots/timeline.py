"""The arbiter's timeline: which pass held which port in every cycle, and who waited.

One row per port (L, C) shows each granted pass as a bar as long as its bank cycles, coloured by
SIMD pair and hatched when bank conflicts make it longer than a cycle; one row per pair marks the cycles its head pass was stalled by a partition conflict.
Two pairs on one partition look like a single busy port and a stalled row underneath; two pairs
on separate partitions fill both ports.

>>> import wgpsim
>>> from wgpsim.trace import read_trace
>>> result = wgpsim.simulate(read_trace("examples/traces/two_pairs_conflict.jsonl"),
...                          record_events=True)
>>> fig = timeline_figure(result.events())
>>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
['port L', 'port C', 'pair A stalled', 'pair B stalled']
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from wgpsim.errors import WgpsimError  # noqa: E402

PAIR_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:purple")


def timeline_figure(
    events: pd.DataFrame,
    *,
    ports: tuple[str, ...] = ("L", "C"),
    window: tuple[int, int] | None = None,
    title: str | None = None,
) -> Figure:
    """Ports and stalls per cycle from ``Result.events()``; ``window`` = (first, last) cycle.

    ``ports`` names every port of the hardware (``hw.ports.names``), so an idle one shows too.
    """
    if events.empty:
        raise WgpsimError("the event log is empty: the trace has no LDS pass to draw")
    if window is not None:
        first, last = window
        events = events[(events["cycle"] >= first) & (events["cycle"] <= last)]
        if events.empty:
            raise WgpsimError(f"no arbiter event in cycles {first}..{last}")
    granted = events[events["status"] == "granted"]
    stalled = events[events["status"] == "stalled"]
    ports = list(ports) + sorted(set(granted["port"]) - set(ports))
    pairs = sorted(events["pair"].unique())
    rows = [f"port {p}" for p in ports] + [f"pair {p} stalled" for p in pairs]
    colour = {p: PAIR_COLOURS[i % len(PAIR_COLOURS)] for i, p in enumerate(pairs)}

    span = int(events["cycle"].max() - events["cycle"].min() + 1)
    fig, ax = plt.subplots(figsize=(min(16, max(9, 5 + span / 25)), 1.4 + 0.45 * len(rows)))
    for y, port in enumerate(ports):
        mine = granted[granted["port"] == port]
        for (pair, conflicted), group in mine.groupby(["pair", mine["bank_cycles"] > 1]):
            ax.broken_barh(
                list(zip(group["cycle"], group["bank_cycles"], strict=True)),
                (y - 0.35, 0.7),
                facecolors=colour[pair],
                edgecolors="white",
                linewidth=0.5,
                hatch="///" if conflicted else None,
            )
    for k, pair in enumerate(pairs):
        mine = stalled[stalled["pair"] == pair]
        y = len(ports) + k
        ax.broken_barh(
            [(c, 1) for c in mine["cycle"]],
            (y - 0.25, 0.5),
            facecolors="tab:red",
            edgecolors="none",
        )
    ax.set_yticks(range(len(rows)), rows)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("cycle (simulated)", fontsize=11)
    ax.tick_params(labelsize=10)
    stalls = len(stalled)
    bank = int((granted["bank_cycles"] - 1).sum())
    ax.set_title(
        title
        or f"LDS arbiter: {len(granted)} passes, {bank} bank-conflict cycles, "
        f"{stalls} partition-conflict stall cycles"
    )
    handles = [Patch(color=colour[p], label=f"pass of pair {p}") for p in pairs]
    if bank:
        handles.append(
            Patch(facecolor="white", edgecolor="grey", hatch="///", label="bank-conflicted pass")
        )
    handles.append(Patch(color="tab:red", label="stalled (partition conflict)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig
