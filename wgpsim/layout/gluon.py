"""Interop with Triton's Gluon layout classes (only when ``triton`` is installed).

``from_gluon`` turns a Gluon layout object (``triton.experimental.gluon.language`` and its AMD
``cdna5``/``gfx1250`` module) into our encoding; ``to_gluon`` goes the other way, so a layout
can be handed to Triton's own ``to_linear_layout`` (see ``gluon_linear_layout``).
``to_gluon_code`` prints a layout as the Gluon expression a kernel author pastes (it needs no
triton), with ``ttgl`` standing for ``triton.experimental.gluon.language``:

>>> print(to_gluon_code(PartitionedSharedLayout(2, 1, 0, PaddedSharedLayout(
...     [(512, 16)], order=[0, 1], shape=[64, 64]))))
ttgl.amd.cdna5.PartitionedSharedLayout(num_partitions=2, num_groups=1, partition_dim=0, partition_layout=ttgl.PaddedSharedLayout.with_identity_for(interval_padding_pairs=[[512, 16]], shape=[64, 64], order=[0, 1]))

>>> lay = SwizzledSharedLayout(1, 1, 1, [0, 1])
>>> if triton_available():
...     assert from_gluon(to_gluon(lay)) == lay
"""

from __future__ import annotations

import importlib.util
from typing import Any

from wgpsim.errors import LayoutError
from wgpsim.layout.distributed import BlockedLayout, DistributedLinearLayout, SliceLayout, as_lists
from wgpsim.layout.mma.mfma import AMDMFMALayout
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
from wgpsim.layout.shared import (
    PaddedSharedLayout,
    PartitionedSharedLayout,
    SharedLinearLayout,
    SwizzledSharedLayout,
)

TARGET = "gfx1250"


def triton_available() -> bool:
    return importlib.util.find_spec("triton") is not None


def _modules() -> tuple[Any, Any, Any]:
    if not triton_available():
        raise LayoutError("Gluon interop needs triton (pip install 'wgpsim[triton]')")
    import triton.experimental.gluon.language as gl
    from triton.experimental.gluon.language import amd
    from triton.experimental.gluon.language.amd import cdna5

    return gl, amd, cdna5


def _no_cga(obj: Any) -> None:
    if getattr(obj, "cga_layout", None):
        raise LayoutError(f"{type(obj).__name__}: cga_layout {obj.cga_layout}: one CTA is modelled")


def from_gluon(obj: Any) -> Any:
    """Our encoding equal to the Gluon layout ``obj``."""
    name = type(obj).__name__
    _no_cga(obj)
    if name == "BlockedLayout":
        return BlockedLayout(
            obj.size_per_thread, obj.threads_per_warp, obj.warps_per_cta, obj.order
        )
    if name == "DistributedLinearLayout":
        return DistributedLinearLayout(
            obj.reg_bases, obj.lane_bases, obj.warp_bases, obj.block_bases
        )
    if name == "AMDWMMALayout":
        if obj.rank not in (2, 3):
            raise LayoutError(f"AMDWMMALayout: rank {obj.rank}: only ranks 2 and 3 are modelled")
        return AMDWMMALayout(
            obj.version, obj.transposed, obj.warp_bases, obj.reg_bases or (), obj.instr_shape
        )
    if name == "DotOperandLayout":
        return DotOperandLayout(obj.operand_index, from_gluon(obj.parent), obj.k_width)
    if name == "SliceLayout":
        return SliceLayout(obj.dim, from_gluon(obj.parent))
    if name == "SharedLinearLayout":
        if obj.block_bases:
            raise LayoutError(
                f"SharedLinearLayout: block_bases {obj.block_bases}: one CTA is modelled"
            )
        return SharedLinearLayout(obj.offset_bases, obj.alignment)
    if name == "SwizzledSharedLayout":
        return SwizzledSharedLayout(obj.vec, obj.per_phase, obj.max_phase, obj.order)
    if name == "PaddedSharedLayout":
        return PaddedSharedLayout(
            obj.interval_padding_pairs, shape=obj.shape, offset_bases=obj.offset_bases
        )
    if name == "PartitionedSharedLayout":
        return PartitionedSharedLayout(
            obj.num_partitions, obj.num_groups, obj.partition_dim, from_gluon(obj.partition_layout)
        )
    raise LayoutError(f"from_gluon: {name} is not a layout wgpsim models")


def to_gluon(layout: Any) -> Any:
    """The Gluon layout object equal to our encoding ``layout`` (``to_gluon_code``, evaluated)."""
    if isinstance(layout, DistributedLinearLayout):
        raise LayoutError("to_gluon: a linear layout needs its shape; use to_gluon_linear")
    return _evaluate(to_gluon_code(layout))


def _evaluate(code: str) -> Any:
    gl, _, _ = _modules()
    # Our own printed code: layout class calls with integer lists, nothing else.
    return eval(code, {"__builtins__": {}, "ttgl": gl, "False": False, "True": True})  # noqa: S307


def _kw(name: str, **fields: Any) -> str:
    return f"{name}(" + ", ".join(f"{k}={v}" for k, v in fields.items()) + ")"


def to_gluon_code(layout: Any, shape: Any = None) -> str:
    """The Gluon expression (``ttgl`` = ``triton.experimental.gluon.language``) building
    ``layout``; a ``DistributedLinearLayout`` needs the tensor ``shape`` (Gluon stores it).

    >>> print(to_gluon_code(AMDWMMALayout(3, False, [[0, 1], [1, 0]], instr_shape=(16, 16, 32))))
    ttgl.amd.AMDWMMALayout(version=3, transposed=False, warp_bases=[[0, 1], [1, 0]], reg_bases=[], instr_shape=[16, 16, 32])
    """
    code = _distributed_code(layout, shape)
    code = code if code is not None else _shared_code(layout)
    if code is None:
        raise LayoutError(f"to_gluon_code: {type(layout).__name__} is not a layout encoding")
    return code


