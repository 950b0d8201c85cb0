"""What a gfx1250 assembly listing (``*.amdgcn``) says about LDS traffic, per Python source line.

Triton keeps line info in the assembly: each instruction follows the ``.loc FILE LINE COL``
directive of the source line it came from. Counting the LDS instructions (``ds_*``) and the TDM
ones (``tensor_load_to_lds``/``tensor_store_from_lds``) under each line gives, per line, what the
assembly holds, the static count (a loop body counts once), as a kernel author reads it.

>>> asm = '''
...     .file 1 "/src" "gemm.py"
...     .loc 1 27 13
...     ds_load_b128 v[1:4], v250
...     ds_load_b128 v[5:8], v250 offset:32
...     .loc 1 28 13 is_stmt 0
...     ds_load_tr16_b128 v[9:12], v234 offset:36848
...     s_wait_dscnt 0x0
... '''
>>> counts_by_line(asm)
{27: {'ds_load_b128': 2}, 28: {'ds_load_tr16_b128': 1}}
>>> counts_by_line(asm, file="other.py")
{}
>>> totals(asm)
{'ds_load_b128': 2, 'ds_load_tr16_b128': 1}
"""

from __future__ import annotations

import re
from collections import Counter

_LOC = re.compile(r"^\s*\.loc\s+(\d{1,9})\s+(\d{1,9})\s+\d+")  # larger: no .loc
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s+"([^"]*)")?')
_INSTR = re.compile(r"^\s*((?:ds|tensor)_[a-z0-9_]+)\b")
#: Instructions counted: LDS (ds_*) and TDM (tensor_load_to_lds, tensor_store_from_lds).
COUNTED = ("ds_", "tensor_load_to_lds", "tensor_store_from_lds")


def instructions(asm: str):
    r"""(file base name, source line, instruction) of every counted instruction, in order.

    >>> list(instructions('.file 1 "/src" "k.py"\n.loc 1 5 0\nds_load_b64 v1, v2'))
    [('k.py', 5, 'ds_load_b64')]
    """
    files: dict[str, str] = {}
    where: tuple[str | None, int | None] = (None, None)
    for raw in asm.splitlines():
        if m := _FILE.match(raw):
            files[m.group(1)] = (m.group(3) or m.group(2)).rsplit("/", 1)[-1]
            continue
        if m := _LOC.match(raw):
            where = (files.get(m.group(1)), int(m.group(2)))
            continue
        if (m := _INSTR.match(raw)) and m.group(1).startswith(COUNTED):
            yield (*where, m.group(1))


def counts_by_line(asm: str, file: str | None = None) -> dict[int | None, dict[str, int]]:
    """Per source line (None before the first ``.loc``): instruction name -> count; with
    ``file`` (a base name), only the lines of that file (an inlined Triton library function,
    ``tl.sum``, keeps its own file's lines)."""
    out: dict[int | None, Counter] = {}
    for src, line, name in instructions(asm):
        if file is not None and src != file:
            continue
        out.setdefault(line, Counter())[name] += 1
    return {k: dict(sorted(v.items())) for k, v in out.items()}


def totals(asm: str) -> dict[str, int]:
    """Instruction name -> count over the whole listing."""
    return dict(sorted(Counter(name for _, _, name in instructions(asm)).items()))
