"""A lowering for a target: the transposed loads it has and its spelling of instructions.

`wgpsim.kernel.lowering` (``wgpsim kernel``) and ``wgpsim lower`` lower through these two, so a
chip is never given an instruction it lacks (gfx942 has no transposed load: a 16-bit B operand
becomes ``ds_read_u16``, where gfx950 chooses ``ds_read_b64_tr_b16``).
"""

from __future__ import annotations

from dataclasses import replace

from wgpsim.hw.config import HardwareConfig
from wgpsim.trace.lowering import Lowering
from wgpsim.trace.spelling import in_spelling

__all__ = ["for_target"]


def for_target(low: Lowering, hw: HardwareConfig) -> Lowering:
    """``low`` (lowered with ``allow_transpose=hw.has_transposed_loads``) in ``hw``'s spelling
    (`wgpsim.trace.spelling.in_spelling`), its transposed-load eligibility ``absent`` where the
    chip has no transposed load (not ``disabled``, a user's choice)."""
    if low.eligibility == "disabled" and not hw.has_transposed_loads:
        low = replace(low, eligibility="absent")
    return in_spelling(low, hw.instructions, hw.describe())
