"""The instructions the gfx1250 assembly holds, against real Triton 3.9.0 compiles.

``tests/lowering_asm/cases.json`` records the ``ds_*`` counts of real gfx1250 compiles of a probe
kernel around each case (``tests/lowering_asm/regenerate.py`` rebuilds it); ``lower()`` must give
the same kinds and counts per warp, the paired (``ds_load_2addr_*``, ``ds_store_2addr_*``) and
deduplicated forms included, while ``dialect_counts`` keeps Triton's own choice.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from wgpsim.cli import main
from wgpsim.engine import simulate
from wgpsim.hw import load_hardware
from wgpsim.trace.lowering import lower
from wgpsim.trace.lowering_asm import assemble, pair_form
from wgpsim.trace.lowering_packed import lower_packed_transposed

HERE = Path(__file__).parent / "lowering_asm"
CASES = json.loads((HERE / "cases.json").read_text())["cases"]


def _lower(case: dict, store: bool):
    return lower(case["shared"], case["dst"], case["shape"], case["elem_bits"], store=store)


def _split(counts: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    loads = {k: v for k, v in counts.items() if k.startswith("ds_load")}
    return loads, {k: v for k, v in counts.items() if k.startswith("ds_store")}


def test_the_fixture_holds_the_cases_it_claims():
    assert len(CASES) == 15
    assert sum(c["store"] for c in CASES.values()) == 5


@pytest.mark.parametrize("name", sorted(CASES))
def test_counts_per_warp_are_the_assembly(name):
    case = CASES[name]
    loads, stores = _split(case["assembly"])
    assert _lower(case, store=False).counts == loads
    if case["store"]:
        assert _lower(case, store=True).counts == stores


def test_high_halves_of_packed_registers_store_with_d16_hi():
    # fp16 (and i8) values a vector load left packed in 32-bit registers: the value at bit 16
    # goes out with ds_store_b16_d16_hi (ds_store_b8_d16_hi), the others with the plain store
    low = _lower(CASES["f16_store_across_rows"], store=True)
    assert low.dialect_counts == {"ds_store_b16": 32}
    assert low.counts == {"ds_store_b16": 16, "ds_store_b16_d16_hi": 16}
    # a slice layout's registers lie far apart in the tensor: one value a register, no d16_hi
    blocked = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>"
    shared = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>"
    sliced = lower(shared, f"#ttg.slice<{{dim = 1, parent = {blocked}}}>", (256,), 16, store=True)
    assert set(sliced.counts) == {"ds_store_b16"}


def test_dialect_level_choice_stays_visible():
    low = _lower(CASES["f32_dot_a"], store=False)
    assert low.dialect_instruction == "ds_load_b64" and low.dialect_counts == {"ds_load_b64": 16}
    assert low.counts == {"ds_load_2addr_b64": 8}
    assert low.to_dict()["dialect_counts_per_warp"] == {"ds_load_b64": 16}
    k16 = _lower(CASES["f16_block_k16_a"], store=False)
    assert k16.dialect_counts == {"ds_load_tr16_b128": 8} and k16.counts == {"ds_load_tr16_b128": 4}
    assert k16.issued.notes() == ["4 duplicate loads removed (identical addresses)"]


def test_merged_pairs_read_what_the_two_loads_read():
    # every byte the Triton-level loads read is read by the issued instructions, and no other
    for name in ("f32_dot_a", "f32_column_sums", "i8_dot_a_kwidth8", "f16_block_k16_a"):
        low = _lower(CASES[name], store=False)
        width = {"ds_load_2addr_b64": 8, "ds_load_2addr_b32": 4, "ds_load_2addr_stride64_b32": 4}
        issued = low.issued
        got = set()
        for n, op in enumerate(issued.ops):
            w = width.get(op)
            seconds = [issued.distance[n]] if w else []
            for d in [0, *seconds]:
                got |= set((issued.addresses[:, n] + d).ravel().tolist())
        assert got == set(low.addresses.ravel().tolist()), name


def test_paired_trace_moves_the_same_bytes_in_fewer_instructions():
    low = _lower(CASES["f32_blocked_rows"], store=False)
    t = low.trace()
    assert t.count_by_op()["ds_load_2addr_b32"] == 16 * low.num_warps
    assert t.lds_bytes() == low.num_warps * low.num_instructions * 32 * 4
    r = simulate(t, load_hardware())
    assert r.bytes == t.lds_bytes()


def test_eight_byte_aligned_accesses_trace_and_time():
    low = _lower(CASES["f16_padded_8_bytes_tr"], store=False)
    assert low.instruction == "ds_load_tr16_b128" and (low.addresses % 16 == 8).any()
    assert simulate(low.trace(), load_hardware()).passes == 2 * 8 * low.num_warps


@pytest.mark.parametrize(
    ("first", "second", "form"),
    [
        (0, 1, "ds_load_2addr_b32"),  # both fit the 8-bit fields
        (0, 255, "ds_load_2addr_b32"),
        (0, 64, "ds_load_2addr_stride64_b32"),  # both multiples of 64: stride64 first
        (64, 255 * 64, "ds_load_2addr_stride64_b32"),
        (3, 67, "ds_load_2addr_b32"),  # fit plainly, not multiples of 64
        (300, 364, "ds_load_2addr_stride64_b32"),  # a new base; the difference is 64
        (300, 555, "ds_load_2addr_b32"),  # a new base; the difference 255 fits
        (0, 256, "ds_load_2addr_stride64_b32"),
        (0, 257, None),  # neither
        (5, 5, None),  # the same offset is never merged
    ],
)
def test_pair_form_follows_offsets_can_be_combined(first, second, form):
    assert pair_form("ds_load_b32", first, second) == form


def test_neighbours_by_offset_pair_greedily_and_loners_stay():
    lane = 1024 * np.arange(32)
    # offsets 0, 1, 2 elements of b32 from one base: (0, 1) merge, 2 stays alone
    addr = np.stack([lane + 4 * k for k in (2, 0, 1)])[None]
    asm = assemble("ds_load_b32", addr)
    assert asm.ops == ("ds_load_b32", "ds_load_2addr_b32") and asm.sources == ((0,), (1, 2))
    # two bases (the lanes' addresses differ by a varying amount): nothing merges
    other = np.stack([lane, lane[::-1] + 4])[None]
    assert assemble("ds_load_b32", other).counts == {"ds_load_b32": 2}
    # stores are not deduplicated; b128 never pairs
    assert assemble("ds_store_b32", np.stack([lane, lane])[None]).counts == {"ds_store_b32": 2}
    assert assemble("ds_load_b128", np.stack([lane, lane + 16])[None]).counts == {"ds_load_b128": 2}


def test_cli_shows_assembly_and_dialect(capsys):
    case = CASES["f32_dot_a"]
    argv = ["lower", "--shared", case["shared"], "--dst", case["dst"], "--shape", "64x32"]
    assert main([*argv, "--dtype", "fp32"]) == 0
    out = capsys.readouterr().out
    assert "per warp: 8 x ds_load_2addr_b64 in the assembly" in out
    assert "16 x ds_load_b64 in Triton's LLVM dialect; 8 pairs merged" in out


def test_cli_lowers_and_times_a_store(capsys):
    case = CASES["f32_blocked_rows_store"]
    argv = ["lower", "--store", "--shared", case["shared"], "--dst", case["dst"]]
    assert main([*argv, "--shape", "64x64", "--dtype", "fp32", "--json", "--simulate"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["op"] == "local_store" and out["counts_per_warp"] == {"ds_store_2addr_b32": 16}
    assert out["simulation"]["bytes"] == 64 * 64 * 4 and out["simulation"]["passes"] == 64


@pytest.mark.triton
@pytest.mark.parametrize("name", ["f32_dot_a_store", "f16_block_k16_a"])
def test_fixture_is_what_triton_compiles(name):
    pytest.importorskip("triton")
    # by path, under a name of its own: other fixture folders have a regenerate.py too
    spec = importlib.util.spec_from_file_location("lowering_asm_regenerate", HERE / "regenerate.py")
    regenerate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(regenerate)
    MLIR_TYPE, assembly_counts, probe = (
        regenerate.MLIR_TYPE,
        regenerate.assembly_counts,
        regenerate.probe,
    )

    case = CASES[name]
    text = probe(
        case["shared"],
        case["dst"],
        tuple(case["shape"]),
        MLIR_TYPE[case["elem_bits"]],
        case["store"],
    )
    assert assembly_counts(text) == case["assembly"]


TR4 = json.loads((HERE / "tr4.json").read_text())["cases"]


@pytest.mark.parametrize("name", sorted(TR4))
def test_packed_fp4_rows_are_tritons_lane_for_lane(name):
    case = TR4[name]
    low = lower_packed_transposed(case["shared"], case["dst"], case["mem_shape"])
    triton = np.array(case["dialect_addresses"]).transpose(1, 0, 2)  # [warp, instruction, lane]
    assert np.array_equal(low.addresses, triton)
    assert low.dialect_counts == {"ds_load_tr4_b64": triton.shape[1]}
    assert low.counts == case["assembly"]  # the copies of broadcast registers removed


def test_packed_fp4_loads_time_one_pass_each():
    case = TR4["fp4_a"]
    low = lower_packed_transposed(case["shared"], case["dst"], case["mem_shape"])
    r = simulate(low.trace(), load_hardware())
    assert r.passes == 8 * low.num_warps and r.bytes == r.passes * 256
    # each source row is 8 bytes of one K (64 B apart): rows 4 K apart share a bank pair, and
    # an instruction's 32 rows fall on 4 bank pairs, 8 rows each: 8 bank cycles a pass
    assert r.bank_cycles == 8 * r.passes


def test_stores_of_another_address_register_between_do_not_merge():
    """The held-out fp32 mm's B store on gfx942 (amd_rotating_shared): its 8 ds_write_b32 fall in
    4 groups of one address register each, interleaved (0 and 3, 1 and 2, 4 and 7, 5 and 6); the
    compile pairs the adjacent 1-2 and 5-6 and leaves 0, 3, 4, 7 single (LLVM does not move a
    store past one of another register)."""
    from corpus_others import checks

    from wgpsim.frontend.ttgir import read_ttgir_file
    from wgpsim.kernel.lowering import allocate_kernel, lower_op

    name = "heldout_flaggems_mm_fp32"
    kernel = read_ttgir_file(checks.root("gfx942") / "fixtures" / name / "kernel.ttgir")
    store = [o for o in kernel.ops if o.op == "ttg.local_store"][1]
    got = lower_op(kernel, store, allocate_kernel(kernel)).counts
    want = [o for o in checks.expected(name, "gfx942")["ops"] if o["op"] == "ttg.local_store"][1]
    assert got == want["instructions"] == {"ds_write_b32": 4, "ds_write2_b32": 2}
