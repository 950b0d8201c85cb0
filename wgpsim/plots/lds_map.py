"""The LDS map of a kernel: its buffers over the 64 KiB physical partitions, colored by which
SIMD pair reads them.

One row per buffer piece (a partitioned buffer has one per partition), drawn at its byte range
on an axis cut at every partition boundary; each piece is split into the bytes read by pair A
only, pair B only, both (the co-location the AMD blog's Part II removes), or neither (written
only, or by an op that is not modelled). Every stage of a multi-buffered alloc counts as read by
the op that reads it through a stage index (stage 1 in the next iteration, and so on).

>>> from wgpsim.kernel.report import kernel_report
>>> fig = lds_map_figure(kernel_report("examples/kernels/lds_bandwidth_partitioned"))
>>> [t.get_text() for t in fig.axes[0].get_yticklabels()]
['%smem[p0]', '%smem[p1]']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from wgpsim.hw.config import HardwareConfig, load_hardware
from wgpsim.trace.instructions import INSTRUCTIONS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from wgpsim.kernel.report import KernelReport

COLORS = {"A": "#4C72B0", "B": "#DD8452", "both": "#C44E52", "none": "#BBBBBB"}


def _read_bytes(report: KernelReport, hw: HardwareConfig) -> dict[str, np.ndarray]:
    """Per pair, the sorted distinct byte addresses its lanes read (loads only), every stage of
    a multi-buffered alloc included (:func:`_stages`)."""
    out: dict[str, list[np.ndarray]] = {name: [] for name in hw.pair_names}
    for low in _stages(report, hw):
        if low.lowering is None or not INSTRUCTIONS[low.instruction].is_load:
            continue
        width = INSTRUCTIONS[low.instruction].bytes_per_lane
        for w in range(low.lowering.num_warps):
            a = low.lowering.addresses[w]
            a = a[a >= 0]
            out[hw.pair_names[hw.pair_of_warp(w)]].append((a[:, None] + np.arange(width)).ravel())
    return {k: np.unique(np.concatenate(v)) if v else np.zeros(0, np.int64) for k, v in out.items()}


def _stages(report: KernelReport, hw: HardwareConfig) -> list:
    """The report's lowerings, and for an op that reads a multi-buffered alloc through a
    computed or loop-carried stage index (the report lowers its first stage only), its lowering
    of every other stage: the same op reads them in later iterations (as ``--loop-timing``
    assumes: the index advances one stage per iteration)."""
    from wgpsim.kernel.lowering import allocate_kernel, carried_stage, computed_stage, lower_op

    kernel, out, alloc = report.model, list(report.lowerings), None
    for low in report.lowerings:
        op = low.op
        staged = computed_stage(op) or carried_stage(op) is not None
        if kernel is None or low.lowering is None or not staged or op.buffer is None:
            continue
        alloc = allocate_kernel(kernel, hw) if alloc is None else alloc
        out += [
            lower_op(kernel, op, alloc, hw, stage=s) for s in range(kernel.buffer(op.buffer).stages)
        ]
    return out


def _segments(lo: int, hi: int, reads: dict[str, np.ndarray], step: int) -> list[tuple]:
    """(start, end, who) runs over [lo, hi) in chunks of ``step`` bytes."""
    names = list(reads)
    runs: list[tuple[int, int, str]] = []
    for start in range(lo, hi, step):
        end = min(start + step, hi)
        hit = [n for n in names if np.any((reads[n] >= start) & (reads[n] < end))]
        who = "both" if len(hit) > 1 else (hit[0] if hit else "none")
        if runs and runs[-1][2] == who and runs[-1][1] == start:
            runs[-1] = (runs[-1][0], end, who)
        else:
            runs.append((start, end, who))
    return runs


def buffer_pieces(report: KernelReport) -> list[tuple[str, int, int]]:
    """(label, offset, bytes) of every placed piece of every buffer: a partitioned buffer's
    pieces as ``name[p0]``, ``name[p1]``, ..."""
    pieces = []
    for b in report.buffers:
        sizes = b["piece_bytes"] or ([b["bytes"]] if b["bytes"] else [])
        for i, (off, size) in enumerate(zip(b["offsets"], sizes, strict=False)):
            label = f"{b['name']}[p{i}]" if len(b["offsets"]) > 1 else b["name"]
            pieces.append((label, off, size))
    return pieces


def lds_map_figure(report: KernelReport, hw: HardwareConfig | None = None) -> Figure:
    """The LDS map of ``report`` (see the module docstring)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    hw = load_hardware() if hw is None else hw
    reads = _read_bytes(report, hw)
    pieces = buffer_pieces(report)
    part = hw.partitions.size
    end = max([off + size for _, off, size in pieces] + [part])
    fig = Figure(figsize=(9, 0.6 * max(len(pieces), 2) + 1.4))
    ax = fig.add_subplot()
    step = max(256, end // 512)
    for row, (_, off, size) in enumerate(pieces):
        for start, stop, who in _segments(off, off + size, reads, step):
            ax.barh(row, stop - start, left=start, height=0.6, color=COLORS[who])
    for p in range(0, end + 1, part):
        ax.axvline(p, color="black", lw=0.8, ls="--")
        if p < end:
            ax.text(p + part / 2, -0.9, f"partition {p // part}", ha="center", fontsize=8)
    ax.set_yticks(range(len(pieces)), [name for name, _, _ in pieces])
    ax.set_ylim(len(pieces) - 0.4, -1.2)
    ax.set_xlim(0, -(-end // part) * part)
    ticks = range(0, int(ax.get_xlim()[1]) + 1, part)
    ax.set_xticks(list(ticks), [f"{t // 1024} KiB" for t in ticks])
    ax.set_xlabel("LDS byte address")
    pairs = [f"pair {n}" for n in hw.pair_names]
    handles = [Patch(color=COLORS[k], label=lab) for k, lab in
               zip((*hw.pair_names, "both", "none"), (*pairs, "both pairs", "not read"),
                   strict=True)]  # fmt: skip
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.22), fontsize=8, ncol=4)
    shared = report.ttg_shared
    ax.set_title(
        f"{report.kernel}: LDS map, {report.lds_bytes} B (ttg.shared {shared}), "
        "colored by the SIMD pair that reads each byte",
        fontsize=10,
    )
    return fig
