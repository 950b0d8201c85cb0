"""What the loop's other work costs: the issue cycles of a matrix instruction (``v_wmma_*``,
``v_mfma_*``, ``v_smfmac_*``: its LLVM scheduling class, `wgpsim.kernel.loop.matrix_classes`)
and of the VALU, SALU, memory and wait instructions (``costs:`` of the hardware file,
`configs/mi450.yaml`), as `wgpsim.kernel.loop.program` turns them into ``delay`` rows.

>>> from wgpsim.frontend.amdgcn_loops import stream
>>> i = stream("k:\\n v_wmma_f32_16x16x32_f16 v[0:7], v[8:15], v[16:23], v[0:7]")[1][1]
>>> wmma_cost(i, load_hardware()), issue_cycles(i, load_hardware())
((8, ''), 0)
"""

from __future__ import annotations

import re

from wgpsim.errors import ConfigError
from wgpsim.frontend.amdgcn_loops import AsmInstr
from wgpsim.hw.config import HardwareConfig, load_hardware, target_hardware  # noqa: F401
from wgpsim.kernel.loop.matrix_classes import sched_model

__all__ = ["issue_cycles", "wmma_cost"]


def wmma_cost(instr: AsmInstr, hw: HardwareConfig) -> tuple[int, str]:
    """Issue cycles of one matrix instruction by the LLVM class of the hardware's target (its
    ``InstRW`` patterns; gfx942 and gfx950 ``v_mfma_*`` / ``v_smfmac_*``, gfx1250
    ``v_wmma_*``), and a note if the mnemonic is in none of them.

    >>> from wgpsim.frontend.amdgcn_loops import stream
    >>> i = stream("k:\\n v_wmma_f32_16x16x32_f16 v[0:7], v[8:15], v[16:23], v[0:7]")[1][1]
    >>> wmma_cost(i, load_hardware())
    (8, '')
    >>> i = stream("k:\\n v_mfma_f32_32x32x16_f16 v[0:15], v[0:3], v[4:7], v[0:15]")[1][1]
    >>> wmma_cost(i, target_hardware("hip:gfx950"))
    (32, '')
    >>> i = stream("k:\\n v_mfma_f32_32x32x64_f8f6f4 v[0:15], v[0:7], v[8:15], 0")[1][1]
    >>> wmma_cost(i, target_hardware("hip:gfx950"))
    (64, '')
    """
    model, m = sched_model(hw.target), instr.mnemonic
    found = model.classify(m)
    if found is None:
        note = f"{m}: in no LLVM {model.short} class, taken as {model.fallback_words}"
        return _cycles(hw, model.fallback, m), note
    f8 = found.f8_cost and model.is_f8(instr.operands)
    return _cycles(hw, found.f8_cost if f8 else found.cost, m), ""


def _cycles(hw: HardwareConfig, key: str, mnemonic: str) -> int:
    """``costs.<key>`` of ``hw``; a ConfigError if the file leaves that class out."""
    cycles = getattr(hw.costs, key)
    if cycles is None:
        raise ConfigError(
            f"{hw.source}: missing field 'costs.{key}' (the LLVM class of {mnemonic} on "
            f"{hw.target or hw.name})"
        )
    return cycles


def issue_cycles(instr: AsmInstr, hw: HardwareConfig) -> int:
    """Issue cycles of one instruction of other work (``costs:`` of the hardware file; a
    ``s_nop N`` waits N + 1 cycles; a free hint 0).

    >>> from wgpsim.frontend.amdgcn_loops import stream
    >>> i = stream("k:\\n s_nop 3")[1][1]
    >>> issue_cycles(i, load_hardware())
    4
    """
    c, k = hw.costs, instr.kind
    if k == "hint":
        if instr.mnemonic != "s_nop":
            return 0
        m = re.match(r"\s*(0x[0-9a-fA-F]+|\d+)", instr.operands)
        return int(m.group(1), 0) + 1 if m else 1  # ISA: s_nop N waits N + 1 cycles
    return {
        "valu": c.valu,
        "salu": c.salu,
        "branch": c.branch,
        "global": c.global_issue,
        "smem": c.smem_issue,
        "tdm": c.tdm_issue,
        "async": c.async_issue,
        "wait_load": c.memory_wait,
        "wait_tensor": c.memory_wait,
        "wait_async": c.memory_wait,
    }.get(k, 0)
