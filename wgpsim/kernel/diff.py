"""Two compiles of one kernel compared: ``wgpsim diff``'s analysis.

From two `wgpsim.kernel.figures.KernelFigures` (old, new), a `KernelDiff` holds, old ->
new with the change:

- per op, matched by source line and op (the k-th ``local_load`` at ``kernels.py:75`` of the old
  compile with the k-th of the new; an op on one side only is ``added`` or ``removed``): its
  instructions per warp, bank-conflict cycles, partition-stall cycles and LDS cycles (lock step),
  the loop's exposed LDS cycles per iteration charged to it, and the partitions each SIMD pair
  touches, and its bank-conflict and partition-stall cycles per loop iteration;
- per buffer, matched by name: bytes, offsets, partitions;
- per loop: cycles per iteration, exposed and hidden LDS cycles, port-busy cycles, each what-if,
  and its work per iteration (``tensor_bytes``, :func:`loop_tensor_bytes`) with the cycles per
  KiB of it: when the work differs (another ``BLOCK_K``), :meth:`KernelDiff.loop_note` says the
  per-iteration figures are not comparable;
- the kernel's totals (`KernelFigures.totals`), which the ``--fail-on`` thresholds read
  (`wgpsim.kernel.diff_thresholds`).

Standard vs partitioned TDM GEMM (the shipped compiles): the partition stalls of the lock-step
ops go from 486 cycles to 0, and the LDS grows by 28704 bytes:

>>> from wgpsim.kernel.figures import kernel_figures
>>> d = diff_figures(kernel_figures("examples/kernels/gemm_tdm_standard", loop=False),
...                  kernel_figures("examples/kernels/gemm_tdm_partitioned", loop=False))
>>> d.totals["partition_stalls"], d.totals["lds_bytes"]["change"]
({'old': 486, 'new': 0, 'change': -486}, 28704)
>>> [(r["key"], r["status"]) for r in d.ops][4]
('kernels.py:75 local_load', 'changed')
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from wgpsim.errors import LayoutError
from wgpsim.kernel.diff_thresholds import Threshold, relative_change
from wgpsim.kernel.figures import TOTALS, KernelFigures
from wgpsim.layout.dtypes import dtype_bits

__all__ = [
    "KernelDiff",
    "change",
    "change_text",
    "diff_figures",
    "loop_tensor_bytes",
    "match_by_name",
    "percent",
    "percent_text",
]

OP_FIGURES = {
    "instructions": "instructions_per_warp",
    "bank_conflicts": "bank_conflict_cycles",
    "partition_stalls": "partition_stall_cycles",
    "cycles": "lds_cycles",
}
"""An op's figures: the diff's name -> the report's field."""
LOOP_FIGURES = ("cycles_per_iteration", "lds_exposed", "lds_hidden", "lds_busy")


def change(old: Any, new: Any) -> dict[str, Any]:
    """``{"old", "new", "change"}``: the change is new - old for numbers, else None.

    >>> change(10, 12), change("0|0", "0|1")
    ({'old': 10, 'new': 12, 'change': 2}, {'old': '0|0', 'new': '0|1', 'change': None})
    """
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (old, new))
    return {"old": old, "new": new, "change": new - old if numbers else None}


def _status(figures: dict[str, dict[str, Any]]) -> str:
    return "same" if all(f["old"] == f["new"] for f in figures.values()) else "changed"


def _pairs(op: dict[str, Any]) -> str | None:
    parts = op["pair_partitions"]
    return "|".join("-".join(map(str, p)) for p in parts.values()) if parts else None


def _op_figures(fig: KernelFigures, op: dict[str, Any]) -> dict[str, Any]:
    out = {name: op[field] for name, field in OP_FIGURES.items()}
    looped = fig.loop_op(op)
    for name, field in (("exposed", "exposed"), ("loop_bank_conflicts", "bank_conflict_cycles"),
                        ("loop_partition_stalls", "partition_stall_cycles")):  # fmt: skip
        out[name] = None if looped is None else looped[field]
    out["partitions"] = _pairs(op)
    return out


def _keyed_ops(fig: KernelFigures) -> dict[tuple, dict[str, Any]]:
    """Ops by (source line, op, occurrence), in the report's order."""
    seen: dict[tuple, int] = defaultdict(int)
    out = {}
    for op in fig.report.ops:
        base = (op["loc"] or "?", op["op"].split(".", 1)[-1])
        out[(*base, seen[base])] = op
        seen[base] += 1
    return out


