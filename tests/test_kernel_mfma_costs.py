"""The issue cost of gfx942/gfx950 matrix instructions in the loop timing (issue 27): each
``v_mfma_*`` / ``v_smfmac_*`` costs its LLVM scheduling class's cycles. The expected classes are
LLVM's own, written here from llvm-project (not from wgpsim): the HWXDL / HWVALU resource
pressure llvm-mca prints for each mnemonic in ``llvm/test/tools/llvm-mca/AMDGPU/gfx942-mfma.s``
and ``gfx950.s`` (the ReleaseAtCycles of the ``InstRW`` class in
``llvm/lib/Target/AMDGPU/SISchedule.td``), and for the f8f6f4 forms, which llvm-mca times as
the variant's default, the ``SchedWriteVariant`` of SISchedule.td (``PredIsF8_MFMA_SCALE``:
twice the passes when the A or B format, ``cbsz`` / ``blgp``, is FP8 or BF8, absent = FP8)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wgpsim.cli import main
from wgpsim.errors import ConfigError
from wgpsim.frontend.amdgcn_loops import stream
from wgpsim.hw.config import HardwareConfig, target_hardware
from wgpsim.kernel.loop.costs import wmma_cost

ROOT = Path(__file__).resolve().parent / "corpus_others"

PASS_CYCLES = 4
"""LLVM's SI models count in wave64 instructions ("1 / (operations / cycle) / 4",
SICommonWriteRes): one pass of the MFMA pipe is 4 cycles of a 16-lane SIMD."""

# llvm-mca gfx942-mfma.s (-mtriple=amdgpu9.42): mnemonic -> passes (HWXDL, or HWVALU for f64)
GFX942 = {
    "v_mfma_f32_16x16x4_f32": 8,
    "v_mfma_f32_32x32x2_f32": 16,
    "v_mfma_f64_4x4x4_4b_f64": 4,
    "v_mfma_f64_16x16x4_f64": 8,
    "v_mfma_f32_16x16x16_f16": 4,
    "v_mfma_f32_32x32x8_f16": 8,
    "v_mfma_f32_16x16x16_bf16": 4,
    "v_mfma_f32_32x32x8_bf16": 8,
    "v_mfma_i32_16x16x32_i8": 4,
    "v_mfma_i32_32x32x16_i8": 8,
    "v_mfma_f32_4x4x4_16b_f16": 2,
    "v_mfma_f32_16x16x4_4b_f16": 8,
    "v_mfma_f32_32x32x4_2b_f16": 16,
    "v_mfma_f32_4x4x4_16b_bf16": 2,
    "v_mfma_f32_16x16x4_4b_bf16": 8,
    "v_mfma_f32_32x32x4_2b_bf16": 16,
    "v_mfma_f32_4x4x1_16b_f32": 2,
    "v_mfma_f32_16x16x1_4b_f32": 8,
    "v_mfma_f32_32x32x1_2b_f32": 16,
    "v_mfma_i32_4x4x4_16b_i8": 2,
    "v_mfma_i32_16x16x4_4b_i8": 8,
    "v_mfma_i32_32x32x4_2b_i8": 16,
    "v_smfmac_f32_16x16x32_f16": 4,
    "v_smfmac_f32_32x32x16_f16": 8,
    "v_smfmac_f32_16x16x32_bf16": 4,
    "v_smfmac_i32_16x16x64_i8": 4,
    "v_smfmac_i32_32x32x32_i8": 8,
    "v_mfma_f32_16x16x32_bf8_bf8": 4,
    "v_mfma_f32_16x16x32_fp8_fp8": 4,
    "v_mfma_f32_32x32x16_bf8_fp8": 8,
    "v_mfma_f32_32x32x16_fp8_fp8": 8,
    "v_smfmac_f32_16x16x64_fp8_bf8": 4,
    "v_smfmac_f32_32x32x32_fp8_fp8": 8,
}
# llvm-mca gfx950.s (-mcpu=gfx950): gfx942's, but v_mfma_f64_16x16x4_f64 16 (Write16PassDGEMM),
# and gfx950's own forms
GFX950 = {
    **GFX942,
    "v_mfma_f64_16x16x4_f64": 16,
    "v_mfma_f32_16x16x32_f16": 4,
    "v_mfma_f32_32x32x16_f16": 8,
    "v_mfma_f32_32x32x16_bf16": 8,
    "v_mfma_i32_16x16x64_i8": 4,
    "v_mfma_i32_32x32x32_i8": 8,
    "v_mfma_f32_16x16x32_bf16": 4,
    "v_smfmac_f32_16x16x64_f16": 4,
    "v_smfmac_f32_32x32x32_bf16": 8,
    "v_smfmac_i32_16x16x128_i8": 4,
    "v_smfmac_i32_32x32x64_i8": 8,
    "v_smfmac_f32_16x16x128_fp8_bf8": 4,
    "v_smfmac_f32_32x32x64_bf8_bf8": 8,
}
# SISchedule.td SIDPGFX950FullSpeedModel: WriteMFMAScale_16X16X128_F8F6F4 (Write8PassMAI if f8,
# else Write4PassMAI) and WriteMFMAScale_32X32X64_F8F6F4 (Write16PassMAI if f8, else 8)
F8F6F4 = [
    ("v_mfma_f32_16x16x128_f8f6f4", "", 8),
    ("v_mfma_f32_16x16x128_f8f6f4", "cbsz:2 blgp:1", 8),
    ("v_mfma_f32_16x16x128_f8f6f4", "cbsz:4 blgp:3", 4),
    ("v_mfma_f32_32x32x64_f8f6f4", "", 16),
    ("v_mfma_f32_32x32x64_f8f6f4", "blgp:4", 16),
    ("v_mfma_f32_32x32x64_f8f6f4", "cbsz:2 blgp:2", 8),
    ("v_mfma_scale_f32_32x32x64_f8f6f4", "op_sel_hi:[0,0,0]", 16),
    ("v_mfma_scale_f32_32x32x64_f8f6f4", "op_sel_hi:[0,0,0] cbsz:4 blgp:4", 8),
    ("v_mfma_scale_f32_16x16x128_f8f6f4", "op_sel_hi:[0,0,0] cbsz:2 blgp:2", 4),
]


def _instr(mnemonic: str, modifiers: str = ""):
    return stream(f"k:\n {mnemonic} v[0:15], v[16:23], v[24:31], v[0:15] {modifiers}")[1][1]


@pytest.mark.parametrize("target,table", [("gfx942", GFX942), ("gfx950", GFX950)])
def test_each_mnemonic_costs_its_llvm_class(target, table):
    hw = target_hardware(f"hip:{target}")
    got = {m: wmma_cost(_instr(m, "cbsz:3 abid:1" if "smfmac" in m else ""), hw) for m in table}
    assert got == {m: (passes * PASS_CYCLES, "") for m, passes in table.items()}


@pytest.mark.parametrize("mnemonic,modifiers,passes", F8F6F4)
def test_an_f8_operand_doubles_the_f8f6f4_passes(mnemonic, modifiers, passes):
    hw = target_hardware("hip:gfx950")
    assert wmma_cost(_instr(mnemonic, modifiers), hw) == (passes * PASS_CYCLES, "")


def _corpus(target: str) -> dict[tuple[str, str], int]:
    """Each matrix instruction of the target's corpus (mnemonic, its format modifiers) -> the
    cycles the loop charges it."""
    hw, seen = target_hardware(f"hip:{target}"), {}
    for path in sorted((ROOT / target).rglob("*.amdgcn")):
        for _, instr, _ in stream(path.read_text()):
            if not isinstance(instr, str) and re.match(r"v_s?mfmac?_", instr.mnemonic):
                formats = " ".join(re.findall(r"\b(?:cbsz|blgp):\d+", instr.operands))
                cycles, note = wmma_cost(instr, hw)
                assert note == "", note
                seen[instr.mnemonic, formats] = cycles
    return seen


# the corpus's matrix instructions today (mnemonic, format modifiers) -> passes
CORPUS = {
    # gfx942: 32x32x8 f16/bf16 (llvm-mca 8 passes), 16x16x16 bf16 (4)
    "gfx942": {
        ("v_mfma_f32_16x16x16_bf16", ""): 4,
        ("v_mfma_f32_32x32x8_bf16", ""): 8,
        ("v_mfma_f32_32x32x8_f16", ""): 8,
    },
    # gfx950: 16x16x32 bf16 (4), 32x32x16 (8); the fp8 GEMM's f8f6f4 (no formats: FP8, 16
    # passes), the mxfp8 GEMM's scaled FP8 (16) and the mxfp4 one's fp4 x fp4 (cbsz:4 blgp:4, 8)
    "gfx950": {
        ("v_mfma_f32_16x16x32_bf16", ""): 4,
        ("v_mfma_f32_32x32x16_bf16", ""): 8,
        ("v_mfma_f32_32x32x16_f16", ""): 8,
        ("v_mfma_f32_32x32x64_f8f6f4", ""): 16,
        ("v_mfma_scale_f32_32x32x64_f8f6f4", ""): 16,
        ("v_mfma_scale_f32_32x32x64_f8f6f4", "cbsz:4 blgp:4"): 8,
    },
}


@pytest.mark.parametrize("target,table", [("gfx942", GFX942), ("gfx950", GFX950)])
def test_the_corpus_mfmas_cost_their_llvm_classes(target, table):
    """Every matrix instruction of the target's corpus costs its LLVM class: those above, and
    one a later fixture brings (not f8f6f4) by the llvm-mca table."""
    seen = _corpus(target)
    want = {k: passes * PASS_CYCLES for k, passes in CORPUS[target].items()}
    assert want.items() <= seen.items()
    for (mnemonic, formats), cycles in seen.items():
        if (mnemonic, formats) not in want:
            assert mnemonic in table, f"{mnemonic}: write its class from LLVM into this test"
            assert cycles == table[mnemonic] * PASS_CYCLES, mnemonic


def test_an_unknown_mfma_gets_a_note_naming_it():
    cycles, note = wmma_cost(_instr("v_mfma_f32_64x64x2_f32"), target_hardware("hip:gfx950"))
    assert cycles == 8 * PASS_CYCLES
    assert note == "v_mfma_f32_64x64x2_f32: in no LLVM gfx950 class, taken as an 8-pass MFMA"


def test_a_file_without_the_class_is_a_config_error():
    hw = target_hardware("hip:gfx950")
    raw = hw.to_dict()
    assert "wmma_xdl_2pass" not in raw["costs"]  # gfx9 has no WMMA
    del raw["costs"]["mfma_16pass"]
    cut = HardwareConfig.from_dict(raw, source="cut.yaml")
    with pytest.raises(ConfigError, match=r"cut.yaml: missing field 'costs.mfma_16pass'"):
        wmma_cost(_instr("v_mfma_f32_32x32x64_f8f6f4"), cut)
    assert wmma_cost(_instr("v_mfma_f32_32x32x16_f16"), cut) == (32, "")


def _work(capsys, path: Path, *argv: str) -> tuple[str, list[float]]:
    code = main(["kernel", str(path), "--loop-timing", "--json", *argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    loop = json.loads(out)["loop_timing"]
    assert not any("in no LLVM" in n for n in loop["notes"])
    return loop["loop"], [w["work"] for w in loop["warps"]]


@pytest.mark.parametrize("target", ["gfx950", "gfx942"])
def test_the_gemm_loop_charges_each_mfma_its_cycles(capsys, target):
    """The fp16 GEMM's loop: dropping the 8-pass class to 0 cycles takes (MFMAs in the body,
    counted in the listing between the loop's label and its back-branch) x 32 cycles off every
    warp's work: gfx950 16 v_mfma_f32_32x32x16_f16, gfx942 32 v_mfma_f32_32x32x8_f16."""
    fixture = ROOT / target / "fixtures" / "tutorial_matmul_fp16"
    label, work = _work(capsys, fixture / "kernel.ttgir")
    asm = (fixture / "kernel.amdgcn").read_text()
    body = asm[asm.index(f"\n{label}:") : asm.rindex(f" {label}\n")]
    count = len(re.findall(r"^\s*v_mfma_\w+", body, re.M))
    assert count == {"gfx950": 16, "gfx942": 32}[target]
    _, without = _work(capsys, fixture / "kernel.ttgir", "--set", "costs.mfma_8pass=0")
    assert [w - o for w, o in zip(work, without, strict=True)] == [count * 8 * PASS_CYCLES] * len(
        work
    )


def test_a_misspelt_class_key_is_named_with_the_class_keys():
    raw = target_hardware("hip:gfx950").to_dict()
    raw["costs"]["mfma_8pas"] = raw["costs"].pop("mfma_8pass")
    with pytest.raises(ConfigError, match=r"'costs.mfma_8pas' \(did you mean 'mfma_8pass'\?\)"):
        HardwareConfig.from_dict(raw, source="x.yaml")
