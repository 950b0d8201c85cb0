"""Linear layouts over GF(2) and the Triton encodings that produce them (no timing here).

The seed's refresher in three lines: a layout sends each input bit to an output offset, and any
input is the XOR of the bits it is made of.

>>> from wgpsim.layout import LinearLayout
>>> warp = LinearLayout(warp=[[2, 1], [1, 0]], out_dims={"dim0": 4, "dim1": 2})
>>> warp.apply({"warp": 3})
{'dim0': 3, 'dim1': 1}

The conversion a ``local_load`` lowers through, from the attribute text of a TTGIR dump:

>>> from wgpsim.layout import conversion, parse
>>> dst = parse("#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], "
...             "lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [], block = []}>")
>>> shared = parse("#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>")
>>> cvt = conversion(dst, shared, (32, 8))   # (register, lane, warp, block) -> (offset, block)
>>> [b[0] for b in cvt.get_bases("register")], [b[0] for b in cvt.get_bases("lane")]
([32, 64, 128], [1, 2, 4, 8, 16])
"""

from wgpsim.lazy import exports

_EXPORTS = {
    "AMDWMMALayout": "wgpsim.layout.mma.wmma",
    "BlockedLayout": "wgpsim.layout.distributed",
    "DistributedLinearLayout": "wgpsim.layout.distributed",
    "DotOperandLayout": "wgpsim.layout.mma.wmma",
    "LinearLayout": "wgpsim.layout.linear_layout",
    "PaddedSharedLayout": "wgpsim.layout.shared",
    "PartitionedSharedLayout": "wgpsim.layout.shared",
    "SharedLinearLayout": "wgpsim.layout.shared",
    "SharedView": "wgpsim.layout.views",
    "SliceLayout": "wgpsim.layout.distributed",
    "SwizzledSharedLayout": "wgpsim.layout.shared",
    "conversion": "wgpsim.layout.addresses",
    "conversion_table": "wgpsim.layout.addresses",
    "dtype_bits": "wgpsim.layout.dtypes",
    "dtype_bytes": "wgpsim.layout.dtypes",
    "element_offsets": "wgpsim.layout.addresses",
    "from_dict": "wgpsim.layout.notation",
    "local_load_addresses": "wgpsim.layout.addresses",
    "parse": "wgpsim.layout.notation",
    "parse_any": "wgpsim.layout.notation",
    "to_dict": "wgpsim.layout.notation",
    "to_text": "wgpsim.layout.notation",
}
"""Each name this package offers, and the module that holds it (imported on first use)."""

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = exports(__name__, _EXPORTS)
