"""The kernel model: what a frontend read from a compiled kernel, as plain frozen values.

A `Kernel` holds what touches the LDS: its buffers (`Buffer`: one per ``ttg.local_alloc`` and
one per op that needs scratch), its LDS ops in module order (`LdsOp`: local_load, local_store,
packed-transposed loads, global<->LDS copies), the loops around them (`Loop`), and every op that
touches the LDS but is not modelled (`NotModelled`), each with its source location (`Loc`). The
readers in `wgpsim.frontend` build it; the trace and hw layers join it to the lowering and the
allocator; nothing here times anything.

Encodings are kept twice: as the module's text with aliases resolved (``encoding_text``) and,
where `wgpsim.layout` reads the kind, as the parsed encoding (``encoding``; None otherwise).

>>> md = MemDesc((2, 128, 64), "f16", "#ttg.swizzled_shared<{vec = 8, perPhase = 1, "
...     "maxPhase = 8, order = [1, 0]}>", None)
>>> md.shape_text, md.elem_bits, md.nbytes
('2x128x64xf16', 16, 32768)
>>> Loc("/src/gemm.py", 41, 20).short
'gemm.py:41'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod
from typing import Any

#: The LDS ops a kernel report models, in the order the issue lists them.
LDS_OPS = (
    "ttg.local_alloc",
    "ttg.local_load",
    "ttg.local_store",
    "amdg.local_load_packed_transposed",
    "ttg.async_copy_global_to_local",
    "amdg.async_tdm_copy_global_to_local",
    "amdg.async_tdm_copy_local_to_global",
)
#: Ops that may need a scratch buffer (Triton 3.9.0's ``defaultAllocationAnalysisScratchSizeFn``
#: and AMD's ``AMDAllocationAnalysisScratchSizeFn``): LDS ops of direction ``scratch``.
SCRATCH_LDS_OPS = (
    "ttg.convert_layout",
    "tt.reduce",
    "tt.scan",
    "tt.histogram",
    "tt.gather",
    "tt.atomic_rmw",
    "tt.atomic_cas",
    "amdg.buffer_atomic_rmw",
    "amdg.buffer_atomic_cas",
)
#: Views: a memdesc that reads a region of its source's allocation.
VIEW_OPS = ("ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_trans", "ttg.memdesc_reshape")

_ELEM_BITS = {
    "f16": 16,
    "bf16": 16,
    "f32": 32,
    "f64": 64,
    "i1": 8,
    "i8": 8,
    "i16": 16,
    "i32": 32,
    "i64": 64,
    "f8E4M3FN": 8,
    "f8E5M2": 8,
    "f8E4M3FNUZ": 8,
    "f8E5M2FNUZ": 8,
    "f4E2M1FN": 4,
}


#: the bits of a pointer element in LDS scratch (Triton's ``kPtrBitWidth``)
PTR_BITS = 64


def elem_bits(dtype: str) -> int:
    """Bits of one element of an MLIR element type (``f16`` -> 16, ``f8E4M3FN`` -> 8). A
    pointer (``!tt.ptr<i32>``, a tensor of addresses a ``ttg.convert_layout`` may move through
    LDS) is 64 bits, Triton's ``kPtrBitWidth`` (lib/Analysis/Allocation.cpp, the AMD lowering's
    too: the held-out MoE token sort's 256 pointers take 2048 bytes of scratch on gfx1250).

    >>> elem_bits("bf16"), elem_bits("f8E5M2"), elem_bits("i8"), elem_bits("!tt.ptr<f16>")
    (16, 8, 8, 64)
    """
    if dtype.startswith("!tt.ptr<"):
        return PTR_BITS
    if dtype in _ELEM_BITS:
        return _ELEM_BITS[dtype]
    if dtype[:1] in "if" and dtype[1:].isdigit():
        return int(dtype[1:])
    raise KeyError(dtype)


@dataclass(frozen=True)
class Loc:
    """A source location, ``file:line:col`` of the Python source (or of the IR file)."""

    file: str
    line: int
    col: int = 0
    #: the call sites it was inlined at, innermost first, as (file base name, line): the
    #: frames of its ``callsite`` chain after this one (``()`` for code not in a function call)
    callers: tuple[tuple[str, int], ...] = field(default=(), compare=False, repr=False)

    @property
    def short(self) -> str:
        """``file:line`` with the file's base name, as the report keys ops."""
        return f"{self.file.rsplit('/', 1)[-1]}:{self.line}"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class MemDesc:
    """``!ttg.memdesc<shape x dtype, encoding, #smem, mutable[, alloc shape]>``."""

    shape: tuple[int, ...]
    dtype: str
    encoding_text: str
    encoding: Any = field(compare=False, repr=False)
    alloc_shape: tuple[int, ...] | None = None
    mutable: bool = True

    @property
    def shape_text(self) -> str:
        return "x".join(map(str, self.shape)) + f"x{self.dtype}"

    @property
    def elem_bits(self) -> int:
        return elem_bits(self.dtype)

    @property
    def nbytes(self) -> int:
        """Bytes of the elements (no padding)."""
        return prod(self.shape) * self.elem_bits // 8


