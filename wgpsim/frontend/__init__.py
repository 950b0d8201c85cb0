"""Frontends: readers of compiled kernels into the kernel model (`wgpsim.frontend.model`).

They only read: ``ttgir`` reads a TTGIR module's text, ``sources`` finds the module (and its
assembly and metadata) in a Triton cache or dump directory or a tritonparse trace, and
``compile`` (with the triton extra) compiles a ``@triton.jit``/``@gluon.jit`` function for
gfx1250 on the CPU. They import `wgpsim.layout` to read encodings and nothing that times.
"""

from wgpsim.frontend.model import Buffer, Kernel, LdsOp, Loc, Loop, MemDesc, NotModelled
from wgpsim.frontend.ttgir import read_ttgir, read_ttgir_file

__all__ = [
    "Buffer",
    "Kernel",
    "LdsOp",
    "Loc",
    "Loop",
    "MemDesc",
    "NotModelled",
    "read_ttgir",
    "read_ttgir_file",
]
