"""The kernel model joined to the allocator and the lowering: where each buffer lives and what
every LDS op of a kernel becomes, per warp, with every lane's address.

* `allocate_kernel`: wgpsim's allocation of the kernel's ``local_alloc`` and scratch buffers
  (Triton 3.9.0's partition-aware allocator, `wgpsim.hw.alloc`, over the live ranges the reader
  numbered as Triton does; scratch sized by `wgpsim.hw.scratch`, live at its op alone, 128-byte
  aligned, collected after the explicit buffers as Triton does), beside the module's
  ``allocation.offset`` when it has them. The op addresses
  use the module's offsets when present (they are the compiler's), else wgpsim's.
* `lower_op`: one op -> `OpLowering`. ``ttg.local_load`` goes through
  `wgpsim.trace.lowering.lower` (shared -> registers), ``amdg.local_load_packed_transposed``
  through `wgpsim.trace.lowering_packed` (``ds_load_tr4_b64``). ``ttg.local_store`` and
  ``ttg.local_alloc`` of a value are ``lower(..., store=True)``: Triton's generic ``lowerLdSt``
  in the other direction (``ds_store_b*``, pairs merged as the assembly has them). Views (``memdesc_index``, ``_subslice``,
  ``_trans``, ``_reshape``) are addressed through `wgpsim.layout.views.SharedView`, as Triton
  does (a computed stage index is read as stage 0, a loop-carried view as its first
  iteration, and the op says so); TDM and async
  global->LDS copies write LDS through the TDM/async engines, not ``ds_*`` instructions, and are
  not lowered here, except the ``other`` value of an async copy (``writes_with_ds``): a store of
  the source pointers' layout into the buffer, ``lower(..., store=True)``. A scratch op
  (``ttg.convert_layout`` through LDS, ``tt.reduce`` across warps, an atomic with a used
  result, ``tt.scan`` across warps) is its store, barrier and load steps
  (`wgpsim.trace.scratch.lowering`, `wgpsim.trace.scratch.reduce`, `wgpsim.trace.scratch.scan`:
  a `ScratchLowering` that reads like a `Lowering`).

The buffer of the AMD blog's plain microbenchmark ([4, 8192] fp16, swizzled) takes 64 KiB at 0:

>>> from wgpsim.frontend.sources import read_kernel
>>> k = read_kernel("examples/kernels/lds_bandwidth_plain/lds_bandwidth.ttgir")
>>> alloc = allocate_kernel(k)
>>> alloc.offsets, alloc.lds_bytes
({'%smem': (0,)}, 65536)
>>> [(o.op.op, o.counts) for o in (lower_op(k, op, alloc) for op in k.ops)]
[('ttg.local_alloc', {'ds_store_b128': 32}), ('ttg.local_load', {'ds_load_b128': 32})]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from wgpsim.errors import WgpsimError
from wgpsim.frontend.model import Kernel, LdsOp, elem_bits
from wgpsim.hw.alloc import Allocation, Buffer, allocate_on, tensor_buffers
from wgpsim.hw.config import HardwareConfig, target_hardware
from wgpsim.hw.scratch import SCRATCH_ALIGNMENT, scratch_bytes
from wgpsim.kernel.lockstep import op_trace
from wgpsim.kernel.target_lowering import for_target
from wgpsim.layout.views import SharedView
from wgpsim.trace.lowering import Lowering, lower, packed_in_order
from wgpsim.trace.lowering_packed import lower_packed_transposed
from wgpsim.trace.spelling import in_spelling

if TYPE_CHECKING:  # the scratch lowerings are imported by the scratch ops that use them
    from wgpsim.trace.scratch.lowering import ScratchLowering

__all__ = [
    "KernelAllocation",
    "OpLowering",
    "allocate_kernel",
    "carried_stage",
    "computed_stage",
    "lower_op",
    "writes_with_ds",
    "op_trace",
    "shared_view",
]

LOADS = ("ttg.local_load", "amdg.local_load_packed_transposed")
ASYNC_COPY = "ttg.async_copy_global_to_local"
STORES = ("ttg.local_store", "ttg.local_alloc")
ASYNC_WHY = "the copy engine writes the LDS (global_load_async_to_lds; no other value)"
TDM_WHY = "the copy engine writes the LDS (the TDM): not in this lock-step table (--loop-timing times its writes)"  # fmt: skip  # noqa: E501


@dataclass(frozen=True)
class KernelAllocation:
    """Buffers' offsets: ``offsets`` (what the ops use), ``wgpsim_offsets`` (wgpsim's own,
    None where a buffer could not be placed), ``module_offsets`` (the module's, or None)."""

    offsets: dict[str, tuple[int, ...]]
    wgpsim_offsets: dict[str, tuple[int, ...]]
    module_offsets: dict[str, tuple[int, ...]] | None
    sizes: dict[str, tuple[int, ...]]
    lds_bytes: int | None
    allocation: Allocation | None = field(repr=False, default=None)
    notes: tuple[str, ...] = ()

    @property
    def source(self) -> str:
        return "module" if self.module_offsets is not None else "wgpsim"


def _scratch_sizes(kernel: Kernel, notes: list[str], num_banks: int) -> dict[str, int]:
    """Each scratch buffer's bytes: the module's ``allocation.size``, else Triton's rule
    (`wgpsim.hw.scratch`); a buffer wgpsim cannot size is left out, with a note."""
    by_buffer = {op.buffer: op for op in kernel.ops if op.direction == "scratch"}
    sizes = {}
    for b in kernel.buffers:
        if b.kind != "scratch":
            continue
        if b.size is not None:
            sizes[b.name] = b.size
        elif b.name in by_buffer:
            try:
                op = by_buffer[b.name]
                sizes[b.name] = scratch_bytes(op, kernel.threads_per_warp, num_banks)
            except (WgpsimError, KeyError, ValueError) as err:  # a layout or type not modelled
                notes.append(f"{b.name}: scratch not sized: {err!s}")
    unsized = [b.name for b in kernel.buffers if b.kind == "scratch" and b.name not in sizes]
    if unsized:
        notes.append(
            f"{len(unsized)} op(s) may use LDS scratch that wgpsim does not size, so no LDS total"
        )
    return sizes


def _in_triton_order(kernel: Kernel) -> list:
    """The buffers in the order Triton's allocator collects them: the explicit ones, then the
    scratch ones, each in program pre-order (an op with a region before what it holds)."""
    first_line = {op.buffer: op.line for op in kernel.ops if op.direction == "scratch"}
    explicit = [b for b in kernel.buffers if b.kind != "scratch"]
    scratch = [b for b in kernel.buffers if b.kind == "scratch"]
    return explicit + sorted(scratch, key=lambda b: first_line.get(b.name, b.line))


def allocate_kernel(kernel: Kernel, hw: HardwareConfig | None = None) -> KernelAllocation:
    """wgpsim's allocation of the kernel's buffers, and the offsets the ops use."""
    hw = target_hardware(kernel.target) if hw is None else hw
    pieces, names, notes = [], [], []
    scratch = _scratch_sizes(kernel, notes, hw.banks.count)
    zero = {name for name, size in scratch.items() if size == 0}
    for b in _in_triton_order(kernel):
        if b.kind == "scratch" and scratch.get(b.name):
            pieces.append(Buffer(b.name, scratch[b.name], SCRATCH_ALIGNMENT, b.live))
            names.append(b.name)
            continue
        if b.kind != "explicit":
            continue
        if b.memdesc is None or b.memdesc.encoding is None:
            notes.append(f"{b.name}: encoding {b.memdesc and b.memdesc.encoding_text} not modelled")
            continue
        try:
            pieces += tensor_buffers(
                b.name, b.memdesc.encoding, b.memdesc.shape, b.memdesc.elem_bits // 8, b.live
            )
            names.append(b.name)
        except WgpsimError as err:
            notes.append(f"{b.name}: {err}")
    allocation = None
    mine: dict[str, tuple[int, ...]] = {}
    sizes: dict[str, tuple[int, ...]] = {}
    if pieces:
        try:
            allocation = allocate_on(hw, pieces)
        except WgpsimError as err:
            notes.append(f"allocation: {err}")
    for name in names:
        own = [p for p in pieces if p.name == name or p.name.startswith(f"{name}[p")]
        sizes[name] = tuple(p.size for p in own)
        if allocation is not None:
            mine[name] = tuple(allocation.offsets_of(name))
    module = None
    if kernel.allocated:
        module = {b.name: b.offsets for b in kernel.buffers if b.offsets is not None}
    for name in zero:
        sizes[name] = ()
    wanted = sum(b.kind in ("explicit", "scratch") for b in kernel.buffers) - len(zero)
    skipped = len(names) < wanted
    lds = allocation.size if allocation is not None and not skipped else None
    if not pieces and not skipped:
        lds = 0
    return KernelAllocation(
        offsets=dict(module) if module is not None else dict(mine),
        wgpsim_offsets=mine,
        module_offsets=module,
        sizes=sizes,
        lds_bytes=lds,
        allocation=allocation,
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class OpLowering:
    """What one LDS op becomes: ``counts`` per warp by instruction; ``lowering`` carries every
    lane's address (None when the op is not lowered, ``note`` says why)."""

    op: LdsOp
    instruction: str | None
    counts: dict[str, int]
    eligibility: str | None = None
    reason: str | None = None
    bases: tuple[int, ...] | None = None
    note: str = ""
    lowering: Lowering | ScratchLowering | None = field(default=None, repr=False)

    @property
    def modelled(self) -> bool:
        return self.lowering is not None


LOOP_CARRIED = ("iter_arg", "block argument", "scf.for result")
"""How a view reaches an op through a loop (``LdsOp.views``)."""


def computed_stage(op: LdsOp) -> bool:
    """Whether the op reaches its buffer through a ``memdesc_index`` of a computed index."""
    return any(how == "ttg.memdesc_index" and arg is None for how, arg in op.view_chain)


def carried_stage(op: LdsOp) -> int | None:
    """The stage a loop-carried view starts at (its first ``memdesc_index``, a constant in the
    loop's initial value), or None if the op's view is not loop-carried."""
    if not set(LOOP_CARRIED) & set(op.views):
        return None
    return next((a for how, a in op.view_chain if how == "ttg.memdesc_index"), None)


def _shared(op: LdsOp, kernel: Kernel, stage: int | None = None) -> tuple[Any, str]:
    """The shared layout the op reads through: its allocation's encoding, or the
    `wgpsim.layout.views.SharedView` its views make of it; and what was assumed. ``stage``
    stands for the index of a computed ``memdesc_index``, or of a loop-carried view's first
    one (else a computed index is read as 0, and a carried view as its first iteration)."""
    md = kernel.buffer(op.buffer).memdesc
    if not op.view_chain:
        return md.encoding, ""
    view = SharedView.of(md.encoding, md.shape)
    notes = []
    carried = carried_stage(op) is not None
    if set(LOOP_CARRIED) & set(op.views) and stage is None:
        notes.append("a loop-carried view: addresses of its first iteration")
    first = True
    for how, arg in op.view_chain:
        if how == "ttg.memdesc_index":
            if stage is not None and (arg is None or (carried and first)):
                arg = stage
            elif arg is None:
                arg = 0
                notes.append("the stage index is computed: addresses of stage 0")
            first = False
            view = view.index(arg)
        elif how == "ttg.memdesc_subslice":
            view = view.subslice(*arg)
        elif how == "ttg.memdesc_trans":
            view = view.trans(arg)
        else:
            view = view.reshape(arg)
    return view, "; ".join(notes)


def shared_view(kernel: Kernel, op: LdsOp, stage: int | None = None) -> tuple[Any, str]:
    """The shared layout (or view) ``op`` reaches its buffer through, and what was assumed
    (``stage`` as in `lower_op`)."""
    return _shared(op, kernel, stage)


def lower_op(
    kernel: Kernel,
    op: LdsOp,
    alloc: KernelAllocation,
    hw: HardwareConfig | None = None,
    *,
    stage: int | None = None,
) -> OpLowering:
    """The instructions and addresses of one LDS op (see the module docstring); ``stage``
    stands for a computed or loop-carried ``memdesc_index`` (see ``_shared``)."""
    hw = target_hardware(kernel.target) if hw is None else hw
    if op.direction == "scratch":
        return _lower_scratch(kernel, op, alloc, hw)
    if not writes_with_ds(op):
        return OpLowering(op, None, {}, note=ASYNC_WHY if op.op == ASYNC_COPY else TDM_WHY)
    if op.buffer is None or op.buffer not in alloc.offsets:
        return OpLowering(op, None, {}, note="its buffer has no offsets (not allocated)")
    md, tensor = op.memdesc, op.tensor
    if md.encoding is None or tensor is None or tensor.encoding is None:
        which = md.encoding_text if md.encoding is None else (tensor and tensor.encoding_text)
        return OpLowering(op, None, {}, note=f"layout {which} not modelled")
    bases = alloc.offsets[op.buffer]
    store = op.direction == "store"
    try:
        shared, note = _shared(op, kernel, stage)
        base = list(bases) if len(bases) > 1 else bases[0]
        if op.op == "amdg.local_load_packed_transposed":
            low = lower_packed_transposed(
                shared, tensor.encoding, md.shape, num_warps=kernel.num_warps, bases=base
            )
        else:
            low = lower(
                shared,
                tensor.encoding,
                md.shape,
                md.elem_bits,
                num_warps=kernel.num_warps,
                bases=base,
                # a target without transposed loads (gfx942) reads with plain ones
                allow_transpose=not store and hw.has_transposed_loads,
                store=store,
            )
        if store and op.attr("producer") == "arith.truncf" and not hw.wgp.packed_convert:
            low = replace(low, packed=False, issued=None)  # one converted value a register
        if op.op == ASYNC_COPY:  # each other-value store under its mask's own branch
            low = replace(low, predicated=True, issued=None)
        low = for_target(low, hw)
        low._check_alignment()
    except WgpsimError as err:
        return OpLowering(op, None, {}, bases=bases, note=str(err))
    if op.op == ASYNC_COPY:
        note = "; ".join(filter(None, (OTHER_STORE_NOTE, note)))
    return OpLowering(
        op,
        low.instruction,
        dict(low.counts),
        low.eligibility if not store else None,
        low.reason if not store else None,
        bases,
        note,
        low,
    )


def _lower_scratch(
    kernel: Kernel, op: LdsOp, alloc: KernelAllocation, hw: HardwareConfig
) -> OpLowering:
    """A scratch op's store, barrier and load steps (`wgpsim.trace.scratch.lowering`), at its
    scratch buffer's offset; ops wgpsim does not lower yet say so."""
    given = {b.name for b in kernel.buffers}
    if op.buffer is None or op.buffer not in given or alloc.sizes.get(op.buffer) == ():
        return OpLowering(op, None, {}, note="needs no LDS scratch (Triton gives it none)")
    if op.attr("use_padded_scratch_shmem"):
        return OpLowering(op, None, {}, note="AMD's padded scratch layout is not modelled")
    lower_fn = SCRATCH_LOWERINGS.get("atomic" if "atomic" in op.op else op.op)
    if lower_fn is None:
        return OpLowering(op, None, {}, note=f"{op.op}: its scratch traffic is not lowered yet")
    scalar = op.result is None and ("atomic" in op.op or op.op == "tt.reduce")
    if not scalar and (op.tensor is None or op.tensor.encoding is None or op.result is None):
        return OpLowering(op, None, {}, note="a layout of the op is not modelled")
    offsets = alloc.offsets.get(op.buffer)
    note = "" if offsets else "the scratch buffer has no offset: addresses from byte 0"
    bases = tuple(offsets) if offsets else (0,)
    try:
        low = lower_fn(op, bases[0], kernel, hw)
        low = _packed_stores(low, op, hw)
        low = in_spelling(low, hw.instructions, hw.describe())
        low._check_alignment()
    except WgpsimError as err:
        return OpLowering(op, None, {}, bases=bases, note=str(err))
    if not low.steps:
        return OpLowering(op, None, {}, note="needs no LDS scratch: the data stays in each warp")
    return OpLowering(
        op, low.instruction, dict(low.counts), low.eligibility, low.reason, bases, note, low
    )


def _packed_stores(low: ScratchLowering, op: LdsOp, hw: HardwareConfig) -> ScratchLowering:
    """A convert's scratch stores of 8/16-bit values that a vector global load (or, on a
    target with packed converts, an fp32 conversion) left two or four a register, in element
    order (`wgpsim.trace.lowering.packed_in_order` of the source layout): the high halves go
    as ``ds_store_b16_d16_hi``, as the gfx9 assembly of the corpus's transpose_tile_fp16 has
    them (8 ``ds_write_b16`` + 8 ``ds_write_b16_d16_hi`` a warp)."""
    from wgpsim.trace.scratch.lowering import thread_layout

    producer = op.attr("producer")
    if op.op != "ttg.convert_layout" or producer not in ("tt.load", "arith.truncf"):
        return low
    if producer == "arith.truncf" and not hw.wgp.packed_convert:
        return low
    src = op.tensor
    order = getattr(src.encoding, "order", None)
    ll = thread_layout(src.encoding, src.shape)
    if not packed_in_order(ll, elem_bits(src.dtype), int(order[0]) if order else None):
        return low
    steps = tuple(
        replace(s, packed=True, issued=None) if isinstance(s, Lowering) and s.store else s
        for s in low.steps
    )
    return replace(low, steps=steps)


def _lower_convert(op: LdsOp, base: int, kernel: Kernel, hw: HardwareConfig) -> ScratchLowering:
    from wgpsim.trace.scratch.lowering import lower_convert

    src, dst = op.tensor, op.result
    bits = elem_bits(src.dtype)
    where = dict(base=base, num_banks=hw.banks.count, through_lds=True)  # it has scratch
    return lower_convert(src.encoding, dst.encoding, src.shape, bits, **where)


def _lower_reduce(op: LdsOp, base: int, kernel: Kernel, hw: HardwareConfig) -> ScratchLowering:
    from wgpsim.trace.scratch.reduce import lower_reduce

    src, dst = op.tensor, op.result
    bits = [elem_bits(t) for t in op.attr("elem_types", (src.dtype,))]
    axis = op.attr("axis")
    layout = dst.encoding if dst is not None else None  # None: reduced to a scalar
    return lower_reduce(
        src.encoding, layout, src.shape, bits, axis, base=base, num_banks=hw.banks.count
    )


def _lower_atomic(op: LdsOp, base: int, kernel: Kernel, hw: HardwareConfig) -> ScratchLowering:
    from wgpsim.trace.scratch.reduce import lower_atomic

    res = op.result
    layout, shape = (res.encoding, res.shape) if res is not None else (None, ())
    dtype = elem_bits(op.attr("elem_type", res.dtype if res is not None else "i32"))
    warps, lanes = kernel.num_warps, kernel.threads_per_warp
    return lower_atomic(layout, shape, dtype, num_warps=warps, base=base, lanes=lanes)


def _lower_scan(op: LdsOp, base: int, kernel: Kernel, hw: HardwareConfig) -> ScratchLowering:
    from wgpsim.trace.scratch.scan import live_partials, lower_scan

    src = op.tensor
    bits = [elem_bits(t) for t in op.attr("elem_types", (src.dtype,))]
    live = live_partials(op.attr("combine_deps"), op.attr("results_used"))
    axis, rev = op.attr("axis"), bool(op.attr("reverse"))
    return lower_scan(src.encoding, src.shape, bits, axis, reverse=rev, base=base, live=live)


SCRATCH_LOWERINGS = {
    "ttg.convert_layout": _lower_convert,
    "tt.reduce": _lower_reduce,
    "tt.scan": _lower_scan,
    "atomic": _lower_atomic,
}
"""Scratch ops wgpsim lowers, by op name (every atomic as ``atomic``):
``(op, scratch base byte, kernel, hardware) -> ScratchLowering`` (the kernel's warps and lanes,
the target's LDS banks)."""


OTHER_STORE_NOTE = (
    "its other value: ds_store of the source pointers' layout into the buffer (the loaded "
    "elements go by global_load_async_to_lds, not timed as LDS writes); every lane timed at "
    "its element's address (assumption: the assembly sends lanes whose mask holds to an "
    "out-of-range address)"
)


def writes_with_ds(op: LdsOp) -> bool:
    """Whether the op's LDS side is ``ds_*`` instructions: loads, stores, scratch ops
    (``direction == "scratch"``), and an async copy with an ``other`` value (Triton 3.9.0's
    AsyncCopyGlobalToLocalOp lowering on gfx1250 stores ``other`` with a predicated
    ``llStore`` beside each ``global_load_async_to_lds``)."""
    if op.op in LOADS + STORES or op.direction == "scratch":
        return True
    return op.op == ASYNC_COPY and op.tensor is not None
