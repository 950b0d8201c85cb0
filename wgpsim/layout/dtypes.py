"""Tensor types as users type them: element types by name (how many bits and bytes one element
takes) and shapes (``--shape 32x8``).

The names are the ones users type (``--dtype bf16``) and Triton's spellings of the same types.

>>> dtype_bits("bf16"), dtype_bytes("fp8e4m3"), dtype_bytes("f32")
(16, 1, 4)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from wgpsim.errors import LayoutError, shown

MAX_ELEMENTS = 1 << 24
"""Most elements of a tensor shape: 16 MiB of 1-byte elements, the largest LDS a hardware file
may describe (``partitions.lds_bytes``). A shape is refused before anything is allocated for it
(the per-element address arrays of a ``local_load`` cost 8 bytes an element)."""

DTYPE_BITS: dict[str, int] = {
    "fp16": 16,
    "bf16": 16,
    "fp32": 32,
    "fp8": 8,
    "fp8e4m3": 8,
    "fp8e5m2": 8,
    "i8": 8,
    "u8": 8,
    "i16": 16,
    "i32": 32,
}

# Triton / MLIR spellings of the same types.
_ALIASES: dict[str, str] = {
    "f16": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "f32": "fp32",
    "float32": "fp32",
    "f8e4m3fn": "fp8e4m3",
    "f8e5m2": "fp8e5m2",
    "int8": "i8",
    "uint8": "u8",
    "int16": "i16",
    "int32": "i32",
}


def dtype_bits(name: str) -> int:
    """Bits of one element of type ``name`` (case-insensitive; Triton spellings accepted)."""
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in DTYPE_BITS:
        raise LayoutError(f"dtype {name!r}: unknown; valid: {', '.join(DTYPE_BITS)}")
    return DTYPE_BITS[key]


def dtype_bytes(name: str) -> int:
    """Bytes of one element of type ``name`` (every supported type is a whole number of bytes)."""
    return dtype_bits(name) // 8


def parse_shape(shape: str | Sequence[int]) -> tuple[int, ...]:
    """A tensor shape as users type it (``"32x8"``) or as a sequence -> a tuple of sizes.

    >>> parse_shape("128x256"), parse_shape([32, 8])
    ((128, 256), (32, 8))
    >>> parse_shape("32by8")
    Traceback (most recent call last):
    ...
    wgpsim.errors.LayoutError: shape '32by8': expected positive sizes joined by 'x', e.g. 128x256
    """
    parts = shape.lower().split("x") if isinstance(shape, str) else list(shape)
    try:
        sizes = tuple(int(s) for s in parts)
    except (TypeError, ValueError):
        sizes = ()
    if not sizes or any(s <= 0 for s in sizes):
        raise LayoutError(
            f"shape {shown(shape)}: expected positive sizes joined by 'x', e.g. 128x256"
        )
    elements = math.prod(sizes)
    if elements > MAX_ELEMENTS:
        raise LayoutError(
            f"shape {shown(shape)}: "
            f"{elements:.3g} elements, more than any LDS holds (valid: at most "
            f"{MAX_ELEMENTS:,} elements, 16 MiB of 1-byte elements)"
        )
    return sizes
