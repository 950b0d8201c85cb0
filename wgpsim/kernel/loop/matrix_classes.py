"""Which LLVM scheduling class times each matrix instruction (``v_wmma_*``, ``v_mfma_*``,
``v_smfmac_*``): one table per ISA family, each row one ``InstRW`` of the family's model in
LLVM's ``llvm/lib/Target/AMDGPU/SISchedule.td``, its regex written in the assembler's spelling
(LLVM matches its internal names, ``V_MFMA_F32_32X32X8F16``; the listing prints
``v_mfma_f32_32x32x8_f16``, and the gfx940 spellings add a block count, ``_2b_``). A row names
the ``costs:`` key of its class (the hardware file holds the cycles); a row with ``f8_cost`` is a
``SchedWriteVariant`` on ``PredIsF8_*``: that class when the A or B format is f8.

The model is the target's (``GCNProcessors.td``: ``ProcessorModel<"gfx942",
SIDPGFX942FullSpeedModel>``, ``"gfx950"``: ``SIDPGFX950FullSpeedModel``; gfx1250:
``GFX1250SpeedModel``). LLVM's rows never overlap (TableGen rejects an instruction two
``InstRW`` of one model match), so the first match is the only one.

>>> sched_model("hip:gfx950").classify("v_mfma_f32_32x32x16_f16")
MatrixClass(pattern='^v_mfma_.32_32x32x16_', cost='mfma_8pass', f8_cost='')
>>> sched_model("hip:gfx942").classify("v_mfma_f32_32x32x4_2b_f16").cost
'mfma_16pass'
>>> sched_model("").name
'GFX1250SpeedModel'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MatrixClass", "SchedModel", "sched_model", "SCHED_MODELS"]


@dataclass(frozen=True)
class MatrixClass:
    """One ``InstRW``: the mnemonics it covers (a regex, ``re.match``) and its class's
    ``costs:`` key; ``f8_cost``: the key when an operand format is f8 (else ``cost``)."""

    pattern: str
    cost: str
    f8_cost: str = ""


@dataclass(frozen=True)
class SchedModel:
    """One LLVM scheduling model's matrix classes. ``fallback`` (and its words for the note)
    times a mnemonic in none of them; ``formats`` are the operand modifiers that name the A and
    B formats of an f8f6f4 instruction, ``f8_formats`` their f8 values (a modifier the listing
    leaves out is format 0, FP8, in both ISAs)."""

    name: str
    short: str
    classes: tuple[MatrixClass, ...]
    fallback: str
    fallback_words: str
    formats: tuple[str, str]
    f8_formats: frozenset[str]

    def classify(self, mnemonic: str) -> MatrixClass | None:
        """The class of ``mnemonic``, or None."""
        return next((c for c in self.classes if re.match(c.pattern, mnemonic)), None)

    def is_f8(self, operands: str) -> bool:
        """Is the A or B format f8 (LLVM's ``PredIsF8_MFMA_SCALE`` / ``PredIsF8_WMMA_SCALE``)?

        >>> sched_model("hip:gfx950").is_f8("v[0:15], v[4:7], v[8:11], v[0:15] cbsz:4 blgp:4")
        False
        >>> sched_model("hip:gfx950").is_f8("v[0:15], v[4:11], v[8:11], v[0:15] blgp:4")
        True
        """
        given = dict(re.findall(rf"\b({'|'.join(self.formats)}):(\w+)", operands))
        return any(f not in given or given[f] in self.f8_formats for f in self.formats)


_B = r"_(?:\d+b_)?"  # the gfx940 spelling's block count: v_mfma_f32_32x32x4_2b_f16

# SIDPGFX942FullSpeedModel (named SIDPGFX940FullSpeedModel before gfx940/941 were dropped);
# each row: the InstRW class and LLVM's regex
_GFX942 = (
    MatrixClass(r"^v_mfma_.32_4x4x", "mfma_2pass"),  # Write2PassMAI ^V_MFMA_.32_4X4X
    MatrixClass(r"^v_mfma_.32_16x16x8_xf32", "mfma_4pass"),  # Write4PassMAI ^V_MFMA_.32_16X16X8X
    MatrixClass(r"^v_mfma_.32_16x16x16_", "mfma_4pass"),  # Write4PassMAI ^V_MFMA_.32_16X16X16
    MatrixClass(r"^v_mfma_.32_16x16x32_", "mfma_4pass"),  # Write4PassMAI ^V_MFMA_.32_16X16X32
    # Write8PassMAI ^V_MFMA_.32_16X16X[14][FBI] (16x16x1_4b_f32, 16x16x4_f32, 16x16x4_4b_f16)
    MatrixClass(rf"^v_mfma_.32_16x16x[14]{_B}[fbi]", "mfma_8pass"),
    MatrixClass(r"^v_mfma_.32_32x32x4_xf32", "mfma_8pass"),  # Write8PassMAI ^V_MFMA_.32_32X32X4XF
    MatrixClass(r"^v_mfma_.32_32x32x8_", "mfma_8pass"),  # Write8PassMAI ^V_MFMA_.32_32X32X8
    MatrixClass(r"^v_mfma_.32_32x32x16_", "mfma_8pass"),  # Write8PassMAI ^V_MFMA_.32_32X32X16
    # Write16PassMAI ^V_MFMA_.32_32X32X[124][FBI] (32x32x1_2b_f32, 32x32x2_f32, 32x32x4_2b_f16)
    MatrixClass(rf"^v_mfma_.32_32x32x[124]{_B}[fbi]", "mfma_16pass"),
    MatrixClass(r"^v_mfma_.64_4x4x", "dgemm_4pass"),  # Write4PassDGEMM ^V_MFMA_.64_4X4X
    MatrixClass(r"^v_mfma_.64_16x16x", "dgemm_8pass"),  # Write8PassDGEMM ^V_MFMA_.64_16X16X
    MatrixClass(r"^v_smfmac_.32_16x16x", "mfma_4pass"),  # Write4PassMAI ^V_SMFMAC_.32_16X16X
    MatrixClass(r"^v_smfmac_.32_32x32x", "mfma_8pass"),  # Write8PassMAI ^V_SMFMAC_.32_32X32X
)

# SIDPGFX950FullSpeedModel: gfx942's rows, plus 16X16X64 and 32X32X32_ (Write4/8PassMAI),
# Write16PassDGEMM for ^V_MFMA_.64_16X16X, and the f8f6f4 forms' SchedWriteVariants
# (WriteMFMAScale_16X16X128_F8F6F4: Write8PassMAI if f8, else Write4PassMAI;
# WriteMFMAScale_32X32X64_F8F6F4: Write16PassMAI if f8, else Write8PassMAI)
_GFX950 = (
    *(c for c in _GFX942 if c.cost != "dgemm_8pass"),
    MatrixClass(r"^v_mfma_.32_16x16x64_", "mfma_4pass"),  # Write4PassMAI ^V_MFMA_.32_16X16X64
    MatrixClass(r"^v_mfma_.32_32x32x32_", "mfma_8pass"),  # Write8PassMAI ^V_MFMA_.32_32X32X32_
    MatrixClass(r"^v_mfma_.64_16x16x", "dgemm_16pass"),  # Write16PassDGEMM ^V_MFMA_.64_16X16X
    # ^V_MFMA(_SCALE)?_.32_16X16X128_F8F6F4 and ^V_MFMA(_SCALE)?_.32_32X32X64_F8F6F4
    MatrixClass(r"^v_mfma(_scale)?_.32_16x16x128_f8f6f4", "mfma_4pass", "mfma_8pass"),
    MatrixClass(r"^v_mfma(_scale)?_.32_32x32x64_f8f6f4", "mfma_8pass", "mfma_16pass"),
)

# GFX1250SpeedModel (GFX125xCommonWriteRes); LLVM's names end in _w32
_GFX1250 = (
    MatrixClass(r"^v_wmma_f32_16x16x4_f32", "wmma_valu_4pass"),  # Write4PassWMMA
    # WriteWMMAScale_16X16X128_F8F6F4 ^V_WMMA_.*_16X16X128_F8F6F4: XDL 4-pass if f8, else 2-pass
    MatrixClass(r"^v_wmma_.*_16x16x128_f8f6f4", "wmma_xdl_2pass", "wmma_xdl_4pass"),
    MatrixClass(r"^v_wmma.*_f32_32x16x128_f4", "wmma_xdl_2pass"),  # WriteXDL2PassWMMA
    # WriteXDL2PassWMMA ^V_[S]*WMMA[C]*_.*_(FP8|BF8|BF16|F16)_w32
    MatrixClass(r"^v_s?wmmac?_.*_(fp8|bf8|bf16|f16)$", "wmma_xdl_2pass"),
    # WriteXDL4PassWMMA ^V_[S]*WMMA[C]*_.*_(IU8|IU4)_w32
    MatrixClass(r"^v_s?wmmac?_.*_(iu8|iu4)$", "wmma_xdl_4pass"),
)

_CDNA = {
    "fallback": "mfma_8pass",
    "fallback_words": "an 8-pass MFMA",
    "formats": ("cbsz", "blgp"),
    "f8_formats": frozenset({"0", "1"}),  # MFMAScaleFormats: FP8_E4M3 = 0, FP8_E5M2 = 1
}
SCHED_MODELS = {
    "gfx942": SchedModel("SIDPGFX942FullSpeedModel", "gfx942", _GFX942, **_CDNA),
    "gfx950": SchedModel("SIDPGFX950FullSpeedModel", "gfx950", _GFX950, **_CDNA),
    "gfx1250": SchedModel(
        "GFX1250SpeedModel",
        "GFX1250",
        _GFX1250,
        "wmma_xdl_2pass",
        "a 2-pass WMMA",
        ("matrix_a_fmt", "matrix_b_fmt"),
        frozenset({"MATRIX_FMT_FP8", "MATRIX_FMT_BF8"}),
    ),
}
"""LLVM's scheduling model of each target (``GCNProcessors.td``), by its gfx name."""


def sched_model(target: str) -> SchedModel:
    """The model of a hardware file's ``target:`` (``hip:gfx950``); a file without a target,
    or with one LLVM gives no model here, takes gfx1250's (the MI450 default)."""
    return SCHED_MODELS.get(target.removeprefix("hip:"), SCHED_MODELS["gfx1250"])
