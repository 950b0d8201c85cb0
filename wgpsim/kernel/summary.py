"""The short text of a kernel report: what ``print(report)`` shows in a notebook or a REPL.

A header (kernel, warps, LDS bytes beside ``ttg.shared``), one line per LDS op (its source
line, op, instructions per warp and simulated LDS cycles in lock step, with the partition-stall
and bank-conflict cycles in them), the instruction totals, and where the full tables are
(``wgpsim kernel PATH`` prints them; ``wgpsim.cli.kernel.format_report(report)`` returns them).
``repr(report)`` is the header alone, in angle brackets.

>>> from wgpsim.kernel.report import KernelReport
>>> op = {"index": 0, "loc": "my_gemm.py:18", "op": "ttg.local_load", "name": "%a_74",
...       "instructions": {"ds_load_b128": 16}, "lds_cycles": 188,
...       "partition_stall_cycles": 126, "bank_conflict_cycles": 0}
>>> report = KernelReport("matmul", 4, 73680, 73680, [], [op], [])
>>> print(report)
kernel matmul: 4 warps, LDS 73,680 B (ttg.shared 73,680 B), 1 LDS op, simulated in lock step
  #0 my_gemm.py:18 local_load %a_74: 16 x ds_load_b128, 188 cycles (126 partition stall, 0 bank conflict)
instructions per warp: 16 x ds_load_b128
(the full tables: wgpsim kernel PATH, or wgpsim.cli.kernel.format_report(report))
>>> report
<KernelReport kernel matmul: 4 warps, LDS 73,680 B (ttg.shared 73,680 B), 1 LDS op, simulated in lock step>
"""

from __future__ import annotations

from typing import Any

__all__ = ["header", "summary"]

#: Ops listed one a line; a kernel with more lists the worst of them (by LDS cycles).
MAX_OPS = 12


def _bytes(value: int) -> str:
    return f"{value:,} B"


def header(report: Any) -> str:
    """One line: the kernel, its warps, LDS bytes beside ``ttg.shared``, its op count."""
    n = len(report.ops)
    shared = report.ttg_shared
    shared = "ttg.shared: not in the module" if shared is None else f"ttg.shared {_bytes(shared)}"
    mine = "not sized" if report.lds_bytes is None else _bytes(report.lds_bytes)
    return (
        f"kernel {report.kernel}: {report.warps} warps, LDS {mine} ({shared}), "
        f"{n} LDS op{'s' * (n != 1)}, simulated in lock step"
    )


def _op_line(op: dict[str, Any]) -> str:
    kind = op["op"].split(".", 1)[-1]
    name = f" {op['name']}" if op.get("name") else ""
    instructions = ", ".join(f"{n} x {k}" for k, n in op["instructions"].items()) or "none"
    text = f"  #{op['index']} {op['loc'] or '-'} {kind}{name}: {instructions}"
    if op["lds_cycles"] is None:
        return text + ", not timed"
    return (
        f"{text}, {op['lds_cycles']} cycles ({op['partition_stall_cycles']} partition stall, "
        f"{op['bank_conflict_cycles']} bank conflict)"
    )


def summary(report: Any) -> str:
    """The short text: the header, a line per op (the worst :data:`MAX_OPS` of a larger
    kernel), the instruction totals, and where the full tables are."""
    ops = report.ops
    lines = [header(report)]
    if len(ops) > MAX_OPS:
        worst = {op["index"] for op in report.worst_ops(MAX_OPS)}
        ops = [op for op in ops if op["index"] in worst]
        lines.append(f"  (the {MAX_OPS} ops of most LDS cycles, of {len(report.ops)})")
    lines += [_op_line(op) for op in ops]
    totals = ", ".join(f"{n} x {k}" for k, n in report.instruction_totals().items())
    lines.append(f"instructions per warp: {totals or 'none'}")
    lines += [f"not modelled: {n['op']} at {n['loc'] or '-'}" for n in report.not_modelled]
    lines.append(
        "(the full tables: wgpsim kernel PATH, or wgpsim.cli.kernel.format_report(report))"
    )
    return "\n".join(lines)
