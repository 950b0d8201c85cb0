"""The bridge from layouts to LDS byte addresses: who reads which byte in a ``local_load``.

Triton lowers ``local_load`` through ``cvt = dst.invert_and_compose(shared)``, which maps each
destination (register, lane, warp) to the shared ``offset`` (and, for a partitioned layout, the
``partition`` buffer) holding its element. The byte address is then
``bases[partition] + pad(offset) * elem_bytes``. The seed's toy (32x8 bf16, one warp): lane l
reads its 8 registers from offsets ``l + 32 r``.

>>> dst = "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [], block = []}>"
>>> shared = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>"
>>> conversion(dst, shared, (32, 8))
LinearLayout(register=[[32, 0], [64, 0], [128, 0]], lane=[[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp=[], block=[], out_dims={"offset": 256, "block": 1})
>>> local_load_addresses(dst, shared, (32, 8), 2)[0, 1].tolist()
[2, 66, 130, 194, 258, 322, 386, 450]
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from wgpsim.errors import LayoutError, LayoutRangeError
from wgpsim.layout.distributed import is_distributed
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.layout.notation import kind_of, parse_any, to_text
from wgpsim.layout.shared import SHARED_TYPES, PaddedSharedLayout, PartitionedSharedLayout
from wgpsim.layout.views import SharedView
from wgpsim.packaged import hardware_fact

MAX_WARPS: int = hardware_fact("wgp", "max_warps")
"""Most warps one CTA has (32: 1024 work-items of 32 lanes; ``wgp.max_warps`` of the hardware
file): a layout or module spanning more is refused before anything is built from it."""

if TYPE_CHECKING:
    import pandas as pd


def _kind(layout: Any) -> str:
    return "LinearLayout" if isinstance(layout, LinearLayout) else kind_of(layout)


def _named(read: Any, value: Any, name: str) -> Any:
    """``read(value)``, a LayoutError naming the argument it came from (``--shared: ...``)."""
    try:
        return read(value)
    except LayoutError as err:
        raise LayoutError(f"{name}: {err}") from None


def local_load_encodings(
    dst: Any, shared: Any, names: tuple[str, str] = ("dst", "shared")
) -> tuple[Any, Any]:
    """``(dst, shared)`` read with ``parse_any`` and checked to be a distributed and a shared
    layout; ``names`` are what the errors call them (``("--dst", "--shared")`` in the CLI).
    A ``LinearLayout`` passes as dst if it has a ``lane`` in dim, as shared if an ``offset`` one.

    >>> local_load_encodings("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, "
    ...     "order = [1, 0]}>", "#ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], "
    ...     "warpsPerCTA = [1, 1], order = [1, 0]}>", ("--dst", "--shared"))
    Traceback (most recent call last):
    ...
    wgpsim.errors.LayoutError: --dst must be a distributed (register) layout, got swizzled_shared (are --dst and --shared swapped?)
    """
    dst = dst if isinstance(dst, LinearLayout) else _named(parse_any, dst, names[0])
    if not isinstance(shared, LinearLayout | SharedView):
        shared = _named(parse_any, shared, names[1])
    dst_ok = dst.has_in_dim("lane") if isinstance(dst, LinearLayout) else is_distributed(dst)
    shared_ok = (
        shared.has_in_dim("offset")
        if isinstance(shared, LinearLayout)
        else isinstance(shared, SHARED_TYPES + (SharedView,))
    )
    swapped = f" (are {names[0]} and {names[1]} swapped?)" if not (dst_ok or shared_ok) else ""
    if not dst_ok:
        raise LayoutError(
            f"{names[0]} must be a distributed (register) layout, got {_kind(dst)}{swapped}"
        )
    if not shared_ok:
        raise LayoutError(
            f"{names[1]} must be a shared-memory layout, got {_kind(shared)}{swapped}"
        )
    return dst, shared


def check_num_warps(num_warps: int, what: str) -> None:
    """Refuse a warp count beyond :data:`MAX_WARPS` or not a power of two (Triton's rule for
    ``num_warps``); ``what`` names the layout or attribute that gave it.

    >>> check_num_warps(8 * 65536, "the dst layout's warp count")
    Traceback (most recent call last):
    ...
    wgpsim.errors.LayoutRangeError: the dst layout's warp count 524,288: a CTA has 1..32 warps, a power of two (1024 work-items of 32 lanes at most)
    """
    if not 1 <= num_warps <= MAX_WARPS or num_warps & (num_warps - 1):
        raise LayoutRangeError(
            f"{what} {num_warps:,}: a CTA has 1..{MAX_WARPS} warps, a power of two "
            "(1024 work-items of 32 lanes at most)"
        )


def check_warps(num_warps: int | None, spans: int, name: str = "num_warps") -> None:
    """Refuse a warp count (``name``: the argument or flag that gave it) that the dst layout does
    not span (a layout over ``k`` warp bases spans ``2**k`` warps); None checks nothing.

    >>> check_warps(3, 1, "--warps")
    Traceback (most recent call last):
    ...
    wgpsim.errors.LayoutError: --warps 3: the dst layout spans 1 warp (2 to the power of its warp bases); give --warps 1, or leave it out
    """
    if num_warps is None or num_warps == spans:
        return
    spanned = "1 warp" if spans == 1 else f"{spans} warps"
    raise LayoutError(
        f"{name} {num_warps}: the dst layout spans {spanned} (2 to the power of its warp "
        f"bases); give {name} {spans}, or leave it out"
    )


@lru_cache(maxsize=1024)
def _linear_of(layout: Any, shape: tuple[int, ...]) -> LinearLayout:
    return layout.to_linear_layout(list(shape))


def linear_of(layout: Any, shape: Sequence[int]) -> LinearLayout:
    """``layout.to_linear_layout(shape)``, kept per (frozen) layout and shape: a sweep asks for
    the same shared and destination layouts over and over (a LinearLayout passes as it is).

    >>> from wgpsim.layout.shared import SwizzledSharedLayout
    >>> plain = SwizzledSharedLayout(1, 1, 1, (1, 0))
    >>> linear_of(plain, (2, 4)) is linear_of(plain, [2, 4])
    True
    """
    if isinstance(layout, LinearLayout):
        return layout
    try:
        hash(layout)
    except TypeError:  # not hashable (mutable): built every time
        return layout.to_linear_layout(list(shape))
    return _linear_of(layout, tuple(int(s) for s in shape))


linear_of.cache_clear = _linear_of.cache_clear  # type: ignore[attr-defined]
_linear = linear_of


def _show(layout: Any) -> str:
    return repr(layout) if isinstance(layout, LinearLayout) else to_text(layout)


def conversion(
    dst: Any, shared: Any, shape: Sequence[int], cvt: LinearLayout | None = None
) -> LinearLayout:
    """``cvt``: (register, lane, warp, block) -> (offset, block[, partition]) of a local_load
    (``cvt``: the caller composed it already; only the shared layout is checked)."""
    dst, shared = local_load_encodings(dst, shared)
    shared_ll = _linear(shared, shape)
    if not shared_ll.is_surjective():
        raise LayoutError(
            f"shared {_show(shared)}: does not hold every element of shape {list(shape)} "
            "(its layout is not surjective), so some elements have no LDS offset"
        )
    return _linear(dst, shape).invert_and_compose(shared_ll) if cvt is None else cvt


def element_offsets(
    dst: Any, shared: Any, shape: Sequence[int], cvt: LinearLayout | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Unpadded element offset (and partition, or None) per ``[warp, lane, register]``
    (``cvt``: ``conversion``'s layout when the caller has it)."""
    cvt = conversion(dst, shared, shape, cvt)
    dims = ("warp", "lane", "register")
    offset = _every_input(cvt, dims, "offset")
    part = _every_input(cvt, dims, "partition") if cvt.has_out_dim("partition") else None
    if isinstance(shared := local_load_encodings(dst, shared)[1], SharedView):
        affine = shared.affine()  # the view's start, XOR-ed in (Triton's getShmemOffset)
        offset ^= affine["offset"]
        if part is not None:
            part ^= affine.get("partition", 0)
    return offset, part


