"""``#ttg.amd_rotating_shared``: gfx942's swizzle whose phase turns each block of rows.

Triton 3.9.0 (``sharedToLinearLayoutAMDRotating``) XORs a row's columns as
``#ttg.swizzled_shared`` does, with the row's phase ``(r // perPhase) % maxPhase`` XOR-ed with
its block number ``r // (maxPhase * perPhase) % maxPhase``: after ``maxPhase * perPhase`` rows
the pattern starts one phase on, so rows that a plain swizzle would put in the same banks
again land elsewhere. The allocation size is the tensor's (no padding).

The gfx942 GEMM operand of the corpus (``vec = 4, perPhase = 1, maxPhase = 16``, order
``[0, 1]``: rows along dim 1, 16 columns along dim 0): rows 1 and 2 XOR by 4 and 8 as a plain
swizzle, rows 4 and 8 wrap to 0 on 16 columns, and rows 16 and 32 (phase 0) XOR by their block
number 1 and 2 times ``vec``, where a plain swizzle has 0:

>>> L = AMDRotatingSharedLayout(4, 1, 16, [0, 1]).to_linear_layout((16, 128))
>>> L.get_bases("offset")[4:]
((4, 1), (8, 2), (0, 4), (0, 8), (4, 16), (8, 32), (0, 64))
>>> AMDRotatingSharedLayout(4, 1, 16, [1, 0]).row_xor(16), AMDRotatingSharedLayout(4, 1, 16, [1, 0]).row_xor(2)
(4, 8)
"""

from __future__ import annotations

from dataclasses import dataclass

from wgpsim.layout.shared import SwizzledSharedLayout

__all__ = ["AMDRotatingSharedLayout"]


@dataclass(frozen=True)
class AMDRotatingSharedLayout(SwizzledSharedLayout):
    """``#ttg.amd_rotating_shared<{vec, perPhase, maxPhase, order}>`` (one CTA)."""

    def row_xor(self, row: int) -> int:
        phase = (row // self.per_phase) % self.max_phase
        block = row // self.max_phase // self.per_phase % self.max_phase
        return self.vec * (phase ^ block)
