"""Element types by name: how many bits (and bytes) one element of a tensor takes.

The names are the ones users type (``--dtype bf16``) and Triton's spellings of the same types.

>>> dtype_bits("bf16"), dtype_bytes("fp8e4m3"), dtype_bytes("f32")
(16, 1, 4)
"""

from __future__ import annotations

from wgpsim.errors import LayoutError

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
