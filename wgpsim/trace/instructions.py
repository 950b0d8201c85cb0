"""The LDS instruction catalogue and the op codes of a trace.

Every LDS instruction moves a fixed number of bytes per active lane. How many lanes one port
serves per cycle (the "lane groups" of a pass) is hardware and lives in the hardware config, not
here. The transposed loads (seed, Part I) read ``bytes_per_lane`` contiguous bytes per lane
exactly like a plain load of the same width; ``elem_bits`` is the element width they exchange
across lanes afterwards (16 for ``tr16``, 8 for ``tr8``). The 2addr forms (``ds_load_2addr_b32``
...) make two accesses per lane from one address register: a trace row holds each lane's first
address and, in ``arg``, the byte distance to the second (the same for every lane).

A trace stores ops as small integers: the index into ``OPS``, which lists every LDS instruction
(gfx1250's, with the TDM's writes ``tensor_load_to_lds`` last, then CDNA3/CDNA4's ``ds_read_*``
... in the gfx9 spelling) and then the control ops ``wait_ds``,
``barrier``, ``clock``, ``wait_tensor`` and ``delay``.

>>> b128 = INSTRUCTIONS["ds_load_b128"]
>>> b128.bytes_per_lane, b128.kind, b128.elem_bits, b128.addresses
(16, 'load', 128, 1)
>>> INSTRUCTIONS["ds_load_2addr_b64"].bytes_per_lane   # two 8-byte accesses per lane
16
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
"""Lanes of a wave32 warp: the default width of one row of ``Trace.addr`` (gfx1250 is wave32)."""

WAVE_SIZES = (32, 64)
"""Lanes a warp may have (``wgp.warp_size`` of a hardware file, ``Trace.lanes``): wave32 on
gfx1250 (MI450), wave64 on gfx942/gfx950 (CDNA3/CDNA4)."""

Kind = Literal["load", "store", "load_tr", "tdm", "lds_dma"]

Family = Literal["gfx12", "gfx9"]
"""The assembly spelling an instruction belongs to: gfx1250's ``ds_load_*`` / ``ds_store_*``
(``gfx12``) or CDNA3/CDNA4's ``ds_read_*`` / ``ds_write_*`` (``gfx9``: gfx942, gfx950). A
target's hardware file lists the instructions it has (``passes.groupings``)."""

MIN_ALIGNMENT = 4
"""Coarsest alignment an access of a dword or more needs (bytes): gfx1250 runs the LDS in
unaligned access mode, so Triton's 8-byte padded layouts give ``ds_load_b128`` and
``ds_load_tr16_b128`` at 8-byte aligned addresses (real gfx1250 compiles). Assumption: below a
dword we do not model (a lane's access is banked by the dwords it touches, however aligned)."""


