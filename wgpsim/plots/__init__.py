"""Figures (top layer, beside the CLI): one module per figure family.

``ownership`` (who holds each element of a tile), ``bandwidth`` (B/cycle against burst length),
``candidates`` (layout candidates compared), ``timeline`` (the per-cycle event log). Every function
takes results or layouts and returns a ``matplotlib.figure.Figure``; ``save(fig, path)`` writes PNG
or SVG by suffix.
"""
