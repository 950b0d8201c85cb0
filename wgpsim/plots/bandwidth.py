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

if TYPE_CHECKING:
    import pandas as pd

    from wgpsim.columns import Columns


def bandwidth_vs_burst(
    sweep: pd.DataFrame | Columns,
    fits: Mapping[str, SteadyStateFit],
    peaks: Mapping[str, float] | None = None,
    *,
    title: str = "LDS bandwidth against burst length",
) -> Figure:
    """One colour per layout: simulated raw B/cycle (points), the fit (curve), the peak (line).

    Markers and dash patterns differ per layout too, so candidates with equal numbers stay
    visible on top of each other.

    ``sweep`` (a DataFrame or :class:`~wgpsim.columns.Columns`) needs columns ``layout``,
    ``burst``, ``bytes`` and ``raw_bytes_per_cycle``.
    """
    fig = Figure(figsize=(10, 4.5), layout="constrained")
    ax = fig.add_subplot()
    layouts = np.asarray(sweep["layout"], dtype=object)
    columns = {c: np.asarray(sweep[c]) for c in ("burst", "bytes", "raw_bytes_per_cycle")}
    for i, name in enumerate(dict.fromkeys(layouts.tolist())):
        color = f"C{i % 10}"
        marker, dashes = _MARKERS[i % len(_MARKERS)], _DASHES[i % len(_DASHES)]
        mine = np.flatnonzero(layouts == name)
        mine = mine[np.argsort(columns["burst"][mine], kind="stable")]
        rows = {c: values[mine] for c, values in columns.items()}
        ax.plot(
            rows["burst"],
            rows["raw_bytes_per_cycle"],
            marker,
            color=color,
            markersize=9 - 1.5 * (i % 3),
            fillstyle="full" if i % 2 == 0 else "none",
            label=f"{name}: simulated",
        )
        fit = fits.get(name)
        if fit is not None:
            bytes_per_burst = float((rows["bytes"] / rows["burst"])[0])
            burst = np.linspace(rows["burst"].min(), rows["burst"].max(), 200)
            ax.plot(
                burst,
                fit.bandwidth(burst * bytes_per_burst),
                "-",
                color=color,
                dashes=dashes,
                label=f"{name}: fit ({fit.rate:.1f} B/cycle, fixed {fit.fixed:.1f} cycles)",
            )
        if peaks and name in peaks:
            ax.axhline(
                peaks[name],
                linestyle=(i * 3, (6, 6)),  # offset dashes: equal peaks interleave
                color=color,
                label=f"{name}: peak",
            )
    ax.set_xlabel("burst length (loads per warp)", fontsize=11)
    ax.set_ylabel("simulated bandwidth (B/cycle)", fontsize=11)
    ax.tick_params(labelsize=10)
    ax.set_title(title, fontsize=12)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    return fig


_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
_DASHES = ((), (6, 2), (2, 2), (8, 2, 2, 2))


def result_figures(result: Any) -> dict[str, Callable[[], Figure]]:
    """The figures of an ``lds_bandwidth`` ``ExperimentResult``, by file stem (drawn lazily)."""
    sweep, fits, peaks = result.tables["sweep"], result.summary.fits, result.summary.peaks
    title = result.title("LDS bandwidth against burst length")
    return {"bandwidth_vs_burst": lambda: bandwidth_vs_burst(sweep, fits, peaks, title=title)}
