"""The AMD blog's Part I microbenchmark on another chip (``--target gfx950``): the same experiment
in the chip's terms, each change said in one line.

* the load: the chip's twin of the config's (gfx950: ``ds_read_b128`` for ``ds_load_b128``;
  `wgpsim.trace.spelling`);
* the register layout: a ``#ttg.blocked`` with a warp's lanes along its fastest dim gets the
  chip's warp size there (wave64: ``threadsPerWarp = [1, 64]``), so one load still spans a row;
* the candidates: ``#ttg.partitioned_shared`` is MI450's (one half of the tensor per LDS
  partition); on a chip of one partition it is skipped.

>>> from wgpsim.layout.distributed import BlockedLayout
>>> widened(BlockedLayout([1, 8], [1, 32], [4, 1], [1, 0]), 64).threads_per_warp
(1, 64)
"""

from __future__ import annotations

from dataclasses import replace
from math import prod
from typing import Any

from wgpsim.errors import ConfigError
from wgpsim.layout.distributed import BlockedLayout
from wgpsim.layout.shared import PartitionedSharedLayout
from wgpsim.trace.spelling import respelled


def widened(layout: Any, lanes: int) -> Any:
    """``layout`` with ``lanes`` lanes a warp along its fastest dim (a ``#ttg.blocked`` whose
    lanes all lie along it); anything else unchanged (its own warp size is then checked)."""
    if not isinstance(layout, BlockedLayout) or prod(layout.threads_per_warp) in (0, lanes):
        return layout
    fast = layout.order[0]
    if prod(layout.threads_per_warp) != layout.threads_per_warp[fast]:
        return layout
    threads = tuple(lanes if d == fast else t for d, t in enumerate(layout.threads_per_warp))
    return replace(layout, threads_per_warp=threads)


def on_target(cfg: Any) -> tuple[Any, tuple[str, ...]]:
    """``cfg`` (an ``LdsBandwidthConfig``) on its hardware, and a line per change."""
    hw, notes = cfg.hw, []
    instruction = respelled(cfg.instruction, hw.instructions)
    if instruction is None:
        raise ConfigError(f"instruction {cfg.instruction}: {hw.describe()} has no twin of it")
    if instruction != cfg.instruction:
        notes.append(f"{hw.name}: {instruction} for {cfg.instruction}")
    distributed = widened(cfg.distributed, hw.wgp.warp_size)
    if distributed != cfg.distributed:
        notes.append(f"{hw.name}: distributed threadsPerWarp {list(distributed.threads_per_warp)}")
    layouts = dict(cfg.layouts)
    if hw.partitions.count < 2:
        for name in [n for n, s in layouts.items() if isinstance(s, PartitionedSharedLayout)]:
            del layouts[name]
            notes.append(
                f"layout '{name}' skipped: partitioned_shared is MI450's "
                f"({hw.name} has one LDS partition)"
            )
        if not layouts:
            raise ConfigError(f"{hw.name} has one LDS partition: no candidate left to measure")
    out = replace(cfg, instruction=instruction, distributed=distributed, layouts=layouts)
    return out, tuple(notes)


__all__ = ["on_target", "widened"]