def _every_input(layout: LinearLayout, dims: Sequence[str], out: str) -> np.ndarray:
    """``layout``'s ``out`` for every input of ``dims`` (the others 0), int64 with one axis
    per dim (1 for a dim it lacks): what ``apply`` gives on the full grid. Each dim's images
    (built by doubling: the inputs below 2^k, then each XOR-ed with basis k) are XOR-ed
    together by broadcasting, so only the result has the grid's size.

    >>> L = LinearLayout(warp=[[4]], lane=[[1], [2]], out_dims={"offset": 8})
    >>> _every_input(L, ("warp", "lane"), "offset").tolist()
    [[0, 1, 2, 3], [4, 5, 6, 7]]
    """
    j = layout.out_dim_names.index(out)
    result = np.zeros((1,) * len(dims), dtype=np.int64)
    for axis, d in enumerate(dims):
        table = np.zeros(1, dtype=np.int64)
        for b in layout.get_bases(d) if layout.has_in_dim(d) else ():
            table = np.concatenate([table, table ^ b[j]])
        result = result ^ table.reshape([-1 if a == axis else 1 for a in range(len(dims))])
    return result


def local_load_addresses(
    dst: Any,
    shared: Any,
    shape: Sequence[int],
    elem_bytes: int,
    bases: int | Sequence[int] = 0,
    *,
    cvt: LinearLayout | None = None,
) -> np.ndarray:
    """LDS byte address of every destination element, int64 ``[warp, lane, register]``
    (``cvt``: ``conversion(dst, shared, shape)`` when the caller has it).

    ``bases``: the LDS byte address of the buffer (an int), or for a partitioned layout one
    address per partition buffer (``wgpsim.hw.alloc.Allocation.offsets_of``). The seed's
    microbenchmark, partitioned, with the buffers at 0 and 64 KiB: warp 1 reads row 1, which is
    piece 1, i.e. the start of buffer 1.

    >>> a = local_load_addresses("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], "
    ...     "warpsPerCTA = [4, 1], order = [1, 0]}>", "#ttg.partitioned_shared<{numPartitions = 2, "
    ...     "numGroups = 2, partitionDim = 0, partitionLayout = #ttg.swizzled_shared<{vec = 1, "
    ...     "perPhase = 1, maxPhase = 1, order = [1, 0]}>}>", (4, 256), 2, [0, 65536])
    >>> a[:, 0, 0].tolist()
    [0, 65536, 512, 66048]
    """
    dst, shared = local_load_encodings(dst, shared)
    if elem_bytes not in (1, 2, 4, 8):
        raise LayoutError(f"elem_bytes {elem_bytes}: must be 1, 2, 4 or 8")
    byte, part = element_offsets(dst, shared, shape, cvt)  # new arrays: changed in place
    if isinstance(shared, PaddedSharedLayout | PartitionedSharedLayout | SharedView):
        byte = shared.pad(byte)
    byte *= elem_bytes
    base = np.asarray(bases, dtype=np.int64).reshape(-1)
    if part is None:
        if base.size != 1:
            raise LayoutError(
                f"bases {list(base)}: an unpartitioned layout has one buffer, give one base address"
            )
        byte += base[0]
        return byte
    num = _linear(shared, shape).in_dim_size("partition")
    if base.size != num:
        raise LayoutError(
            f"bases {list(base)}: the partitioned layout has {num} buffers, "
            f"give one base address per buffer (e.g. Allocation.offsets_of)"
        )
    byte += base[part]
    return byte


