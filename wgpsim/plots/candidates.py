"""Figures of a ``gemm_candidates`` run: the candidates' LDS cycles, and per candidate who
computes which C tile (seed Figures 8 and 9) and which piece of A and B lies in which partition
(seed Figure 10).

* ``candidates_cycles``: one group of bars per candidate, LDS cycles of one K step next to its
  partition-conflict stall cycles and bank-conflict cycles.
* ``ownership_<candidate>``: the C block as a grid of instruction tiles, each labelled with the
  warp that computes it and the instruction (``w1 r3``), coloured by the warp's SIMD pair.
* ``pieces_<candidate>``: the same grid coloured by instruction (the tiles one instruction
  computes across all warps), A's bands down the left and B's along the top, each labelled with
  its piece (``pc0``) and coloured by the physical LDS partition it lies in.

>>> import pandas as pd
>>> table = pd.DataFrame({"candidate": ["plain", "split"], "cycles": [570, 316],
...                       "partition_conflict_cycles": [506, 0], "bank_conflict_cycles": [0, 0]})
>>> fig = cycles_figure(table)
>>> [t.get_text() for t in fig.axes[0].get_xticklabels()]
['plain', 'split']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure

from wgpsim.plots.captions import add_details
from wgpsim.plots.ownership import owners

_PARTITION_COLORS = ("#9ecae1", "#fdae6b", "#a1d99b", "#bcbddc", "#fdd0a2", "#d9d9d9")
_BARS = (
    ("cycles", "LDS cycles (one K step)"),
    ("partition_conflict_cycles", "partition-conflict stall cycles"),
    ("bank_conflict_cycles", "bank-conflict cycles"),
)


def cycles_figure(
    table: pd.DataFrame, *, title: str = "GEMM layout candidates", details: tuple[str, ...] = ()
) -> Figure:
    """Grouped bars: per candidate, its LDS cycles and conflict cycles (``table``: the main
    ``results`` table, in the order to draw); ``details`` (run name, overrides) a caption."""
    fig = Figure(figsize=(max(6, 1.6 * len(table)), 4.5), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(table))
    width = 0.8 / len(_BARS)
    for i, (column, label) in enumerate(_BARS):
        values = table[column].to_numpy(dtype=float)
        bars = ax.bar(x + (i - 1) * width, values, width, label=label, color=f"C{i}")
        ax.bar_label(bars, fmt="%d", fontsize=9)
    ax.set_xticks(x, [str(c) for c in table["candidate"]], rotation=20, ha="right")
    ax.set_ylabel("simulated cycles", fontsize=11)
    ax.set_title(title, fontsize=12)
    ax.legend(fontsize=9)
    ax.grid(True, axis="y", alpha=0.3)
    add_details(fig, details)
    return fig


def tile_warps(wmma: Any, block_mn: Sequence[int]) -> np.ndarray:
    """``[tileRow, tileCol]`` -> the warp computing that C tile (from the element ownership)."""
    rows, cols = wmma.tile_shape
    return owners(wmma, tuple(block_mn), "warp")[::rows, ::cols]


def _grid_axes(fig: Figure, ax, n_rows: int, n_cols: int) -> None:
    ax.set_xticks(np.arange(-0.5, n_cols, 1), minor=True)
    ax.set_yticks(np.arange(-0.5, n_rows, 1), minor=True)
    ax.grid(which="minor", color="white", linewidth=1)
    ax.tick_params(which="both", length=0)
    ax.set_xticks([])
    ax.set_yticks([])


def ownership_figure(candidate: Any, pair_names: Sequence[str], block_mn: Sequence[int]) -> Figure:
    """C tiles by warp and instruction, coloured by SIMD pair (seed Figures 8 and 9)."""
    tiles, pairs = candidate.tiles, candidate.pairs
    n_rows, n_cols = (int(b) // t for b, t in zip(block_mn, candidate.wmma.tile_shape, strict=True))
    warp = tile_warps(candidate.wmma, block_mn)
    instr = np.full((n_rows, n_cols), -1)
    for r in range(tiles.shape[0]):
        for w in range(tiles.shape[1]):
            instr[tiles[r, w, 0], tiles[r, w, 1]] = r
    pair = np.asarray(pairs)[warp]
    fig = Figure(figsize=(1 + 0.6 * n_cols, 1 + 0.6 * n_rows))
    ax = fig.add_subplot()
    colors = [matplotlib.colormaps["Pastel1"](i) for i in range(len(pair_names))]
    ax.imshow(pair, cmap=ListedColormap(colors), vmin=-0.5, vmax=len(colors) - 0.5)
    for (i, j), w in np.ndenumerate(warp):
        ax.text(j, i, f"w{w}\nr{instr[i, j]}", ha="center", va="center", fontsize=9)
    _grid_axes(fig, ax, n_rows, n_cols)
    handles = [
        matplotlib.patches.Patch(color=colors[p], label=f"pair {n}")
        for p, n in enumerate(pair_names)
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    ax.set_xlabel("N (instruction tiles)", fontsize=11)
    ax.set_ylabel("M (instruction tiles)", fontsize=11)
    ax.set_title(
        f"{candidate.spec.name}: warp (w) and instruction (r) of each C tile, by SIMD pair",
        fontsize=9,
    )
    return fig


def pieces_figure(candidate: Any, block_mn: Sequence[int]) -> Figure:
    """C tiles by instruction; A's bands (left) and B's (top) by piece and physical partition
    (seed Figure 10)."""
    tiles = candidate.tiles
    n_rows, n_cols = (int(b) // t for b, t in zip(block_mn, candidate.wmma.tile_shape, strict=True))
    instr = np.full((n_rows, n_cols), -1)
    for r in range(tiles.shape[0]):
        for w in range(tiles.shape[1]):
            instr[tiles[r, w, 0], tiles[r, w, 1]] = r
    fig = Figure(figsize=(2 + 0.6 * n_cols, 2 + 0.6 * n_rows))
    grid = fig.add_gridspec(2, 2, width_ratios=(1, n_cols), height_ratios=(1, n_rows))
    center = fig.add_subplot(grid[1, 1])
    left = fig.add_subplot(grid[1, 0], sharey=center)
    top = fig.add_subplot(grid[0, 1], sharex=center)
    n_instr = tiles.shape[0]
    cmap = ListedColormap([matplotlib.colormaps["tab20"](i % 20) for i in range(n_instr)])
    center.imshow(instr, cmap=cmap, vmin=-0.5, vmax=n_instr - 0.5, aspect="auto")
    for (i, j), r in np.ndenumerate(instr):
        center.text(j, i, f"r{r}", ha="center", va="center", fontsize=9)
    _grid_axes(fig, center, n_rows, n_cols)
    a, b = candidate.operands
    _strip(left, a, vertical=True)
    _strip(top, b, vertical=False)
    top.set_title(
        f"{candidate.spec.name}: pieces of A (left) and B (top) by LDS partition; C tiles by instruction",
        fontsize=9,
    )
    center.set_xlabel("N (instruction tiles)", fontsize=11)
    center.set_ylabel("M (instruction tiles)", fontsize=11)
    center.yaxis.set_label_position("right")
    fig.text(
        0.01,
        0.01,
        "Pn: the band's bytes lie in physical partition n;  "
        "P* (white): the band spans several partitions",
        fontsize=9,
    )
    return fig


def _strip(ax, operand: Any, *, vertical: bool) -> None:
    parts = [p[0] if len(p) == 1 else -1 for p in operand.band_partitions]
    labels = [
        "pc" + ",".join(str(x) for x in pc) if len(pc) <= 2 else f"pc{pc[0]}-{pc[-1]}"
        for pc in operand.band_pieces
    ]
    # One colour per physical partition; white where a band spans several.
    codes = np.array([p if p >= 0 else len(_PARTITION_COLORS) for p in parts])
    values = codes[:, None] if vertical else codes[None, :]
    cmap = ListedColormap([*_PARTITION_COLORS, "#ffffff"])
    ax.imshow(values, cmap=cmap, vmin=-0.5, vmax=len(_PARTITION_COLORS) + 0.5, aspect="auto")
    for k, (label, p) in enumerate(zip(labels, parts, strict=True)):
        text = f"{label}\nP{p}" if p >= 0 else f"{label}\nP*"
        x, y = (0, k) if vertical else (k, 0)
        ax.text(x, y, text, ha="center", va="center", fontsize=8, rotation=0)
    ax.set_xticks([])
    ax.set_yticks([])
    if vertical:
        ax.set_xlabel("A [M, K]:\nM bands", fontsize=10)
    else:
        ax.set_ylabel("B [K, N]:\nN bands", rotation=0, labelpad=36, fontsize=10, va="center")


def result_figures(result: Any) -> dict[str, Callable[[], Figure]]:
    """The figures of a ``gemm_candidates`` ExperimentResult, by file stem (drawn lazily)."""
    table = result.tables["results"]
    if "infeasible" in table:  # an infeasible candidate has nothing to draw
        table = table[table["infeasible"].fillna("") == ""]
    cfg = result.summary.config
    block_mn = cfg.gemm.block_mn
    pair_names = cfg.hw.pair_names
    figures: dict[str, Callable[[], Figure]] = {}
    if len(table):  # every candidate infeasible: no cycles to compare
        figures["candidates_cycles"] = lambda: cycles_figure(
            table,
            title="GEMM layout candidates: one K step of operand loads (simulated)",
            details=result.details,
        )
    for name in table["candidate"]:
        cand = result.summary.candidates[name]
        figures[f"ownership_{name}"] = lambda c=cand: ownership_figure(c, pair_names, block_mn)
        figures[f"pieces_{name}"] = lambda c=cand: pieces_figure(c, block_mn)
    return figures


__all__ = ["cycles_figure", "ownership_figure", "pieces_figure", "result_figures", "tile_warps"]
