"""A timed loop's timeline: what each warp does in every cycle, and the ports' passes beneath.

One row per warp, coloured by its state (``wgpsim.kernel.loop.timing``): work, LDS issue
stall, ``wait_ds``, barrier behind LDS work (all three exposed LDS), other barrier cycles; one
row per port with every granted pass. The window is the first steady iterations by default.

>>> import numpy as np
>>> from wgpsim.kernel.loop.timing import time_loop
>>> from wgpsim.trace.trace import TraceBuilder
>>> b = TraceBuilder(1)
>>> b.load(0, "ds_load_b64", 8 * np.arange(32)); b.wait_ds(0, 0); b.delay(0, 50)
>>> lt = time_loop(b.build(), iteration=[0, 0, 0], label=["load", "wait", "work"])
>>> fig = loop_timeline_figure(lt)
>>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
['warp 0', 'port L', 'port C']
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from wgpsim.kernel.loop.timing import AT_BARRIER, BEHIND_LDS, ISSUE, WAIT, WORK  # noqa: E402

STATES = (
    (WORK, "work", "tab:gray"),
    (ISSUE, "LDS issue stall (exposed)", "tab:orange"),
    (WAIT, "wait_ds (exposed)", "tab:red"),
    (BEHIND_LDS, "barrier behind LDS (exposed)", "tab:pink"),
    (AT_BARRIER, "barrier, other", "tab:cyan"),
)
PAIR_COLOURS = ("tab:blue", "tab:green", "tab:purple", "tab:olive")


def loop_timeline_figure(lt, *, window: tuple[int, int] | None = None, ports=("L", "C")) -> Figure:
    """The figure of a ``LoopTiming``; ``window`` = (first, last) cycle, default the steady
    iterations (at most two of them)."""
    state = lt.state
    if window is None:
        window = _steady_window(lt)
    first, last = window
    nw = state.shape[0]
    rows = [f"warp {w}" for w in range(nw)] + [f"port {p}" for p in ports]
    fig, ax = plt.subplots(figsize=(14, 1.4 + 0.45 * len(rows)))
    for w in range(nw):
        for code, _, colour in STATES:
            ax.broken_barh(
                _runs(state[w, first : last + 1] == code, first),
                (w - 0.35, 0.7),
                facecolors=colour,
                edgecolors="none",
            )
    events = lt.result.events()
    granted = events[(events["status"] == "granted") & (events["cycle"] >= first)]
    granted = granted[granted["cycle"] <= last]
    pairs = sorted(events["pair"].unique())
    for k, port in enumerate(ports):
        mine = granted[granted["port"] == port]
        for pair, group in mine.groupby("pair"):
            ax.broken_barh(
                list(zip(group["cycle"], group["bank_cycles"], strict=True)),
                (nw + k - 0.35, 0.7),
                facecolors=PAIR_COLOURS[pairs.index(pair) % len(PAIR_COLOURS)],
                edgecolors="white",
                linewidth=0.3,
            )
    ax.set_yticks(range(len(rows)), rows)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(first, last + 1)
    ax.set_xlabel("cycle (simulated)")
    ax.set_title(lt.sentence(), fontsize=10, wrap=True)
    handles = [Patch(color=c, label=name) for _, name, c in STATES]
    handles += [
        Patch(color=PAIR_COLOURS[i % len(PAIR_COLOURS)], label=f"pass of pair {p}")
        for i, p in enumerate(pairs)
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def _steady_window(lt) -> tuple[int, int]:
    times = lt.op_times
    it = np.asarray(lt.iteration)
    lo = lt.steady_from
    hi = min(lt.iterations - 1, lo + 1)
    rows = (it >= lo) & (it <= hi)
    return int(times["arrive"][rows].min()), int(times["leave"][rows].max())


def _runs(mask: np.ndarray, offset: int) -> list[tuple[int, int]]:
    """(start, length) of every run of True in ``mask``, shifted by ``offset``."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(int(s) + offset, int(e - s)) for s, e in zip(starts, ends, strict=True)]