def _row(key: str, old: dict | None, new: dict | None) -> dict[str, Any]:
    if old is None or new is None:
        side = new if old is None else old
        status = "added" if old is None else "removed"
        figures = {k: change(None, v) if old is None else change(v, None) for k, v in side.items()}
        return {"key": key, "status": status, "figures": figures}
    figures = {k: change(old[k], new[k]) for k in old}
    return {"key": key, "status": _status(figures), "figures": figures}


def _diff_rows(old: dict, new: dict, label) -> list[dict[str, Any]]:
    """One row per key of either side (old's order, then new's additions)."""
    keys = list(old) + [k for k in new if k not in old]
    return [_row(label(k), old.get(k), new.get(k)) for k in keys]


def _op_key(key: tuple) -> str:
    loc, op, k = key
    return f"{loc} {op}" + (f" #{k + 1}" if k else "")


def _buffers(fig: KernelFigures) -> dict[str, dict[str, Any]]:
    return {
        b["name"]: {
            "bytes": b["bytes"],
            "offsets": ",".join(map(str, b["offsets"])) or None,
            "partitions": ",".join(map(str, b["partitions"])) or None,
        }
        for b in fig.report.buffers
    }


def loop_tensor_bytes(fig: KernelFigures) -> int | None:
    """The loop's work per iteration, as the diff compares it: bytes of the tensors its LDS ops
    move (``shape`` of each op inside a loop: ``128x64xf16`` is 16 KiB); None without one.

    Another ``BLOCK_K`` moves other tiles per iteration, so the per-iteration figures of two
    such compiles are not comparable (:func:`diff_figures` says so and adds the cycles per
    KiB). The shipped matmul: A 128x64 and B 64x128 fp16, each loaded and stored, 64 KiB:

    >>> from wgpsim.kernel.figures import kernel_figures
    >>> loop_tensor_bytes(kernel_figures("examples/kernels/matmul", loop=False))
    65536
    """
    total = None
    for op in fig.report.ops:
        *dims, dtype = (op.get("shape") or "x").split("x")
        if op.get("loop_depth", 0) < 1 or not dims:
            continue
        try:
            total = (total or 0) + math.prod(map(int, dims)) * dtype_bits(dtype) // 8
        except (ValueError, LayoutError):  # an op whose shape is not a tensor's
            continue
    return total


def _loop(fig: KernelFigures) -> dict[str, Any] | None:
    if fig.loop is None:
        return None
    out = {k: fig.loop[k] for k in LOOP_FIGURES}
    work = loop_tensor_bytes(fig)
    out["tensor_bytes"] = work
    out["cycles_per_KiB"] = (
        round(1024 * fig.loop["cycles_per_iteration"] / work, 2) if work else None
    )
    out |= {f"what_if {n}": v["cycles_per_iteration"] for n, v in fig.loop["what_ifs"].items()}
    return out


@dataclass(frozen=True)
class KernelDiff:
    """Old and new figures and their comparison (module docstring); rows are JSON-ready."""

    old: KernelFigures
    new: KernelFigures
    ops: list[dict[str, Any]]
    buffers: list[dict[str, Any]]
    loop: dict[str, dict[str, Any]] | None
    totals: dict[str, dict[str, Any]]

    @property
    def name(self) -> str:
        return self.new.name

    @property
    def loop_comparable(self) -> bool:
        """Whether the two loops do the same work per iteration (:func:`loop_tensor_bytes`):
        if not, compare ``cycles_per_KiB``, not the per-iteration figures."""
        work = (self.loop or {}).get("tensor_bytes")
        return work is None or work["old"] == work["new"] or None in (work["old"], work["new"])

    def loop_note(self) -> str | None:
        """The warning the diff prints when :attr:`loop_comparable` is false."""
        if self.loop_comparable:
            return None
        work, per = self.loop["tensor_bytes"], self.loop["cycles_per_KiB"]
        return (
            f"the loop's work per iteration differs (its LDS ops move {work['old']:g} -> "
            f"{work['new']:g} tensor bytes per iteration: another BLOCK_K or tile): the "
            "per-iteration figures are not comparable; per KiB moved, cycles "
            f"{per['old']:g} -> {per['new']:g}"
        )

    def regressions(self, thresholds: list[Threshold]) -> list[str]:
        """A line for each threshold the change crosses."""
        out = []
        for t in thresholds:
            f = self.totals[t.metric]
            if t.crossed(f["old"], f["new"]):
                got = t.change(f["old"], f["new"])
                shown = f"{got:+.1f}%" if t.percent else f"{got:+g}"
                out.append(
                    f"{self.name}: {t.metric} {f['old']:g} -> {f['new']:g} ({shown}) "
                    f"crosses {t.text}"
                )
        return out

    def unchecked(self, thresholds: list[Threshold]) -> list[str]:
        """The thresholds whose figure is missing on a side (a loop not timed)."""
        return [
            f"{self.name}: {t.metric} not known on both sides: {t.text} not checked"
            for t in thresholds
            if None in (self.totals[t.metric]["old"], self.totals[t.metric]["new"])
        ]

    def to_json(self) -> dict[str, Any]:
        totals = {
            k: v | {"percent": percent(v)} for k, v in self.totals.items()
        }  # fmt: skip
        return {
            "kernel": self.name,
            "old": self.old.path,
            "new": self.new.path,
            "totals": totals,
            "ops": self.ops,
            "buffers": self.buffers,
            "loop": self.loop,
            "loop_comparable": self.loop_comparable,
            "loop_note": self.loop_note(),
            "loop_errors": {"old": self.old.loop_error, "new": self.new.loop_error},
        }


