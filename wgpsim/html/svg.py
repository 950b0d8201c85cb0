"""The report's pictures as inline SVG: a pass's lanes on banks, the pairs on partitions, the
LDS map of the buffers, the loop's timeline. Each returns an ``<svg>`` string (values escaped;
every shape has a ``<title>`` the browser shows on hover).

>>> from wgpsim.hw.config import load_hardware
>>> svg = pairs_svg({"A": [0], "B": [0, 1]}, load_hardware())
>>> svg.count("<rect"), "shared by both pairs" in svg
(10, True)
"""

from __future__ import annotations

import numpy as np

from wgpsim.html.page import Raw, esc

__all__ = ["COLORS", "bank_pass_svg", "lds_map_svg", "pairs_svg", "timeline_svg"]

COLORS = {"A": "#4C72B0", "B": "#DD8452", "both": "#C44E52", "none": "#BBBBBB"}
CONFLICT = "#d62728"


def _svg(width: float, height: float, body: str, label: str) -> Raw:
    return Raw(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img" aria-label="{esc(label)}">'
        f"{body}</svg>"
    )


def _rect(x, y, w, h, fill, title="", extra="") -> str:
    tip = f"<title>{esc(title)}</title>" if title else ""
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}"{extra}>'
        f"{tip}</rect>"
    )


def _text(x, y, text, anchor="start", fill="#222") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{fill}">{esc(text)}</text>'


def _runs(banks: tuple[int, ...]) -> list[tuple[int, int]]:
    """(first bank, count) of each run of consecutive banks."""
    out: list[list[int]] = []
    for b in sorted(set(banks)):
        if out and out[-1][0] + out[-1][1] == b:
            out[-1][1] += 1
        else:
            out.append([b, 1])
    return [(a, n) for a, n in out]


def bank_pass_svg(p, nbanks: int) -> Raw:
    """One pass (`wgpsim.kernel.op_passes.PassView`): a row per active lane, a column per
    bank; a lane's cells are the banks its bytes fall in; a bank serving more than one dword
    (a conflict) is a red column; a run of them is headed by its dword count (``×2``)."""
    cw, rh, left, top = 7, 7, 34, 16
    width, height = left + cw * nbanks + 4, top + rh * len(p.lanes) + 14
    parts = [_rect(left, top, cw * nbanks, rh * len(p.lanes), "#f7f7f7")]
    for b in p.conflicted_banks:
        n = p.load[b]
        parts.append(_rect(left + cw * b, top, cw, rh * len(p.lanes), "#fbd3d3",
                           f"bank {b}: {n} dwords, {n} bank cycles"))  # fmt: skip
        if b == 0 or p.load[b - 1] != n:  # once per run of banks with the same count
            parts.append(_text(left + cw * b, top - 4, f"×{n}", "start", CONFLICT))
    for row, (lane, banks) in enumerate(zip(p.lanes, p.banks, strict=True)):
        y = top + rh * row
        bad = any(p.load[b] > 1 for b in banks)
        color = CONFLICT if bad else COLORS["A"]
        for first, n in _runs(banks):
            parts.append(_rect(left + cw * first + 0.5, y + 0.5, cw * n - 1, rh - 1, color,
                               f"lane {lane}: banks {first}-{first + n - 1}"))  # fmt: skip
        if row % 4 == 0:
            parts.append(_text(left - 3, y + rh, f"l{lane}", "end"))
    for b in range(0, nbanks + 1, 16):
        x = left + cw * b
        parts.append(f'<line x1="{x}" y1="{top}" x2="{x}" y2="{top + rh * len(p.lanes)}" '
                     'stroke="#999" stroke-width="0.6"/>')  # fmt: skip
        parts.append(_text(x, height - 2, f"bank {b}" if b < nbanks else "", "middle"))
    label = f"pass {p.pass_index} of instruction {p.instruction_index}: lanes to banks"
    return _svg(width, height, "".join(parts), label)


def pairs_svg(pair_partitions: dict[str, list[int]], hw) -> Raw:
    """Which partitions each SIMD pair touches: a row per pair, a column per LDS partition; a
    partition both pairs touch is outlined red (the pairs can collide there)."""
    n = len(hw.partitions.lds)
    cw, rh, left = 78, 18, 60
    width, height = left + cw * n + 4, 20 + rh * len(pair_partitions) + 4
    counts = [sum(p in parts for parts in pair_partitions.values()) for p in range(n)]
    parts = [_text(left + cw * p + cw / 2, 13, f"partition {p}", "middle") for p in range(n)]
    for row, (pair, touched) in enumerate(pair_partitions.items()):
        y = 20 + rh * row
        parts.append(_text(left - 6, y + 13, f"pair {pair}", "end"))
        for p in range(n):
            hit = p in touched
            shared = hit and counts[p] > 1
            title = f"pair {pair} " + ("touches" if hit else "does not touch") + f" partition {p}"
            title += ": shared by both pairs" if shared else ""
            stroke = f' stroke="{CONFLICT}" stroke-width="2"' if shared else ' stroke="#ccc"'
            fill = COLORS.get(pair, COLORS["A"]) if hit else "#fff"
            parts.append(_rect(left + cw * p + 1, y + 1, cw - 2, rh - 2, fill, title, stroke))
    return _svg(width, height, "".join(parts), "partitions each SIMD pair touches")