def _distributed_code(layout: Any, shape: Any) -> str | None:
    """`to_gluon_code` of a distributed encoding (None for any other value)."""
    if isinstance(layout, BlockedLayout):
        return _kw(
            "ttgl.BlockedLayout",
            size_per_thread=list(layout.size_per_thread),
            threads_per_warp=list(layout.threads_per_warp),
            warps_per_cta=list(layout.warps_per_cta),
            order=list(layout.order),
        )
    if isinstance(layout, DistributedLinearLayout):
        if shape is None:
            raise LayoutError("to_gluon_code: a linear layout needs its tensor shape (shape=...)")
        return _kw(
            "ttgl.DistributedLinearLayout",
            reg_bases=as_lists(layout.register),
            lane_bases=as_lists(layout.lane),
            warp_bases=as_lists(layout.warp),
            block_bases=[],
            shape=[int(v) for v in shape],
        )
    if isinstance(layout, AMDWMMALayout):
        extra = {"rank": layout.rank} if layout.rank == 3 else {}
        return _kw(
            "ttgl.amd.AMDWMMALayout",
            version=layout.version,
            transposed=layout.transposed,
            warp_bases=as_lists(layout.warp_bases),
            reg_bases=as_lists(layout.reg_bases),
            instr_shape=list(layout.instr_shape),
            **extra,
        )
    if isinstance(layout, AMDMFMALayout):
        return _kw(
            "ttgl.amd.AMDMFMALayout",
            version=layout.version,
            instr_shape=list(layout.instr_shape),
            transposed=layout.transposed,
            warps_per_cta=list(layout.warps_per_cta),
        )
    if isinstance(layout, DotOperandLayout):
        return _kw(
            "ttgl.DotOperandLayout",
            operand_index=layout.op_idx,
            parent=to_gluon_code(layout.parent),
            k_width=layout.k_width,
        )
    if isinstance(layout, SliceLayout):
        return _kw("ttgl.SliceLayout", dim=layout.dim, parent=to_gluon_code(layout.parent, shape))
    return None


def _shared_code(layout: Any) -> str | None:
    """`to_gluon_code` of a shared encoding (None for any other value)."""
    if type(layout) is SwizzledSharedLayout:  # not its gfx942 rotating variant
        return _kw(
            "ttgl.SwizzledSharedLayout",
            vec=layout.vec,
            per_phase=layout.per_phase,
            max_phase=layout.max_phase,
            order=list(layout.order),
        )
    if isinstance(layout, PaddedSharedLayout):
        pairs = [list(p) for p in layout.interval_padding_pairs]
        if layout.offset_bases is None:
            return _kw(
                "ttgl.PaddedSharedLayout.with_identity_for",
                interval_padding_pairs=pairs,
                shape=list(layout.shape),
                order=list(layout.order),
            )
        return _kw(
            "ttgl.PaddedSharedLayout",
            interval_padding_pairs=pairs,
            offset_bases=as_lists(layout.offset_bases),
            cga_layout=[],
            shape=list(layout.shape),
        )
    if isinstance(layout, PartitionedSharedLayout):
        return _kw(
            "ttgl.amd.cdna5.PartitionedSharedLayout",
            num_partitions=layout.num_partitions,
            num_groups=layout.num_groups,
            partition_dim=layout.partition_dim,
            partition_layout=to_gluon_code(layout.partition_layout),
        )
    if isinstance(layout, SharedLinearLayout):
        return _kw(
            "ttgl.SharedLinearLayout",
            offset_bases=as_lists(layout.offset_bases),
            alignment=layout.alignment,
        )
    return None


def is_gluon(obj: Any) -> bool:
    """Is ``obj`` a Gluon layout object (checked by module, so triton is not imported)?"""
    return type(obj).__module__.startswith("triton.experimental.gluon")


def to_gluon_linear(layout: DistributedLinearLayout, shape: Any) -> Any:
    """Gluon's ``DistributedLinearLayout`` for ``layout`` on ``shape``."""
    return _evaluate(to_gluon_code(layout, shape))


def gluon_builder() -> Any:
    """A Gluon op builder for ``TARGET`` (create once; conversions reuse it)."""
    _modules()
    from triton._C.libtriton import amd as amd_ir
    from triton._C.libtriton import gluon_ir, ir

    ctx = ir.context()
    ir.load_dialects(ctx)
    amd_ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx, TARGET)
    builder._wgpsim_context = ctx  # keep the context alive as long as the builder
    return builder


def gluon_linear_layout(layout: Any, shape: Any, builder: Any = None) -> Any:
    """Triton's own ``to_linear_layout`` of ``layout`` (ours or Gluon's) for ``TARGET``.

    Some conversions abort the process inside Triton 3.9.0 (e.g. swizzled WMMA ctaLayouts,
    padded layouts); call this in a child process when that can happen.
    """
    if isinstance(layout, DistributedLinearLayout):
        layout = to_gluon_linear(layout, shape)
    elif type(layout).__module__.startswith("wgpsim"):
        layout = to_gluon(layout)
    builder = builder or gluon_builder()
    return builder.to_linear_layout(layout._to_ir(builder), list(shape))