def percent(f: dict[str, Any]) -> float | None:
    """The change of ``f`` in percent of the old value (None: not a number, or from 0)."""
    if f["change"] is None:
        return None
    pct = relative_change(f["old"], f["new"])
    return None if pct in (float("inf"), float("-inf")) else round(pct, 2)


def diff_figures(old: KernelFigures, new: KernelFigures) -> KernelDiff:
    """The comparison of two compiles of one kernel (module docstring)."""
    o, n = _keyed_ops(old), _keyed_ops(new)
    ops = _diff_rows(
        {k: _op_figures(old, v) for k, v in o.items()},
        {k: _op_figures(new, v) for k, v in n.items()},
        _op_key,
    )
    buffers = _diff_rows(_buffers(old), _buffers(new), str)
    lo, ln = _loop(old), _loop(new)
    loop = None
    if lo is not None or ln is not None:
        keys = list(lo or ln) + [k for k in ln or {} if k not in (lo or {})]
        loop = {k: change((lo or {}).get(k), (ln or {}).get(k)) for k in keys}
    to, tn = old.totals(), new.totals()
    totals = {k: change(to[k], tn[k]) for k in TOTALS}
    return KernelDiff(old, new, ops, buffers, loop, totals)


def match_by_name(old: list[tuple[str, Any]], new: list[tuple[str, Any]]):
    """Pair the (name, where) entries of two cache roots by kernel name: (name, old where or
    None, new where or None) in name order; several compiles of one name pair in order.

    >>> match_by_name([("a", 1), ("b", 2)], [("b", 3), ("c", 4)])
    [('a', 1, None), ('b', 2, 3), ('c', None, 4)]
    """
    by_old: dict[str, list] = defaultdict(list)
    by_new: dict[str, list] = defaultdict(list)
    for name, where in old:
        by_old[name].append(where)
    for name, where in new:
        by_new[name].append(where)
    out = []
    for name in sorted(set(by_old) | set(by_new)):
        a, b = by_old.get(name, []), by_new.get(name, [])
        out += [
            (name, a[i] if i < len(a) else None, b[i] if i < len(b) else None)
            for i in range(max(len(a), len(b)))
        ]
    return out


def figure_text(v: Any) -> str:
    """A figure as the terminal prints it (`number_text`; None a dash)."""
    from wgpsim.kernel.loop.timing import number_text

    if v is None:
        return "-"
    return number_text(v) if isinstance(v, float) else str(v)


def change_text(f: dict[str, Any], arrow: str = "->") -> str:
    """``old -> new (change)``, or the value alone when it did not change.

    >>> change_text(change(124, 188.0)), change_text(change("0|1", "0|1"))
    ('124 -> 188 (+64)', '0|1')
    """
    if f["old"] == f["new"]:
        return figure_text(f["old"])
    ch = f["change"]
    tail = "" if ch is None else f" ({'+' if ch > 0 else ''}{figure_text(ch)})"
    return f"{figure_text(f['old'])} {arrow} {figure_text(f['new'])}{tail}"


def percent_text(f: dict[str, Any]) -> str:
    """The relative change, signed, one decimal; ``from 0`` when the old value was 0.

    >>> percent_text(change(0, 486)), percent_text(change(564, 695.3)), percent_text(change(1, 1))
    ('from 0', '+23.3', '+0.0')
    """
    p = percent(f)
    if p is None:
        return "from 0" if f["change"] and f["old"] == 0 else "-"
    return f"{p:+.1f}"