@dataclass(frozen=True)
class Instruction:
    """One LDS instruction (one catalogue record): everything the layers above need to know.

    - ``bytes_per_lane``: bytes one active lane moves (both accesses of a 2addr form);
    - ``kind``: ``load``, ``store`` or ``load_tr`` (a transposed load);
    - ``elem_bits``: the exchanged element width for ``load_tr``, the unsigned element width
      for ``ds_load_u8``/``u16``, else the width of one access (``8 * access_bytes``);
    - ``addresses``: 2 for ``ds_load_2addr_*`` / ``ds_store_2addr_*``, which read or write two
      ``access_bytes`` pieces per lane at ADDR + OFFSET0 * unit and ADDR + OFFSET1 * unit, two
      8-bit offset fields (the ISA guide's DS encoding; LLVM ``DS_READ2_B32``...);
    - ``offset_unit_elems``: elements per unit of those offset fields (64 for ``stride64``);
    - ``single``: the single-address instruction a 2addr form pairs (LLVM SILoadStoreOptimizer);
    - ``d16_hi``: a store of the value in bits 16.. of its register (``ds_store_b8_d16_hi``,
      ``ds_store_b16_d16_hi``): the same access as its plain twin;
    - ``exchange``: for ``load_tr``, Triton's ``(leadingRegBases, leadingLaneBases)``, which
      fix the cross-lane exchange (``wgpsim.trace.transpose``); None for ``ds_load_tr4_b64``,
      whose rows ``wgpsim.trace.lowering_packed`` places, and for gfx950's ``ds_read_*_tr_*``
      (traces give their lane addresses; no Triton lowering here yet);
    - ``family``: the assembly spelling (:data:`Family`): ``gfx12`` or ``gfx9``.

    >>> Instruction("ds_load_b96", 12, "load", 96).alignment
    4
    >>> pair = INSTRUCTIONS["ds_load_2addr_stride64_b32"]
    >>> pair.access_bytes, pair.offset_unit_bytes, pair.max_distance, pair.single
    (4, 256, 65280, 'ds_load_b32')
    """

    name: str
    bytes_per_lane: int
    kind: Kind
    elem_bits: int
    addresses: int = 1
    offset_unit_elems: int = 1
    single: str | None = None
    exchange: tuple[int, int] | None = None
    d16_hi: bool = False
    family: Family = "gfx12"

    @property
    def access_bytes(self) -> int:
        """Bytes of one access (one of the two of a 2addr form)."""
        return self.bytes_per_lane // self.addresses

    @property
    def natural_alignment(self) -> int:
        """The largest power of two dividing one access's width (dword for ``ds_load_b96``)."""
        return self.access_bytes & -self.access_bytes

    @property
    def alignment(self) -> int:
        """Byte alignment a lane address needs: natural, at most ``MIN_ALIGNMENT`` (unaligned
        access mode; see ``MIN_ALIGNMENT``). A 2addr form's second address is the first plus a
        multiple of the access width, so it is aligned alike."""
        return min(self.natural_alignment, MIN_ALIGNMENT)

    @property
    def offset_unit_bytes(self) -> int:
        """Bytes per unit of a 2addr form's offset fields (access width x 1 or 64); 0 else."""
        return self.access_bytes * self.offset_unit_elems if self.addresses == 2 else 0

    @property
    def max_distance(self) -> int:
        """Largest byte distance between a 2addr form's two addresses: 255 units (8-bit
        offsets, the first at 0); 0 for single-address instructions."""
        return 255 * self.offset_unit_bytes

    @property
    def is_load(self) -> bool:
        """True for plain and transposed loads."""
        return self.kind in ("load", "load_tr")


_ST64 = {"addresses": 2, "offset_unit_elems": 64}
"""The stride-64 2addr forms' fields (offsets in units of 64 elements)."""