def conversion_table(
    dst: Any, shared: Any, shape: Sequence[int], elem_bytes: int | None = None
) -> pd.DataFrame:
    """One row per input basis of ``cvt`` (the seed's table): ``in_dim``, ``input`` (1, 2, 4..),
    ``offset`` (element, before padding), ``partition`` if partitioned, ``bytes`` if
    ``elem_bytes`` is given: the byte offset in the buffer of that input alone, padding
    applied (``pad(offset) * elem_bytes``). Broadcast (zero) bases are rows too.
    """
    import pandas as pd  # only here: keeps `import wgpsim.layout` (and `wgpsim --help`) fast

    cvt = conversion(dst, shared, shape)
    _, shared = local_load_encodings(dst, shared)
    pad = getattr(shared, "pad", None) or (lambda offset: offset)
    rows = []
    for d in ("register", "lane", "warp"):
        for k, b in enumerate(cvt.get_bases(d)):
            row = dict(zip(cvt.out_dim_names, b, strict=True))
            entry: dict[str, Any] = {"in_dim": d, "input": 1 << k, "offset": row["offset"]}
            if "partition" in row:
                entry["partition"] = row["partition"]
            if elem_bytes is not None:
                entry["bytes"] = int(pad(row["offset"])) * elem_bytes
            rows.append(entry)
    columns = ["in_dim", "input", "offset"]
    columns += [c for c in ("partition", "bytes") if any(c in r for r in rows)]
    return pd.DataFrame(rows, columns=columns)
