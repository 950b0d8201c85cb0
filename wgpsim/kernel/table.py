"""Every kernel of a cache as one table, worst first: ``wgpsim kernel CACHE_ROOT --all``.

A row per kernel (`kernel_row`) from its `wgpsim.kernel.figures.KernelFigures`:
name, folder, target, warps, wgpsim's LDS bytes and Triton's (``ttg.shared``), the LDS
instructions per iteration of its main loop (``ds_*`` per warp), the exposed LDS cycles per
iteration and their share of the iteration, the bank-conflict and partition-stall cycles of its
ops in the lock-step model (summed, as ``wgpsim kernel`` reports them op by op), and its worst
op (the most LDS cycles in lock step) with its source line. A kernel that cannot be read is a
row with its one-line ``error``. ``per`` says what the loop figures are per: "iteration" of the
main loop, or "run" for a kernel without a loop (its whole body, timed once). `kernel_table`
sorts worst first: the most exposed LDS cycles per iteration, then the most lock-step LDS
cycles; kernels without a loop after those with one (a run is not an iteration), ranked the
same way among themselves; unreadable kernels last.

>>> from wgpsim.kernel.figures import kernel_figures
>>> rows = kernel_table([
...     ("plain", "examples/kernels/lds_bandwidth_plain",
...      kernel_figures("examples/kernels/lds_bandwidth_plain", loop=False)),
...     ("gone", "nowhere", "nowhere: no such file or directory")])
>>> [(r["kernel"], r["lds_bytes"], r["worst_op"], r["error"]) for r in rows]
[('lds_bandwidth', 65536, 'local_alloc', None), ('gone', None, None, 'nowhere: no such file or directory')]
"""

from __future__ import annotations

from typing import Any

from wgpsim.kernel.figures import KernelFigures

__all__ = ["COLUMNS", "kernel_row", "kernel_table"]

COLUMNS = (
    "kernel",
    "folder",
    "target",
    "warps",
    "lds_bytes",
    "ttg_shared",
    "loop_instructions",
    "exposed",
    "per",
    "exposed_share",
    "loop_cycles",
    "bank_conflicts",
    "partition_stalls",
    "cycles",
    "worst_op",
    "worst_line",
    "error",
)


def kernel_row(name: str, folder: str, figures: KernelFigures | str) -> dict[str, Any]:
    """The table's row of one kernel (``figures``: its figures, or why it cannot be read)."""
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row |= {"kernel": name, "folder": str(folder)}
    if isinstance(figures, str):
        return row | {"error": figures}
    rep, totals = figures.report, figures.totals()
    worst = rep.worst_ops(1)
    row |= {
        "kernel": rep.kernel,
        "target": rep.extras.get("target"),
        "warps": rep.warps,
        "lds_bytes": rep.lds_bytes,
        "ttg_shared": rep.ttg_shared,
        "exposed_share": figures.exposed_share(),
        "per": figures.per,
        "worst_op": worst[0]["op"].split(".", 1)[-1] if worst else None,
        "worst_line": worst[0]["loc"] if worst else None,
        "error": figures.loop_error and f"loop not timed: {figures.loop_error}",
    }
    row |= {k: totals[k] for k in COLUMNS if k in totals}
    return row


def _worst_first(row: dict[str, Any]) -> tuple:
    missing = float("inf")
    return (
        row["lds_bytes"] is None and row["error"] is not None,
        row["per"] == "run",  # per-run figures are ranked apart, after the loops'
        -(row["exposed"] if row["exposed"] is not None else -missing),
        -(row["cycles"] or 0),
        row["kernel"],
    )


def kernel_table(items) -> list[dict[str, Any]]:
    """Rows of ``(name, folder, figures or reason)`` items, worst first (module docstring)."""
    return sorted((kernel_row(*item) for item in items), key=_worst_first)
