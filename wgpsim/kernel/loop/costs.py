"""What the loop's other work costs: the issue cycles of a ``v_wmma_*`` (LLVM's GFX1250
scheduling classes) and of the VALU, SALU, memory and wait instructions (``costs:`` of the
hardware file, `configs/mi450.yaml`), as `wgpsim.kernel.loop.program` turns them into ``delay``
rows.

>>> from wgpsim.frontend.amdgcn_loops import stream
>>> i = stream("k:\\n v_wmma_f32_16x16x32_f16 v[0:7], v[8:15], v[16:23], v[0:7]")[1][1]
>>> wmma_cost(i, load_hardware()), issue_cycles(i, load_hardware())
((8, ''), 0)
"""

from __future__ import annotations

import re

from wgpsim.frontend.amdgcn_loops import AsmInstr
from wgpsim.hw.config import HardwareConfig, load_hardware  # noqa: F401 (doctests)

__all__ = ["issue_cycles", "wmma_cost"]

_WMMA_2PASS = re.compile(r"^v_s?wmmac?_.*_(fp8|bf8|bf16|f16)$")
_WMMA_4PASS = re.compile(r"^v_s?wmmac?_.*_(iu8|iu4)$")
_F8_FMT = re.compile(r"matrix_[ab]_fmt:MATRIX_FMT_(FP8|BF8)\b")


def wmma_cost(instr: AsmInstr, hw: HardwareConfig) -> tuple[int, str]:
    """Issue cycles of one ``v_wmma_*`` by LLVM's GFX1250SpeedModel classes (its ``InstRW``
    patterns), and a note if the mnemonic is in none of them.

    >>> from wgpsim.frontend.amdgcn_loops import stream
    >>> i = stream("k:\\n v_wmma_f32_16x16x32_f16 v[0:7], v[8:15], v[16:23], v[0:7]")[1][1]
    >>> wmma_cost(i, load_hardware())
    (8, '')
    """
    c, m = hw.costs, instr.mnemonic
    if m.startswith("v_wmma_f32_16x16x4_f32"):
        return c.wmma_valu_4pass, ""
    if "_16x16x128_f8f6f4" in m:  # f8 unless both formats are given as something else
        fmts = re.findall(r"matrix_[ab]_fmt:\w+", instr.operands)
        f8 = len(fmts) < 2 or bool(_F8_FMT.search(instr.operands))
        return (c.wmma_xdl_4pass if f8 else c.wmma_xdl_2pass), ""
    if "_f32_32x16x128_f4" in m or _WMMA_2PASS.match(m):
        return c.wmma_xdl_2pass, ""
    if _WMMA_4PASS.match(m):
        return c.wmma_xdl_4pass, ""
    return c.wmma_xdl_2pass, f"{m}: in no LLVM GFX1250 class, taken as a 2-pass WMMA"


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
