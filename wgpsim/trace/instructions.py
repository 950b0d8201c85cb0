"""The LDS instruction catalogue and the op codes of a trace.

Every LDS instruction moves a fixed number of bytes per active lane. How many lanes one port
serves per cycle (the "lane groups" of a pass) is hardware and lives in the hardware config, not
here. The transposed loads (seed, Part I) read ``bytes_per_lane`` contiguous bytes per lane
exactly like a plain load of the same width; ``elem_bits`` is the element width they exchange
across lanes afterwards (16 for ``tr16``, 8 for ``tr8``).

A trace stores ops as small integers: the index into ``OPS``, which lists every LDS instruction
and then the control ops ``wait_ds``, ``barrier``, ``clock`` and ``delay``.

>>> INSTRUCTIONS["ds_load_b128"]
Instruction(name='ds_load_b128', bytes_per_lane=16, kind='load', elem_bits=128)
>>> INSTRUCTIONS["ds_load_tr8_b64"].alignment
8
>>> op_name(op_code("wait_ds"))
'wait_ds'
>>> is_lds(np.array([op_code("ds_store_b32"), op_code("barrier")]))
array([ True, False])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from wgpsim.errors import TraceError

LANES = 32
"""Lanes of a wave32 warp: the width of one row of ``Trace.addr`` (a trace format constant)."""

Kind = Literal["load", "store", "load_tr"]


@dataclass(frozen=True)
class Instruction:
    """One LDS instruction: its name, bytes moved per active lane, kind and element width.

    ``elem_bits`` is the exchanged element width for ``load_tr`` and the width of the unsigned
    element for ``ds_load_u8``/``u16``; for the other plain loads and stores it is the whole
    per-lane access (``8 * bytes_per_lane``).

    >>> Instruction("ds_load_b96", 12, "load", 96).alignment
    4
    """

    name: str
    bytes_per_lane: int
    kind: Kind
    elem_bits: int

    @property
    def alignment(self) -> int:
        """Byte alignment a lane address needs: the largest power of two dividing the width.

        That is the natural alignment for power-of-two widths; ``ds_load_b96`` (12 bytes) needs
        dword (4-byte) alignment (assumption: as for b96 DS accesses on gfx9 and later).
        """
        return self.bytes_per_lane & -self.bytes_per_lane

    @property
    def is_load(self) -> bool:
        """True for plain and transposed loads."""
        return self.kind != "store"


def _catalogue() -> dict[str, Instruction]:
    entries: list[Instruction] = [
        Instruction(f"ds_load_b{bits}", bits // 8, "load", bits) for bits in (32, 64, 96, 128)
    ]
    entries += [Instruction(f"ds_load_u{bits}", bits // 8, "load", bits) for bits in (8, 16)]
    entries += [
        Instruction("ds_load_tr8_b64", 8, "load_tr", 8),
        Instruction("ds_load_tr16_b128", 16, "load_tr", 16),
    ]
    entries += [
        Instruction(f"ds_store_b{bits}", bits // 8, "store", bits) for bits in (8, 16, 32, 64, 128)
    ]
    return {ins.name: ins for ins in entries}


INSTRUCTIONS: dict[str, Instruction] = _catalogue()
"""Every LDS instruction a trace may use, by name."""

CONTROL_OPS: tuple[str, ...] = ("wait_ds", "barrier", "clock", "delay")
"""Ops that move no data: ``wait_ds n``, ``barrier``, ``clock <label>``, ``delay <cycles>``."""

OPS: tuple[str, ...] = (*INSTRUCTIONS, *CONTROL_OPS)
"""All op names; a trace stores the index into this tuple."""

_CODE: dict[str, int] = {name: i for i, name in enumerate(OPS)}
NUM_LDS_OPS = len(INSTRUCTIONS)
WAIT_DS, BARRIER, CLOCK, DELAY = (_CODE[name] for name in CONTROL_OPS)

OP_BYTES_PER_LANE = np.array(
    [INSTRUCTIONS[name].bytes_per_lane if name in INSTRUCTIONS else 0 for name in OPS],
    dtype=np.int64,
)
"""Bytes per active lane, indexed by op code (0 for control ops)."""

OP_ALIGNMENT = np.array(
    [INSTRUCTIONS[name].alignment if name in INSTRUCTIONS else 1 for name in OPS],
    dtype=np.int64,
)
"""Byte alignment of a lane address, indexed by op code (1 for control ops)."""


def op_code(name: str) -> int:
    """Index of ``name`` in ``OPS``.

    >>> op_code("ds_load_b32")
    0
    >>> op_code("ds_load_b256")
    Traceback (most recent call last):
    ...
    wgpsim.errors.TraceError: unknown op 'ds_load_b256' (valid: ds_load_b32, ...)
    """
    try:
        return _CODE[name]
    except (KeyError, TypeError):
        raise TraceError(f"unknown op {name!r} (valid: {', '.join(OPS)})") from None


def op_name(code: int) -> str:
    """Name of op code ``code``.

    >>> op_name(len(OPS) - 1)
    'delay'
    """
    if isinstance(code, bool) or not 0 <= int(code) < len(OPS):
        raise TraceError(
            f"unknown op code {code!r} (valid: 0..{len(OPS) - 1}, see wgpsim.trace.OPS)"
        )
    return OPS[int(code)]


def instruction(name: str) -> Instruction:
    """The catalogue entry for an LDS instruction, or a TraceError listing the valid ones."""
    try:
        return INSTRUCTIONS[name]
    except (KeyError, TypeError):
        raise TraceError(
            f"unknown LDS instruction {name!r} (valid: {', '.join(INSTRUCTIONS)})"
        ) from None


def is_lds(code: int | np.ndarray) -> bool | np.ndarray:
    """True where ``code`` is an LDS instruction (not a control op); works on numpy arrays."""
    if isinstance(code, np.ndarray):
        return (code >= 0) & (code < NUM_LDS_OPS)
    return 0 <= int(code) < NUM_LDS_OPS