def lds_map_svg(report, hw) -> Raw:
    """The buffers over the LDS partitions, each byte coloured by the pair that reads it
    (`wgpsim.plots.lds_map`'s picture, drawn here as SVG)."""
    from wgpsim.plots.lds_map import _read_bytes, _segments, buffer_pieces

    reads = _read_bytes(report, hw)
    pieces = buffer_pieces(report)
    part = hw.partitions.size
    end = max([off + size for _, off, size in pieces] + [part])
    span = -(-end // part) * part
    left, plot_w, rh = 110, 900, 22
    scale = plot_w / span
    height = 24 + rh * max(len(pieces), 1) + 20
    out = []
    step = max(256, end // 512)
    for row, (label, off, size) in enumerate(pieces):
        y = 24 + rh * row
        out.append(_text(left - 6, y + 15, label, "end"))
        for start, stop, who in _segments(off, off + size, reads, step):
            title = f"{label}: bytes {start}-{stop - 1}, read by " + (
                {"both": "both pairs", "none": "no pair"}.get(who, f"pair {who}")
            )
            out.append(_rect(left + start * scale, y + 3, max((stop - start) * scale, 0.8),
                             rh - 6, COLORS[who], title))  # fmt: skip
    for p in range(0, span + 1, part):
        x = left + p * scale
        out.append(f'<line x1="{x:.1f}" y1="16" x2="{x:.1f}" y2="{height - 16}" '
                   'stroke="#333" stroke-dasharray="4 3"/>')  # fmt: skip
        if p < span:
            out.append(_text(x + part * scale / 2, 13, f"partition {p // part}", "middle"))
        out.append(_text(x, height - 4, f"{p // 1024} KiB", "middle"))
    return _svg(left + plot_w + 30, height, "".join(out), "LDS map of the buffers")


def timeline_svg(lt, ports=("L", "C")) -> Raw:
    """Every warp's state per cycle and the ports' passes, over the steady window
    (`wgpsim.plots.loop_timeline`'s picture, drawn here as SVG). A window wider than the
    picture's pixels is drawn a column per pixel, each showing its most frequent state (a
    port: busy when any pass, in the colour of the pair with the most cycles)."""
    from matplotlib.colors import to_hex

    from wgpsim.plots.loop_timeline import PAIR_COLOURS, STATES, _steady_window

    first, last = _steady_window(lt)
    nw = lt.state.shape[0]
    left, plot_w, rh = 70, 1100, 20
    scale = plot_w / (last - first + 1)
    rows = [f"warp {w}" for w in range(nw)] + [f"port {p}" for p in ports]
    height = 10 + rh * len(rows) + 22
    out = [_text(left - 6, 10 + rh * i + 14, name, "end") for i, name in enumerate(rows)]
    names = {code: (name, to_hex(colour)) for code, name, colour in STATES}
    for w in range(nw):
        for a, b, code in _binned(lt.state[w, first : last + 1], plot_w, idle=0):
            name, colour = names.get(int(code), ("?", "#000"))
            out.append(_rect(left + a * scale, 10 + rh * w + 3, (b - a) * scale, rh - 6, colour,
                             f"warp {w}: {name}, cycles {first + a}-{first + b - 1}"))  # fmt: skip
    events = lt.result.events()
    granted = events[(events["status"] == "granted") & events["cycle"].between(first, last)]
    pairs = sorted(events["pair"].unique())
    for k, port in enumerate(ports):
        busy = np.full(last - first + 1, -1, np.int64)
        mine = granted[granted["port"] == port]
        for c, n, pair in zip(mine["cycle"], mine["bank_cycles"], mine["pair"], strict=True):
            busy[c - first : c - first + n] = pairs.index(pair)
        for a, b, code in _binned(busy, plot_w, idle=-1):
            colour = to_hex(PAIR_COLOURS[int(code) % len(PAIR_COLOURS)])
            out.append(_rect(left + a * scale, 10 + rh * (nw + k) + 3, (b - a) * scale, rh - 6,
                             colour, f"port {port}: passes of pair {pairs[int(code)]}, cycles "
                             f"{first + a}-{first + b - 1}"))  # fmt: skip
    for t in range(0, last - first + 1, max(100, (last - first) // 10 // 100 * 100)):
        out.append(_text(left + t * scale, height - 4, str(first + t), "middle"))
    return _svg(left + plot_w + 20, height, "".join(out), "the loop's timeline")


def _binned(codes: np.ndarray, columns: int, idle: int) -> list[tuple[int, int, int]]:
    """Runs ``(first, end, code)`` of the per-cycle ``codes`` drawn in at most ``columns``
    columns: each column takes its most frequent code other than ``idle`` (``idle`` only when
    it holds nothing else); neighbouring columns of one code merge.

    >>> _binned(np.array([0, 1, 1, 2, 2, 2, 0, 0]), 4, idle=0)
    [(0, 4, 1), (4, 6, 2)]
    """
    n = len(codes)
    edges = np.arange(n + 1) if n <= columns else np.linspace(0, n, columns + 1).astype(int)
    values = np.unique(codes[codes != idle])
    if not len(values):
        return []
    counts = np.stack([np.add.reduceat((codes == v).astype(np.int64), edges[:-1]) for v in values])
    column = np.where(counts.sum(axis=0) > 0, values[counts.argmax(axis=0)], idle)
    runs: list[list[int]] = []
    for i, code in enumerate(column.tolist()):
        if code == idle:
            continue
        if runs and runs[-1][2] == code and runs[-1][1] == edges[i]:
            runs[-1][1] = int(edges[i + 1])
        else:
            runs.append([int(edges[i]), int(edges[i + 1]), code])
    return [tuple(r) for r in runs]


def legend(items: list[tuple[str, str]]) -> Raw:
    """A colour legend: (colour, label) pairs."""
    spans = "".join(f'<span style="background:{esc(c)}"></span>{esc(t)}' for c, t in items)
    return Raw(f'<p class="legend">{spans}</p>')