CATALOGUE: tuple[Instruction, ...] = (
    # plain loads (Triton's llvm.load from addrspace(3), by vector width)
    Instruction("ds_load_b32", 4, "load", 32),
    Instruction("ds_load_b64", 8, "load", 64),
    Instruction("ds_load_b96", 12, "load", 96),
    Instruction("ds_load_b128", 16, "load", 128),
    Instruction("ds_load_u8", 1, "load", 8),
    Instruction("ds_load_u16", 2, "load", 16),
    # transposed loads (seed, Part I; Triton's LDSTransLoadParams "V2" for gfx1250)
    Instruction("ds_load_tr8_b64", 8, "load_tr", 8, exchange=(2, 1)),
    Instruction("ds_load_tr16_b128", 16, "load_tr", 16, exchange=(3, 0)),
    # packed fp4 (amdg.local_load_packed_transposed; its exchange: wgpsim.trace.lowering_packed)
    Instruction("ds_load_tr4_b64", 8, "load_tr", 4),
    # plain stores (Triton's llvm.store to addrspace(3), by vector width)
    Instruction("ds_store_b8", 1, "store", 8),
    Instruction("ds_store_b16", 2, "store", 16),
    Instruction("ds_store_b32", 4, "store", 32),
    Instruction("ds_store_b64", 8, "store", 64),
    Instruction("ds_store_b128", 16, "store", 128),
    # two accesses per lane from one address register (LLVM SILoadStoreOptimizer merges pairs)
    Instruction("ds_load_2addr_b32", 8, "load", 32, 2, single="ds_load_b32"),
    Instruction("ds_load_2addr_b64", 16, "load", 64, 2, single="ds_load_b64"),
    Instruction("ds_load_2addr_stride64_b32", 8, "load", 32, 2, 64, single="ds_load_b32"),
    Instruction("ds_load_2addr_stride64_b64", 16, "load", 64, 2, 64, single="ds_load_b64"),
    Instruction("ds_store_2addr_b32", 8, "store", 32, 2, single="ds_store_b32"),
    Instruction("ds_store_2addr_b64", 16, "store", 64, 2, single="ds_store_b64"),
    Instruction("ds_store_2addr_stride64_b32", 8, "store", 32, 2, 64, single="ds_store_b32"),
    Instruction("ds_store_2addr_stride64_b64", 16, "store", 64, 2, 64, single="ds_store_b64"),
    # stores of a register's high half (LLVM, for a byte or half of a packed register)
    Instruction("ds_store_b8_d16_hi", 1, "store", 8, d16_hi=True),
    Instruction("ds_store_b16_d16_hi", 2, "store", 16, d16_hi=True),
    # the Tensor Data Mover's writes into the LDS (docs/DESIGN.md, "TDM writes"): one trace row
    # is 256 B, 8 B per "lane" (a write granule at the destination layout's address); an
    # instruction is consecutive rows of its warp, ``arg`` 1 on its last row
    Instruction("tensor_load_to_lds", 8, "tdm", 64),
    # CDNA3/CDNA4 (gfx942, gfx950): the same accesses as printed by their assembly (the gfx9
    # spelling; CDNA3 ISA guide, DS opcodes; LLVM DSInstructions.td). Appended so the gfx1250
    # op codes above stay as they were.
    *(
        Instruction(name, size, kind, bits, family="gfx9", **extra)
        for name, size, kind, bits, extra in (
            ("ds_read_b32", 4, "load", 32, {}),
            ("ds_read_b64", 8, "load", 64, {}),
            ("ds_read_b96", 12, "load", 96, {}),
            ("ds_read_b128", 16, "load", 128, {}),
            ("ds_read_u8", 1, "load", 8, {}),
            ("ds_read_u16", 2, "load", 16, {}),
            ("ds_write_b8", 1, "store", 8, {}),
            ("ds_write_b16", 2, "store", 16, {}),
            ("ds_write_b32", 4, "store", 32, {}),
            ("ds_write_b64", 8, "store", 64, {}),
            ("ds_write_b96", 12, "store", 96, {}),
            ("ds_write_b128", 16, "store", 128, {}),
            ("ds_write_b8_d16_hi", 1, "store", 8, {"d16_hi": True}),
            ("ds_write_b16_d16_hi", 2, "store", 16, {"d16_hi": True}),
            ("ds_read2_b32", 8, "load", 32, {"addresses": 2, "single": "ds_read_b32"}),
            ("ds_read2_b64", 16, "load", 64, {"addresses": 2, "single": "ds_read_b64"}),
            ("ds_read2st64_b32", 8, "load", 32, _ST64 | {"single": "ds_read_b32"}),
            ("ds_read2st64_b64", 16, "load", 64, _ST64 | {"single": "ds_read_b64"}),
            ("ds_write2_b32", 8, "store", 32, {"addresses": 2, "single": "ds_write_b32"}),
            ("ds_write2_b64", 16, "store", 64, {"addresses": 2, "single": "ds_write_b64"}),
            ("ds_write2st64_b32", 8, "store", 32, _ST64 | {"single": "ds_write_b32"}),
            ("ds_write2st64_b64", 16, "store", 64, _ST64 | {"single": "ds_write_b64"}),
            # gfx950's transposed loads (CDNA4 ISA guide; clang __builtin_amdgcn_ds_read_tr*):
            # 8 B (12 B for b6) of contiguous bytes per lane, exchanged across lanes after
            # Their exchange (Triton's V1 LDSTransLoadParams): each 16-lane row reads a 4x16
            # (tr_b16) or 8x16 (tr_b8) tile, four (two) lanes per row in lane order, and lane c
            # gets column c: no leading register basis, then the lane bits that complete the
            # 16-lane row (2 for 4-element rows, 1 for 8); as Triton's gfx950
            # chooseDotDsReadB64TrLayout reads (lanes 0-1 along a row, then down the rows) and
            # Modular's ds_read_tr16_b64_row ("each lane gets a column of the 4x16 tile").
            # Checked: Triton's V1 params (numLanesInShuffleGroup = 64 / 4 = 16, 64-bit rows,
            # TileKind Standard), and every lane's row address of Triton 3.9.0's gfx950 LLVM
            # dialect equals the one this exchange gives it (swizzled, rotating, padded B
            # operands; tests/test_gfx9_lowering.py)
            ("ds_read_b64_tr_b16", 8, "load_tr", 16, {"exchange": (0, 2)}),
            ("ds_read_b64_tr_b8", 8, "load_tr", 8, {"exchange": (0, 1)}),
            ("ds_read_b64_tr_b4", 8, "load_tr", 4, {}),
            ("ds_read_b96_tr_b6", 12, "load_tr", 6, {}),
            # direct-to-LDS writes of a global load (global_load_lds_* / buffer_load ... lds):
            # lane l's bytes land at its LDS address (M0-based, lane-consecutive); dwordx3/x4
            # are gfx950's (LLVM FeatureGFX950Insts), dword/ubyte/ushort both targets'
            ("global_load_lds_ubyte", 1, "lds_dma", 8, {}),
            ("global_load_lds_ushort", 2, "lds_dma", 16, {}),
            ("global_load_lds_dword", 4, "lds_dma", 32, {}),
            ("global_load_lds_dwordx3", 12, "lds_dma", 96, {}),
            ("global_load_lds_dwordx4", 16, "lds_dma", 128, {}),
        )
    ),
)
"""Every LDS instruction of every target, one record each. Adding an instruction is its record
here, its lowering (``wgpsim.trace.lowering*``) and its lane grouping in the hardware file of
each target that has it (``passes:``); every table below and in the other layers is derived
from these records. A target has exactly the instructions its hardware file groups."""


