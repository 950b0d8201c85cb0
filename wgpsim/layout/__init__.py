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

from wgpsim.layout.addresses import (
    conversion,
    conversion_table,
    element_offsets,
    local_load_addresses,
)
from wgpsim.layout.distributed import (
    AMDWMMALayout,
    BlockedLayout,
    DistributedLinearLayout,
    DotOperandLayout,
    SliceLayout,
)
from wgpsim.layout.dtypes import dtype_bits, dtype_bytes
from wgpsim.layout.linear_layout import LinearLayout
from wgpsim.layout.notation import from_dict, parse, parse_any, to_dict, to_text
from wgpsim.layout.shared import (
    PaddedSharedLayout,
    PartitionedSharedLayout,
    SharedLinearLayout,
    SwizzledSharedLayout,
)
from wgpsim.layout.views import SharedView

__all__ = [
    "AMDWMMALayout",
    "BlockedLayout",
    "DistributedLinearLayout",
    "DotOperandLayout",
    "LinearLayout",
    "PaddedSharedLayout",
    "PartitionedSharedLayout",
    "SharedLinearLayout",
    "SharedView",
    "SliceLayout",
    "SwizzledSharedLayout",
    "conversion",
    "conversion_table",
    "dtype_bits",
    "dtype_bytes",
    "element_offsets",
    "from_dict",
    "local_load_addresses",
    "parse",
    "parse_any",
    "to_dict",
    "to_text",
]
