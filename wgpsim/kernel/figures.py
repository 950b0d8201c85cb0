"""One compile's figures: its op-by-op report, its main loop timed, and the kernel's totals.

``wgpsim kernel --all``, ``wgpsim diff`` and the HTML report all start from a
`KernelFigures`: the `wgpsim.kernel.report.KernelReport`, the loop timing of
``wgpsim kernel --loop-timing`` (`main_loop`: the loop with the most ``ds_*``, every warp,
`wgpsim.kernel.loop.timing`) and `KernelFigures.totals`, the kernel-level figures a
threshold or a table row reads:

- ``instructions``: LDS instructions per warp over every op (the assembly's static count);
- ``bank_conflicts`` / ``partition_stalls`` / ``cycles``: the timed ops' bank-conflict cycles,
  partition-stall cycles and LDS cycles in the lock-step model, summed;
- ``lds_bytes``: wgpsim's LDS bytes (``ttg_shared``: Triton's);
- ``loop_cycles``, ``exposed``, ``hidden``: the loop's cycles per iteration and its exposed and
  hidden LDS cycles per iteration; ``exposed_share`` = exposed / loop_cycles;
  ``loop_instructions``, ``loop_bank_conflicts``, ``loop_partition_stalls``: per iteration
  (None when the loop was not timed).

>>> f = kernel_figures("examples/kernels/lds_bandwidth_plain", loop=False)
>>> t = f.totals()
>>> t["instructions"], t["lds_bytes"], t["exposed"]
(64, 65536, None)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wgpsim.errors import WgpsimError
from wgpsim.frontend.model import Kernel
from wgpsim.hw.config import HardwareConfig, target_hardware
from wgpsim.kernel.report import KernelReport, kernel_report

__all__ = ["TOTALS", "KernelFigures", "kernel_figures", "loop_engine", "main_loop"]

TOTALS = (
    "instructions",
    "bank_conflicts",
    "partition_stalls",
    "cycles",
    "lds_bytes",
    "loop_cycles",
    "exposed",
    "hidden",
    "loop_instructions",
    "loop_bank_conflicts",
    "loop_partition_stalls",
)
"""The kernel-level figures, in the order tables show them (module docstring)."""


def main_loop(
    kernel: Kernel,
    hw: HardwareConfig,
    *,
    engine: str = "auto",
    loop: str | int | None = None,
    iterations: int | None = None,
) -> tuple[dict[str, Any], Any]:
    """Time ``kernel``'s loop ``loop`` (default: the most ``ds_*``) over ``iterations``:
    (the JSON payload of ``--loop-timing``, the `LoopTiming`)."""
    from wgpsim.kernel.loop.program import loop_program
    from wgpsim.kernel.loop.timing import time_kernel_loop
    from wgpsim.kernel.loop.traces import loop_trace

    program = loop_program(kernel, loop=loop, hw=hw)
    klt = loop_trace(program, iterations, hw)
    lt = time_kernel_loop(klt, hw, engine=loop_engine(klt.trace, hw, engine))
    payload = {"loop": program.label, "source": program.source, **lt.to_dict()}
    payload["unmatched"] = [u.to_dict() for u in program.unmatched]
    payload["notes"] = [*program.notes, *map(str, program.unmatched), *lt.notes]
    payload["engine"] = lt.result.engine  # the engine that ran (``auto`` names des or fast)
    return payload, lt


LOOP_RUNS = 3
"""Runs of a loop's trace's passes when it is timed: the loop itself, ``ideal_banks`` and
``separate_partitions`` (``no_lds`` has no LDS row)."""


def loop_engine(trace, hw: HardwareConfig, engine: str) -> str:
    """``auto`` decided once for a loop's runs (``auto.upfront``): ``fast`` when it costs
    nothing to load (built ahead of time, or loaded) or when they add up to more than
    ``auto``'s des budget (the attention example: 3 x 24,576 passes), so des is not paid for a
    first run before the fast engine loads anyway; else ``engine`` (a named engine is kept).

    >>> from wgpsim.hw.config import load_hardware
    >>> from wgpsim.trace import TraceBuilder
    >>> loop_engine(TraceBuilder(1).build(), load_hardware(), "des")  # a named engine is kept
    'des'
    """
    if engine != "auto":
        return engine
    from wgpsim.engine.auto import most_passes, upfront

    return "fast" if upfront(LOOP_RUNS * most_passes(trace, hw)) == "fast" else engine


@dataclass(frozen=True)
class KernelFigures:
    """A report, its loop's payload and timing (None when not timed; ``loop_error`` says why
    when timing failed) and where the kernel came from."""

    report: KernelReport
    loop: dict[str, Any] | None = None
    timing: Any = field(default=None, repr=False)
    loop_error: str | None = None
    path: str | None = None
    hw: Any = field(default=None, repr=False, compare=False)
    """The hardware file the kernel was simulated on (its pages name the chip)."""

    @property
    def name(self) -> str:
        return self.report.kernel

    def totals(self) -> dict[str, float | int | None]:
        """The kernel-level figures (module docstring), keyed by `TOTALS`."""
        ops = self.report.ops
        timed = [op for op in ops if op["lds_cycles"] is not None]
        out: dict[str, float | int | None] = {
            "instructions": sum(op["instructions_per_warp"] for op in ops),
            "bank_conflicts": sum(op["bank_conflict_cycles"] for op in timed),
            "partition_stalls": sum(op["partition_stall_cycles"] for op in timed),
            "cycles": sum(op["lds_cycles"] for op in timed),
            "lds_bytes": self.report.lds_bytes,
        }
        out |= dict.fromkeys(TOTALS[5:])
        if self.loop is not None:
            lops = self.loop["ops"]
            out |= {
                "loop_cycles": self.loop["cycles_per_iteration"],
                "exposed": self.loop["lds_exposed"],
                "hidden": self.loop["lds_hidden"],
                "loop_instructions": sum(o["instructions"] for o in lops if o["kind"] == "ds"),
                "loop_bank_conflicts": sum(o["bank_conflict_cycles"] for o in lops),
                "loop_partition_stalls": sum(o["partition_stall_cycles"] for o in lops),
            }
        return out

    @property
    def per(self) -> str | None:
        """What the loop figures are per: "iteration" of the main loop, or "run" for a kernel
        without a loop (its body is the whole function, named after it, not an assembly label
        like ``.LBB0_2``); None without a timed loop."""
        if self.loop is None:
            return None
        whole = self.loop.get("source") == "assembly" and not str(self.loop["loop"]).startswith(".")
        return "run" if whole else "iteration"

    def exposed_share(self) -> float | None:
        """Exposed LDS cycles / cycles per iteration (None without a timed loop)."""
        if self.loop is None or not self.loop["cycles_per_iteration"]:
            return None
        return self.loop["lds_exposed"] / self.loop["cycles_per_iteration"]

    def loop_op(self, op: dict[str, Any]) -> dict[str, Any] | None:
        """The loop's row of report op ``op`` (labelled as ``kernel_loop.op_label`` does), or None."""
        from wgpsim.kernel.loop.program import row_label

        if self.loop is None:
            return None
        label = row_label(op["name"], op["op"], op["index"], op["loc"])
        return next((o for o in self.loop["ops"] if o["op"] == label), None)


def kernel_figures(
    source: Kernel | str | Path,
    hw: HardwareConfig | None = None,
    *,
    engine: str = "auto",
    name: str | None = None,
    loop: bool = True,
    suggest: bool = True,
) -> KernelFigures:
    """The figures of a kernel model or of a path ``wgpsim kernel`` reads; with ``loop``, its
    main loop timed (a loop wgpsim cannot time leaves ``loop`` None and says why); without
    ``suggest``, no layout search for conflicted loads (``--all`` does not show them)."""
    if not isinstance(source, Kernel):
        from wgpsim.frontend.sources import read_kernel

        path = str(source)
        source = read_kernel(source, name)
    else:
        path = source.source
    hw = target_hardware(source.target) if hw is None else hw
    report = kernel_report(source, hw, engine=engine, suggest=suggest)
    if not loop:
        return KernelFigures(report, path=path, hw=hw)
    try:
        payload, lt = main_loop(source, hw, engine=engine)
    except WgpsimError as err:
        return KernelFigures(report, loop_error=str(err).splitlines()[0], path=path, hw=hw)
    return KernelFigures(report, payload, lt, path=path, hw=hw)
