"""The hardware: the MI450 WGP config and the static rules of its LDS datapath.

``HardwareConfig`` comes from ``configs/mi450.yaml``; :mod:`wgpsim.hw.rules` holds the rules as
plain functions (bank and partition of an address, passes of an instruction, the arbiter's grant).
"""

from wgpsim.hw.alloc import (
    Allocation,
    Buffer,
    allocate,
    allocate_on,
    partitioned_buffers,
    tensor_buffers,
)
from wgpsim.hw.config import HardwareConfig, load_hardware, parse_overrides

__all__ = [
    "Allocation",
    "Buffer",
    "HardwareConfig",
    "allocate",
    "allocate_on",
    "load_hardware",
    "parse_overrides",
    "partitioned_buffers",
    "tensor_buffers",
]
