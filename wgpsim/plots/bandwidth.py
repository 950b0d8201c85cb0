"""B/cycle against burst length: simulated points, the steady-state fit and the ceiling.

Every number is the model's (the legend and axis say "simulated"); "measured" is kept for
measurements a user brings (`wgpsim compare`).

The raw bandwidth of a burst rises with its length toward the steady rate because the fixed cost
(clock reads, barrier, one LDS round trip) is shared by more bytes; the fitted curve is
``bytes / (fixed + bytes / rate)`` and the peak (ports the layout can use x port B/cycle) is the
horizontal line it approaches.

>>> import pandas as pd
>>> from wgpsim.measures import fit_steady_state
>>> sweep = pd.DataFrame({"layout": ["plain"] * 3, "burst": [1, 8, 32],
...                       "bytes": [2048, 16384, 65536], "cycles": [75, 131, 323]})
>>> sweep["raw_bytes_per_cycle"] = sweep["bytes"] / sweep["cycles"]
>>> fig = bandwidth_vs_burst(sweep, {"plain": fit_steady_state(sweep["bytes"], sweep["cycles"])},
...                          {"plain": 256})
>>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()][:2]
['plain: simulated', 'plain: fit (256.0 B/cycle, fixed 67.0 cycles)']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from wgpsim.measures.fit import SteadyStateFit
from wgpsim.plots.captions import add_details

if TYPE_CHECKING:
    import pandas as pd

    from wgpsim.columns import Columns


def bandwidth_vs_burst(
    sweep: pd.DataFrame | Columns,
    fits: Mapping[str, SteadyStateFit],
    peaks: Mapping[str, float] | None = None,
    *,
    title: str = "LDS bandwidth against burst length",
    details: tuple[str, ...] = (),
) -> Figure:
    """One colour per layout: simulated raw B/cycle (points), the fit (curve), the peak (line,
    labelled above itself at the left, one label per distinct peak).

    Markers and dash patterns differ per layout too, so candidates with equal numbers stay
    visible on top of each other. The burst axis is log2 (bursts 1, 2, 4 ... 32 evenly
    spaced); ``details`` (the run's name and overrides) go in a small caption, not the title.

    ``sweep`` (a DataFrame or :class:`~wgpsim.columns.Columns`) needs columns ``layout``,
    ``burst``, ``bytes`` and ``raw_bytes_per_cycle``.
    """
    fig = Figure(figsize=(10, 4.5), layout="constrained")
    ax = fig.add_subplot()
    layouts = np.asarray(sweep["layout"], dtype=object)
    columns = {c: np.asarray(sweep[c]) for c in ("burst", "bytes", "raw_bytes_per_cycle")}
    labelled: dict[float, list[str]] = {}
    for i, name in enumerate(dict.fromkeys(layouts.tolist())):
        color = f"C{i % 10}"
        mine = np.flatnonzero(layouts == name)
        mine = mine[np.argsort(columns["burst"][mine], kind="stable")]
        rows = {c: values[mine] for c, values in columns.items()}
        _draw_layout(ax, i, name, rows, fits.get(name))
        if peaks and name in peaks:
            ax.axhline(
                peaks[name],
                linestyle=(i * 3, (6, 6)),  # offset dashes: equal peaks interleave
                color=color,
                label=f"{name}: peak",
            )
            labelled.setdefault(float(peaks[name]), []).append(name)
    for peak, names in labelled.items():  # above its line, on a white box: never crossed by it
        ax.annotate(
            f"peak {peak:g} B/cycle ({', '.join(names)})",
            (0.01, peak),
            xycoords=("axes fraction", "data"),
            xytext=(0, 4),
            textcoords="offset points",
            va="bottom",
            fontsize=9,
            color="0.25",
            bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
        )
    bursts = sorted({int(b) for b in columns["burst"]})
    ax.set_xscale("log", base=2)
    ax.set_xticks(bursts, [str(b) for b in bursts])
    ax.minorticks_off()
    ax.set_xlabel("burst length (loads per warp, log2 scale)", fontsize=11)
    ax.set_ylabel("simulated bandwidth (B/cycle)", fontsize=11)
    ax.tick_params(labelsize=10)
    ax.set_title(title, fontsize=12)
    top = max([*labelled, float(np.max(columns["raw_bytes_per_cycle"], initial=0))])
    ax.set_ylim(0, top * 1.15 if top else None)  # room for the top peak's label
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    add_details(fig, details)
    return fig


def _draw_layout(ax, i: int, name: str, rows: dict, fit: SteadyStateFit | None) -> None:
    """Layout ``i``'s simulated points and fitted curve (the curve on the log axis: geometric
    burst steps)."""
    color = f"C{i % 10}"
    ax.plot(
        rows["burst"],
        rows["raw_bytes_per_cycle"],
        _MARKERS[i % len(_MARKERS)],
        color=color,
        markersize=9 - 1.5 * (i % 3),
        fillstyle="full" if i % 2 == 0 else "none",
        label=f"{name}: simulated",
    )
    if fit is not None:
        bytes_per_burst = float((rows["bytes"] / rows["burst"])[0])
        burst = np.geomspace(rows["burst"].min(), rows["burst"].max(), 200)
        ax.plot(
            burst,
            fit.bandwidth(burst * bytes_per_burst),
            "-",
            color=color,
            dashes=_DASHES[i % len(_DASHES)],
            label=f"{name}: fit ({fit.rate:.1f} B/cycle, fixed {fit.fixed:.1f} cycles)",
        )


_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
_DASHES = ((), (6, 2), (2, 2), (8, 2, 2, 2))


def result_figures(result: Any) -> dict[str, Callable[[], Figure]]:
    """The figures of an ``lds_bandwidth`` ``ExperimentResult``, by file stem (drawn lazily)."""
    sweep, fits, peaks = result.tables["sweep"], result.summary.fits, result.summary.peaks
    title, details = "LDS bandwidth against burst length (simulated)", result.details
    return {
        "bandwidth_vs_burst": lambda: bandwidth_vs_burst(
            sweep, fits, peaks, title=title, details=details
        )
    }
