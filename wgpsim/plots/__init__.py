"""Figures (top layer, beside the CLI): one module per figure family.

``ownership`` (who holds each element of a tile), ``bandwidth`` (B/cycle against burst length),
``candidates`` (layout candidates compared), ``timeline`` (the per-cycle event log). Every function
takes results or layouts and returns a ``matplotlib.figure.Figure``; ``save(fig, path)`` writes PNG
or SVG by suffix.
"""

FIGURES = {
    "lds_bandwidth": ("bandwidth", "drift"),
    "gemm_candidates": ("candidates", "drift"),
    "layout_search": ("search",),
}
"""Experiment kind -> the modules of this package whose ``result_figures(result)`` draw its
figures (``wgpsim run`` imports only these: matplotlib and one module, not every figure family)."""
