"""Ownership maps: which warp, lane, register or SIMD pair holds each element of a tile.

Like the seed's Figures 1, 2, 8 and 9: one cell per tensor element (dim 0 down, dim 1 across),
coloured by its holder. Where several threads hold an element (broadcast), the first one (lowest
warp, then lane, then register) is drawn.

>>> from wgpsim.layout.mma.wmma import AMDWMMALayout
>>> fig = ownership_figure(AMDWMMALayout.from_warps_per_cta([2, 2]), (32, 32), by="warp")
>>> fig.axes[0].get_title()
'warp owning each element of a 32x32 tile'
>>> owners(AMDWMMALayout.from_warps_per_cta([2, 2]), (32, 32), "warp")[::16, ::16].tolist()
[[0, 1], [2, 3]]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.figure import Figure  # drawn without pyplot: no GUI backend involved

from wgpsim.errors import LayoutError, WgpsimError
from wgpsim.hw import HardwareConfig, load_hardware
from wgpsim.layout.notation import parse_any, to_text

BY = ("warp", "lane", "register", "simd_pair")
_LABEL_CELLS = 1024  # write the owner in each cell up to this many cells
_SUFFIXES = (".png", ".svg")


MAX_CELLS = 1 << 20
"""Most elements an ownership map draws (a million cells is already far past legible)."""


def owners(
    layout: Any, shape: Sequence[int], by: str, hw: HardwareConfig | None = None
) -> np.ndarray:
    """Per element of a 2-D ``shape``: the warp / lane / register / SIMD pair index holding it
    (-1 where no thread holds it)."""
    if by not in BY:
        raise LayoutError(f"ownership: 'by' must be one of {', '.join(BY)}, got {by!r}")
    layout = parse_any(layout)
    if len(shape) != 2:
        raise LayoutError(f"ownership: shape {list(shape)} must be 2-D")
    if shape[0] * shape[1] > MAX_CELLS:
        raise LayoutError(
            f"ownership: shape {list(shape)} has {shape[0] * shape[1]:,} elements, too many to "
            f"draw (valid: at most {MAX_CELLS:,}; plot a tile of the tensor)"
        )
    ll = layout.to_linear_layout(shape)
    if ll.has_in_dim("offset"):
        raise LayoutError(
            f"ownership: {to_text(layout)} is a shared layout; give a distributed one"
        )
    sizes = [ll.in_dim_size(d) for d in ("warp", "lane", "register")]
    grid = np.meshgrid(*(np.arange(n) for n in sizes), indexing="ij")
    out = ll.apply(dict(zip(("warp", "lane", "register"), grid, strict=True)))
    row, col = (np.broadcast_to(out[d], grid[0].shape).ravel() for d in ("dim0", "dim1"))
    holder = {"warp": grid[0], "lane": grid[1], "register": grid[2]}.get(by, grid[0]).ravel()
    if by == "simd_pair":
        hw = hw or load_hardware()
        holder = np.array([hw.pair_of_warp(int(w)) for w in range(sizes[0])])[holder]
    result = np.full(tuple(shape), -1, dtype=np.int64)
    # Iterate in reverse so the first holder (lowest warp, lane, register) is written last.
    result[row[::-1], col[::-1]] = holder[::-1]
    return result


def ownership_figure(
    layout: Any,
    shape: Sequence[int],
    by: str = "warp",
    *,
    title: str | None = None,
    hw: HardwareConfig | None = None,
) -> Figure:
    """The ownership map of ``layout`` on a 2-D ``shape``, coloured ``by`` holder."""
    grid = owners(layout, shape, by, hw)
    names = list((hw or load_hardware()).pair_names) if by == "simd_pair" else None
    n = len(names) if names else int(grid.max()) + 1  # every pair in the legend, even if idle
    rows, cols = grid.shape
    fig = Figure(figsize=(min(14, 2 + cols * 0.35), min(12, 1.5 + rows * 0.3)))
    ax = fig.add_subplot()
    cmap = ListedColormap([matplotlib.colormaps["tab20"](i % 20) for i in range(n)])
    image = ax.imshow(
        np.ma.masked_less(grid, 0),
        cmap=cmap,
        norm=BoundaryNorm(np.arange(-0.5, n + 0.5), n),
        interpolation="nearest",
        aspect="equal",
    )
    if grid.size <= _LABEL_CELLS:
        prefix = {"warp": "w", "lane": "L", "register": "r", "simd_pair": ""}[by]
        for (r, c), v in np.ndenumerate(grid):
            if v >= 0:
                text = names[v] if names else f"{prefix}{v}"
                ax.text(c, r, text, ha="center", va="center", fontsize=6)
    ticks = np.arange(n) if n <= 32 else np.linspace(0, n - 1, 9).round()
    bar = fig.colorbar(image, ax=ax, ticks=ticks, fraction=0.046, pad=0.04)
    bar.set_label(by.replace("_", " "))
    if names:
        bar.set_ticklabels(names)
    ax.set_xlabel("dim 1")
    ax.set_ylabel("dim 0")
    ax.set_title(title or f"{by.replace('_', ' ')} owning each element of a {rows}x{cols} tile")
    return fig


def check_path(path: str | Path) -> Path:
    """``path`` as a Path if it ends in a suffix ``save`` can write."""
    path = Path(path)
    if path.suffix.lower() not in _SUFFIXES:
        raise WgpsimError(f"{path}: plot files must end in {' or '.join(_SUFFIXES)}")
    return path


def save(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` as PNG or SVG, chosen by the file suffix."""
    path = check_path(path)
    fig.savefig(path, dpi=150, bbox_inches="tight")
    return path