INSTRUCTIONS: dict[str, Instruction] = {ins.name: ins for ins in CATALOGUE}
"""Every LDS instruction a trace may use, by name."""

CONTROL_OPS: tuple[str, ...] = ("wait_ds", "barrier", "clock", "wait_tensor", "delay")
"""Ops that move no data: ``wait_ds n``, ``barrier``, ``clock <label>``, ``delay <cycles>``,
``wait_tensor n`` (s_wait_tensorcnt: at most n of the warp's TDM instructions outstanding)."""

OPS: tuple[str, ...] = (*INSTRUCTIONS, *CONTROL_OPS)
"""All op names; a trace stores the index into this tuple."""

_CODE: dict[str, int] = {name: i for i, name in enumerate(OPS)}
NUM_LDS_OPS = len(INSTRUCTIONS)
WAIT_DS, BARRIER, CLOCK, WAIT_TENSOR, DELAY = (_CODE[name] for name in CONTROL_OPS)
TDM = _CODE["tensor_load_to_lds"]
"""Op code of the TDM's LDS write rows (its ``arg``: 1 on an instruction's last row)."""

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


def _per_op(value, default: int) -> np.ndarray:
    return np.array(
        [value(INSTRUCTIONS[name]) if name in INSTRUCTIONS else default for name in OPS],
        dtype=np.int64,
    )


OP_ACCESS_BYTES = _per_op(lambda ins: ins.access_bytes, 0)
"""Bytes of one access of a lane, indexed by op code (half of a 2addr form's bytes per lane)."""

OP_ADDRESSES = _per_op(lambda ins: ins.addresses, 0)
"""Accesses per lane (1, or 2 for the 2addr forms), indexed by op code (0 for control ops)."""

OP_OFFSET_UNIT = _per_op(lambda ins: ins.offset_unit_bytes, 0)
"""Bytes per unit of a 2addr form's offset fields, indexed by op code (0 for the others)."""


def single_address(kind: Kind, family: Family = "gfx12") -> dict[int, str]:
    """Plain single-address instructions of ``kind`` by the bits one lane moves (powers of two:
    Triton vectorises to 2^k elements), in the assembly spelling ``family``.

    >>> single_address("store")
    {8: 'ds_store_b8', 16: 'ds_store_b16', 32: 'ds_store_b32', 64: 'ds_store_b64', 128: 'ds_store_b128'}
    >>> single_address("load", "gfx9")
    {8: 'ds_read_u8', 16: 'ds_read_u16', 32: 'ds_read_b32', 64: 'ds_read_b64', 128: 'ds_read_b128'}
    """
    out = {
        8 * ins.bytes_per_lane: ins.name
        for ins in CATALOGUE
        if ins.kind == kind
        and ins.family == family
        and ins.addresses == 1
        and not ins.d16_hi
        and ins.bytes_per_lane & (ins.bytes_per_lane - 1) == 0
    }
    return dict(sorted(out.items()))


def two_address_forms(single: str) -> dict[int, str]:
    """The 2addr forms that pair two ``single`` accesses, by offset unit in elements (1, 64).

    >>> two_address_forms("ds_load_b64")
    {1: 'ds_load_2addr_b64', 64: 'ds_load_2addr_stride64_b64'}
    >>> two_address_forms("ds_load_b128")
    {}
    """
    return {ins.offset_unit_elems: ins.name for ins in CATALOGUE if ins.single == single}


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
