"""Ownership panels of one lowered LDS instruction: who reads each element, who receives it.

Like the seed's Figures 1 and 2: the elements one instruction moves, drawn in tensor coordinates
(dim 0 down, dim 1 across). The left panel labels each element with the source lane ``S`` whose
LDS read supplied it, the right panel with the destination lane ``D`` (and register ``R``) that
holds it afterwards; colour groups the lanes into blocks of eight. For a plain load both panels
agree; for ``ds_load_tr`` the exchange shows as the transpose of each 8x8 block.

>>> from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
>>> from wgpsim.layout.shared import SwizzledSharedLayout
>>> from wgpsim.trace.lowering import lower
>>> mma = AMDWMMALayout.from_warps_per_cta([2, 2], instr_shape=(16, 16, 32))
>>> low = lower(SwizzledSharedLayout(1, 1, 1, (1, 0)), DotOperandLayout(1, mma, 8), (64, 128), "fp16")
>>> src, dst, reg = panels(low)       # Figure 2a: S r reads 8 N-contiguous elements of K row r
>>> src[:2, 6:10].tolist(), dst[:2, 6:10].tolist()
([[0, 0, 8, 8], [1, 1, 9, 9]], [[6, 7, 8, 9], [6, 7, 8, 9]])
>>> transpose_figure(low).axes[1].get_title().replace(chr(10), " ")
'destination lane D (register R) after ds_load_tr16_b128'
"""

from __future__ import annotations

import textwrap

import matplotlib
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from wgpsim.errors import LayoutError
from wgpsim.trace.emulate import GROUP_LANES
from wgpsim.trace.lowering import Lowering

_LABEL_CELLS = 1024


def panels(low: Lowering, k: int = 0, warp: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(source lane, destination lane, destination register)`` grids of instruction ``k``.

    The grid holds the tensor rows and columns the instruction touches (compacted, in order);
    -1 marks elements of that box it does not move.
    """
    if not 0 <= k < low.num_instructions or not 0 <= warp < low.num_warps:
        raise LayoutError(
            f"instruction {k} of warp {warp}: valid are 0..{low.num_instructions - 1} of "
            f"warps 0..{low.num_warps - 1}"
        )
    src = low.sources(k, warp)
    dims = [d for d in src if d.startswith("dim")]
    if len(dims) != 2:
        raise LayoutError(f"transpose panels need a 2-D tensor, got shape {list(low.shape)}")
    rows, r_idx = np.unique(src[dims[0]].ravel(), return_inverse=True)
    cols, c_idx = np.unique(src[dims[1]].ravel(), return_inverse=True)
    out = [np.full((rows.size, cols.size), -1, dtype=np.int64) for _ in range(3)]
    for grid, key in zip(out, ("source_lane", "lane", "register"), strict=True):
        grid[r_idx, c_idx] = src[key].ravel()
    return out[0], out[1], out[2]


def transpose_figure(low: Lowering, k: int = 0, warp: int = 0) -> Figure:
    """Source and destination ownership of instruction ``k`` of ``warp`` (Figures 1, 2)."""
    source, dest, reg = panels(low, k, warp)
    rows, cols = source.shape
    # at least 9 inches wide, so a narrow box (a 32x1 column of scalar loads) keeps readable
    # titles and labels
    fig = Figure(figsize=(min(18, max(9, 2 + cols * 0.7)), min(14, 2 + rows * 0.4)))
    groups = max(1, int(max(source.max(), dest.max())) // GROUP_LANES + 1)
    colours = [matplotlib.colormaps["Pastel1"](i % 9) for i in range(groups)]
    cmap = ListedColormap(colours).with_extremes(bad="white")
    titles = (
        "source lane S (its LDS read)",
        f"destination lane D (register R) after {low.instruction}",
    )
    for i, (grid, title) in enumerate(zip((source, dest), titles, strict=True)):
        ax = fig.add_subplot(1, 2, i + 1)
        shown = np.ma.masked_less(grid // GROUP_LANES, 0)
        ax.imshow(shown, cmap=cmap, vmin=-0.5, vmax=groups - 0.5, interpolation="nearest")
        ax.set_title(textwrap.fill(title, 32), fontsize=9)
        ax.set_xticks(range(0, cols, max(1, cols // 8)))
        ax.set_xlabel(textwrap.fill(f"dim1 (columns of the {rows}x{cols} box)", 32))
        ax.set_ylabel("dim0")
        if rows * cols <= _LABEL_CELLS:
            for (r, c), lane in np.ndenumerate(grid):
                if lane < 0:
                    continue
                text = f"S{lane}" if i == 0 else f"D{lane}\nR{reg[r, c]}"
                ax.text(c, r, text, ha="center", va="center", fontsize=5)
    fig.suptitle(
        f"{low.instruction}, instruction {k} of warp {warp} "
        f"({low.num_instructions} per warp, {low.eligibility})",
        fontsize=10,
    )
    fig.tight_layout()
    return fig