@dataclass(frozen=True)
class TensorType:
    """``tensor<shape x dtype, encoding>`` (a register tensor)."""

    shape: tuple[int, ...]
    dtype: str
    encoding_text: str
    encoding: Any = field(compare=False, repr=False)

    @property
    def shape_text(self) -> str:
        return "x".join(map(str, self.shape)) + f"x{self.dtype}"


@dataclass(frozen=True)
class Buffer:
    """One LDS buffer: a ``ttg.local_alloc`` (kind ``explicit``) or an op's scratch.

    ``stages`` is the leading dim of a multi-buffered alloc (1 otherwise); ``offsets`` the
    module's ``allocation.offset`` (one per partition buffer) or None before allocation;
    ``live`` the live range in op ids (Triton's numbering: post-order), ``op_id`` the defining op.
    """

    name: str
    kind: str
    memdesc: MemDesc | None
    stages: int
    offsets: tuple[int, ...] | None
    live: tuple[int, int]
    op_id: int
    loc: Loc | None
    line: int
    op: str = "ttg.local_alloc"
    size: int | None = None  # scratch bytes, when known


@dataclass(frozen=True)
class LdsOp:
    """One op that reads or writes the LDS, in module order (``index`` among the LDS ops).

    ``memdesc`` is the LDS side as the op sees it (after views); ``tensor`` the register side
    (None for copies from global memory, except an async copy with an ``other`` value: its
    source pointers' tensor, whose layout the ``other`` elements are stored from); ``buffer`` the root allocation's name; ``views`` the
    view ops between the allocation and this op, outermost first (``stage`` is the
    ``memdesc_index`` index when it is a constant, else None); ``view_chain`` the same views
    with what each does (index or None, (subslice offsets, shape), transpose order, reshaped
    shape), from the allocation outwards; ``loops`` the enclosing loops' ids, outermost first.

    A scratch op (`SCRATCH_LDS_OPS`: ``ttg.convert_layout``, ``tt.reduce``, ...) has no
    memdesc: ``tensor`` is its (first) source operand, ``result`` its (first) result,
    ``buffer`` its scratch buffer (``scratch:%name``), ``attrs`` what sizes its scratch
    (``axis``, ``reverse``, ``operands``, ``elem_types``, ...).
    """

    index: int
    op: str
    name: str | None
    loc: Loc | None
    line: int
    op_id: int
    memdesc: MemDesc | None
    tensor: TensorType | None
    buffer: str | None
    views: tuple[str, ...] = ()
    stage: int | None = None
    subslice: tuple[int, ...] | None = None
    loops: tuple[int, ...] = ()
    function: str = ""
    view_chain: tuple[tuple[str, Any], ...] = ()
    result: TensorType | None = None
    attrs: tuple[tuple[str, Any], ...] = ()

    @property
    def direction(self) -> str:
        """``load`` (LDS -> registers), ``store`` (registers/global -> LDS), ``copy_out``, or
        ``scratch`` (an op that writes and reads back its own scratch buffer)."""
        if self.op in SCRATCH_LDS_OPS:
            return "scratch"
        if self.op in ("ttg.local_load", "amdg.local_load_packed_transposed"):
            return "load"
        if self.op == "amdg.async_tdm_copy_local_to_global":
            return "copy_out"
        return "store"

    def attr(self, key: str, default: Any = None) -> Any:
        """One of ``attrs`` by name."""
        return dict(self.attrs).get(key, default)

    @property
    def src_encoding(self) -> str | None:
        """Where the data comes from: the shared encoding for loads, the tensor's for stores
        (and for scratch ops, whose result is the destination)."""
        if self.direction == "scratch":
            return self.tensor.encoding_text if self.tensor is not None else None
        side = self.memdesc if self.direction != "store" else self.tensor
        return side.encoding_text if side is not None else None

    @property
    def dst_encoding(self) -> str | None:
        if self.direction == "scratch":
            return self.result.encoding_text if self.result is not None else None
        side = self.tensor if self.direction != "store" else self.memdesc
        return side.encoding_text if side is not None else None


@dataclass(frozen=True)
class Loop:
    """A loop or branch around LDS ops: ``scf.for``/``scf.while``/``scf.if`` (or, in a module
    lowered to ``cf``, a block that branches back, kind ``cf.loop``)."""

    id: int
    kind: str
    loc: Loc | None
    line: int
    parent: int | None
    op_ids: tuple[int, int]
    bounds: tuple[str, str, str] | None = None


@dataclass(frozen=True)
class NotModelled:
    """An op that touches the LDS and that the model does not time, with why."""

    op: str
    loc: Loc | None
    line: int
    name: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class Kernel:
    """A kernel as read from its TTGIR: module attributes, LDS buffers, ops, loops."""

    name: str
    num_warps: int
    threads_per_warp: int
    target: str
    ttg_shared: int | None
    buffers: tuple[Buffer, ...]
    ops: tuple[LdsOp, ...]
    loops: tuple[Loop, ...]
    not_modelled: tuple[NotModelled, ...]
    functions: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()
    source: str | None = None
    #: read after Triton's ``allocate-shared-memory`` (``ttg.shared`` and the offsets present)
    allocated: bool = False
    assembly: str | None = field(default=None, repr=False, compare=False)
    metadata: tuple[tuple[str, Any], ...] = field(default=(), compare=False)

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)
