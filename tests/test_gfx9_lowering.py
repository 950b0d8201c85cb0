"""gfx950 and gfx942 local_loads and local_stores against Triton 3.9.0's own lowering.

The fixtures (``tests/fixtures/gfx9_lowering``, rebuilt by its ``regenerate.py``): one-op
modules (blocked, MFMA dot-operand; swizzled, rotating, padded shared layouts; fp16, bf16, fp8;
4 warps of 64 lanes) lowered by Triton for their target to the LLVM dialect, whose address
arithmetic was evaluated for every thread, and compiled to assembly. wgpsim reads each module
as a kernel (``wgpsim.kernel.lowering.lower_op``: the target's hardware file and spelling) and
must name Triton's instruction, issue as many per warp, read or write Triton's rows of 64 lane
addresses in every warp, count the assembly's ``ds_*`` after LLVM's pairing, and allocate
Triton's ``ttg.shared`` bytes.
"""

from __future__ import annotations

import json
from itertools import groupby
from pathlib import Path

import pytest

from wgpsim.frontend.model import elem_bits
from wgpsim.frontend.sources import read_kernel
from wgpsim.hw.config import target_hardware
from wgpsim.kernel.loop.program import loop_program
from wgpsim.kernel.lowering import allocate_kernel, lower_op
from wgpsim.trace.lowering import PLAIN_LOADS, PLAIN_STORES
from wgpsim.trace.scratch.lowering import BARRIER
from wgpsim.trace.spelling import respelled

FIXTURES = Path(__file__).parent / "fixtures" / "gfx9_lowering"
CASES = sorted((FIXTURES / "cases").glob("*.ttgir"))
TRANSPOSED = {"rocdl.ds.read.tr16.b64": "ds_read_b64_tr_b16", "rocdl.ds.read.tr8.b64": "ds_read_b64_tr_b8"}  # fmt: skip
LANES = 64


def _name(kind: str, available) -> str:
    """Triton's access (``llvm.load vector<8xf16>``, ``rocdl.ds.read.tr16.b64``) in the
    target's spelling (``ds_read_b128``)."""
    if kind in TRANSPOSED:
        return TRANSPOSED[kind]
    op, ty = kind.split()
    lanes, elem = ty[7:-1].split("x") if ty.startswith("vector<") else ("1", ty)
    plain = PLAIN_STORES if op == "llvm.store" else PLAIN_LOADS
    return respelled(plain[int(lanes) * elem_bits(elem)], available)


def _ours(path: Path):
    kernel = read_kernel(path)
    alloc = allocate_kernel(kernel)
    (op,) = [o for o in kernel.ops if o.op in ("ttg.local_load", "ttg.local_store")]
    return kernel, alloc, lower_op(kernel, op, alloc)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_lanes_match_triton(path):
    """Same instruction, count per warp, and rows of 64 lane byte addresses in every warp."""
    fixture = json.loads((FIXTURES / f"{path.stem}.json").read_text())
    kernel, alloc, ours = _ours(path)
    low = ours.lowering
    assert low is not None, ours.note
    hw = target_hardware(kernel.target)
    theirs = fixture["accesses"]
    assert {_name(k, hw.instructions) for k, _ in theirs} == {low.instruction}
    assert len(theirs) == low.num_instructions
    assert low.lanes == LANES
    for w in range(low.num_warps):
        rows = sorted(tuple(a[LANES * w : LANES * (w + 1)]) for _, a in theirs)
        assert rows == sorted(tuple(r) for r in low.addresses[w].tolist()), f"warp {w}"
    assert alloc.lds_bytes == fixture["ttg_shared"]


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_counts_match_the_assembly(path):
    """The ds_* per warp after LLVM's duplicate removal and 2addr pairing are the assembly's."""
    fixture = json.loads((FIXTURES / f"{path.stem}.json").read_text())
    assert _ours(path)[2].counts == fixture["assembly_counts"]


def test_fixtures_cover_targets_layouts_and_types():
    """Both targets; loads and stores; blocked and MFMA operands; swizzled, rotating and
    padded shared layouts; 8- and 16-bit elements; gfx950's transposed loads."""
    texts = [p.read_text() for p in CASES]
    for word in ("hip:gfx950", "hip:gfx942", "ttg.local_store", "ttg.local_load", "amd_mfma",
                 "#ttg.blocked", "swizzled_shared", "amd_rotating_shared", "padded_shared",
                 "xf16", "xbf16", "xf8E4M3FN,", "xf8E4M3FNUZ"):  # fmt: skip
        assert any(word in t for t in texts), word
    kinds = {
        k
        for p in CASES
        for k, _ in json.loads((FIXTURES / f"{p.stem}.json").read_text())["accesses"]
    }
    assert set(TRANSPOSED) <= kinds and len(CASES) == 46


def test_an_extending_load_under_its_readers_line_is_the_loads():
    """LLVM folds a byte load into the zero-extension of what reads it and gives it that
    line: the probe's ``ds_read_u8`` sits under line 30 (the store of the extended value),
    not line 10 (the local_load), and the loop matcher gives it to the local_load whose
    value line 30 reads (as gfx950's block-scaled dots read their scale bytes)."""
    folder = FIXTURES / "folded_u8"
    listing = (folder / "probe.amdgcn").read_text().splitlines()
    at = next(i for i, line in enumerate(listing) if line.strip().startswith("ds_read_u8"))
    last_loc = next(line for line in reversed(listing[:at]) if line.strip().startswith(".loc"))
    assert last_loc.split()[2] == "30"
    program = loop_program(read_kernel(folder))
    assert not program.unmatched
    assert [(s.name, s.op) for s in program.steps if s.name] == [("%y", "ds_read_u8")]


SCRATCH_CASES = sorted((FIXTURES / "scratch_cases").glob("*.ttgir"))


def _steps(accesses: list) -> list:
    """Triton's accesses as steps: runs of stores or loads, and the barriers between them."""
    steps: list = []
    for kind, run in groupby(accesses, key=lambda a: a[0] if a[0] == BARRIER else a[0].split()[0]):
        run = list(run)
        steps += [BARRIER] * len(run) if kind == BARRIER else [run]
    return steps


@pytest.mark.parametrize("path", SCRATCH_CASES, ids=lambda p: p.stem)
def test_scratch_follows_the_targets_banks(path):
    """A reduce's scratch is sized and swizzled for the target's LDS banks (Triton's
    getSharedMemoryBanks: 32 on gfx942, 64 on gfx950, the hardware files' banks.count): the
    buffer is Triton's ttg.shared, and every store and load step writes or reads Triton's
    rows of 64 lane addresses, with Triton's barriers between them."""
    fixture = json.loads((FIXTURES / f"{path.stem}.json").read_text())
    kernel = read_kernel(path)
    alloc = allocate_kernel(kernel)
    assert alloc.lds_bytes == fixture["ttg_shared"]
    (op,) = [o for o in kernel.ops if o.op == "tt.reduce"]
    low = lower_op(kernel, op, alloc).lowering
    hw = target_hardware(kernel.target)
    theirs = _steps(fixture["accesses"])
    assert len(theirs) == len(low.steps)
    for step, their in zip(low.steps, theirs, strict=True):
        if step == BARRIER or their == BARRIER:
            assert step == their
            continue
        assert {_name(k, hw.instructions) for k, _ in their} == {step.instruction}
        for w in range(step.num_warps):
            rows = sorted(tuple(a[LANES * w : LANES * (w + 1)]) for _, a in their)
            assert rows == sorted(tuple(r) for r in step.addresses[w].tolist()), f"warp {w}"


def test_the_bank_count_tells_the_targets_apart():
    """The same column sum gets 256 B of scratch on gfx942 and 512 B on gfx950."""
    sizes = {p.stem: json.loads((FIXTURES / f"{p.stem}.json").read_text())["ttg_shared"] for p in SCRATCH_CASES}  # fmt: skip
    assert sizes["gfx942-colsum_w22_fp32"] == 256 and sizes["gfx950-colsum_w22_fp32"] == 512
