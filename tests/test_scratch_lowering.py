"""Ops lowered through an LDS scratch buffer, against Triton 3.9.0's own gfx1250 lowering.

Two truths. The corpus (``tests/corpus``): every ``ttg.convert_layout`` with LDS instructions in
its probe's assembly must get the assembly's instruction counts per warp (after LLVM's pairing)
and Triton's LLVM-dialect counts. The fixtures (``tests/fixtures/scratch_lowering``, rebuilt by
its ``regenerate.py``): one-op modules lowered by Triton to the LLVM dialect, whose address
arithmetic was evaluated for every thread; each store and load step of
``wgpsim.trace.scratch.lowering`` must read and write the rows of addresses Triton's does, per
warp, with the same barriers between the steps.
"""

from __future__ import annotations

import json
import re
from itertools import groupby
from pathlib import Path

import corpus
import numpy as np
import pytest
from corpus.ttgir_text import aliases, resolve, split_top, tensor

from wgpsim.trace.lowering import PLAIN_LOADS, PLAIN_STORES
from wgpsim.trace.scratch.lowering import BARRIER, lower_convert, thread_layout
from wgpsim.trace.scratch.reduce import lower_reduce
from wgpsim.trace.scratch.scan import lower_scan, scan_scratch

FIXTURES = Path(__file__).parent / "fixtures" / "scratch_lowering"
CASES = sorted((FIXTURES / "cases").glob("*.ttgir"))
REDUCES = sorted((FIXTURES / "reduce_cases").glob("*.ttgir"))
SCANS = sorted((FIXTURES / "scan_cases").glob("*.ttgir"))
BITS = {"f16": 16, "bf16": 16, "i8": 8, "i32": 32, "f32": 32, "i64": 64}
_CONVERT = re.compile(
    r"ttg\.convert_layout %\w+ : tensor<([\dx]+)x(\w+), (.*)> -> tensor<[\dx]+x\w+, (.*)>$", re.M
)


def _corpus_converts() -> list[tuple[str, dict]]:
    out = []
    for case in corpus.cases().values():
        for op in case.ops:
            if op["op"] == "ttg.convert_layout" and op.get("instructions"):
                out.append((case.name, op))
    return out


def _convert_of(ttgir: str) -> tuple[str, str, tuple[int, ...], int]:
    """src, dst encodings (aliases resolved), shape and element bits of the module's convert."""
    m = _CONVERT.search(ttgir)
    table = aliases(ttgir)
    shape = tuple(int(s) for s in m.group(1).split("x"))
    return resolve(m.group(3), table), resolve(m.group(4), table), shape, BITS[m.group(2)]


@pytest.mark.parametrize(
    ("name", "op"), _corpus_converts(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_corpus_convert_counts(name, op):
    """Counts per warp equal the probe assembly's and Triton's LLVM-dialect output's."""
    case = corpus.cases()[name]
    table = case.aliases
    src, dst = (resolve(re.search(r", (.*)>$", t).group(1), table) for t in op["types"])
    shape = tuple(int(s) for s in re.match(r"tensor<([\dx]+)x", op["types"][0]).group(1).split("x"))
    elem = re.match(r"tensor<[\dx]+x(\w+),", op["types"][0]).group(1)
    low = lower_convert(src, dst, shape, BITS[elem])
    assert low.counts == op["instructions"]
    assert low.dialect_counts == op["triton_lowering"]


def test_corpus_has_converts():
    assert len(_corpus_converts()) == 5  # row_sum, col_sum (4 and 8 warps), two transposes


def _name(kind: str) -> str:
    """``llvm.store vector<4xf32>`` -> ``ds_store_b128``."""
    op, ty = kind.split()
    lanes, elem = ty[7:-1].split("x") if ty.startswith("vector<") else ("1", ty)
    return (PLAIN_STORES if op == "llvm.store" else PLAIN_LOADS)[int(lanes) * BITS[elem]]


def _triton_steps(accesses: list) -> list:
    """Triton's accesses as steps: runs of stores or loads, and the barriers between them."""
    steps = []
    for kind, run in groupby(accesses, key=lambda a: a[0] if a[0] == BARRIER else a[0].split()[0]):
        run = list(run)
        steps += [BARRIER] * len(run) if kind == BARRIER else [run]
    return steps


def _reduce_of(text: str) -> tuple[str, str, tuple[int, ...], list[int], int]:
    """src, result encodings, shape, element bits of each operand and axis of the module's
    tt.reduce (one or more operands)."""
    sig = re.search(r"\}\) : \((.*)\) -> \(?(.*?)\)?$", text, re.M)
    ins = [tensor(t) for t in split_top(sig.group(1))]
    outs = [tensor(t) if t.startswith("tensor") else None for t in split_top(sig.group(2))]
    axis = int(re.search(r"axis = (\d+) : i32}>", text).group(1))
    bits = [BITS[t.elem] for t in ins]
    result = outs[0].encoding if outs[0] is not None else None  # None: a scalar
    return ins[0].encoding, result, ins[0].shape, bits, axis


def _scan_of(text: str) -> tuple[str, tuple[int, ...], list[int], int, bool]:
    """src encoding, shape, element bits of each operand, axis and reverse of the module's
    tt.scan."""
    sig = re.search(r"\}\) : \((.*)\) -> \(?(.*?)\)?$", text, re.M)
    ins = [tensor(t) for t in split_top(sig.group(1))]
    m = re.search(r"axis = (\d+) : i32, reverse = (\w+)", text)
    return ins[0].encoding, ins[0].shape, [BITS[t.elem] for t in ins], int(m[1]), m[2] == "true"


def _lowering_of(path: Path):
    """wgpsim's lowering of the fixture module's one convert_layout, tt.reduce or tt.scan."""
    text = path.read_text()
    if path.parent.name == "cases":
        return lower_convert(*_convert_of(text))
    if path.parent.name == "scan_cases":
        src, shape, bits, axis, reverse = _scan_of(text)
        return lower_scan(src, shape, bits, axis, reverse=reverse)
    return lower_reduce(*_reduce_of(text))


@pytest.mark.parametrize("path", CASES + REDUCES + SCANS, ids=lambda p: p.stem)
def test_addresses_match_triton(path):
    """Every store and load step writes/reads Triton's rows of lane addresses, per warp, with
    Triton's barriers between the steps (-1: a lane that skips a predicated store)."""
    fixture = json.loads((FIXTURES / f"{path.stem}.json").read_text())
    low = _lowering_of(path)
    theirs = _triton_steps(fixture["accesses"])
    assert len(theirs) == len(low.steps)
    for step, their in zip(low.steps, theirs, strict=True):
        if step == BARRIER or their == BARRIER:
            assert step == their
            continue
        assert {_name(k) for k, _ in their} == {step.instruction}
        assert len(their) == step.num_instructions
        for w in range(step.num_warps):
            rows = sorted(tuple(a[32 * w : 32 * w + 32]) for _, a in their)
            assert rows == sorted(tuple(r) for r in step.addresses[w].tolist()), f"warp {w}"


@pytest.mark.parametrize("path", SCANS, ids=lambda p: p.stem)
def test_scan_counts_equal_the_assembly(path):
    """A scan's ds_* per warp are its compiled assembly's (LLVM dropped the loads nobody uses,
    merged consecutive ones into b128/b96 and paired the rest), beside its ds_bpermute_b32 lane
    shuffles, which are not scratch traffic."""
    fixture = json.loads((FIXTURES / f"{path.stem}.json").read_text())
    want = {k: n for k, n in fixture["assembly_counts"].items() if k != "ds_bpermute_b32"}
    low = _lowering_of(path)
    assert low.counts == want
    assert low.barriers == [a[0] for a in fixture["accesses"]].count(BARRIER) == 1
    src, shape, bits, axis, reverse = _scan_of(path.read_text())
    scratch = scan_scratch(thread_layout(src, shape), axis, reverse)
    assert scratch.elems * sum(b // 8 for b in bits) == fixture["ttg_shared"]


def test_scan_fixtures_cover_layouts():
    """The scan fixtures hold 1-D and 2-D scans along both axes, 4 and 8 warps, fp32 and i32,
    forward and reverse, one and two operands, one and several axis blocks per thread."""
    got = [_scan_of(p.read_text()) for p in SCANS]
    assert {len(s) for _, s, *_ in got} == {1, 2} and {a for *_, a, _ in got} == {0, 1}
    assert {len(b) for _, _, b, *_ in got} == {1, 2} and {r for *_, r in got} == {False, True}
    assert {"w8" in p.stem for p in SCANS} == {True, False} and len(SCANS) == 8


def test_a_scan_within_warps_has_no_scratch_steps():
    """A scan whose axis stays in each warp (rows of a 4-warp layout along dim 1) needs no
    scratch; along dim 0 the warps exchange their totals."""
    src = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>"
    assert lower_scan(src, (64, 128), 32, 1).steps == ()
    assert lower_scan(src, (64, 128), 32, 0).steps


def test_reduce_fixtures_cover_both_conversions():
    """The reduce fixtures hold reductions with one conversion (the partials fit broadcast
    lanes, or the gathered layout is the result's) and with a second one into the result's
    layout, over 4 and 8 warps, 16- and 32-bit, blocked and WMMA sources, one and two operands
    (an argmax: f16 or f32 values and i32 indices, each in its own part of the scratch), and
    1-D tensors summed to a scalar (a norm's or softmax's reduction)."""
    tiles = [len(_lowering_of(p).tiles) for p in REDUCES]
    assert sorted(set(tiles)) == [1, 2] and len(REDUCES) == 12


def test_a_reduce_within_warps_has_no_scratch_steps():
    """Rows of a 4-warp blocked layout summed along the row (each warp owns its rows): the
    reduction ends in each warp, as the corpus's row_sum and softmax (no scratch)."""
    src = "#ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>"
    dst = f"#ttg.slice<{{dim = 1, parent = {src}}}>"
    assert lower_reduce(src, dst, (128, 128), 32, 1).steps == ()
    assert lower_reduce(src, f"#ttg.slice<{{dim = 0, parent = {src}}}>", (128, 128), 32, 0).steps


def test_fixtures_cover_rounds_and_types():
    """The fixtures hold conversions in several rounds, and 8-, 16- and 32-bit elements."""
    rounds = [lower_convert(*_convert_of(p.read_text())).tiles[0].rounds for p in CASES]
    bits = {_convert_of(p.read_text())[3] for p in CASES}
    assert max(rounds) == 4 and bits == {8, 16, 32} and len(CASES) == 11


def _corpus_convert_ops() -> list[tuple[str, dict, bool]]:
    """Every convert_layout of the corpus, and whether Triton gave it a scratch buffer."""
    out = []
    for case in corpus.cases().values():
        given = {b["name"] for b in case.buffers if b["op"] == "ttg.convert_layout"}
        for op in case.ops:
            if op["op"] == "ttg.convert_layout":
                out.append((case.name, op, op["name"] in given))
    return out


def test_which_converts_go_through_lds():
    """A convert goes through LDS exactly when Triton 3.9.0 allocated it scratch (the corpus's
    attention mma -> dot_op conversions stay in each warp)."""
    ops = _corpus_convert_ops()
    got = []
    for name, op, given in ops:
        table = corpus.cases()[name].aliases
        src, dst = (resolve(re.search(r", (.*)>$", t).group(1), table) for t in op["types"])
        shape = tuple(
            int(s) for s in re.match(r"tensor<([\dx]+)x", op["types"][0]).group(1).split("x")
        )
        low = lower_convert(src, dst, shape, 16)
        got.append((name, bool(low.steps), given))
    assert all(lowered == given for _, lowered, given in got), got
    assert sum(given for *_, given in got) == 5 and len(got) == 9


#: Compiles of tests/fixtures/scratch (written for scratch sizing) whose only scratch ops are
#: convert_layout, tt.reduce and atomics, with nothing else wgpsim leaves out (no ds_bpermute,
#: no dead reduce result): `wgpsim kernel`'s instruction totals must be the assembly's.
LOWERED_COMPILES = (
    "alloc_reduce_alloc_fp32",
    "atomic_add_scalar",
    "atomic_add_used_32",
    "atomic_cas_scalar",
    "argmax_axis1_fp16_w8",
    "cvt_blocked_t_fp16_w8",
    "cvt_blocked_t_fp32",
    "cvt_blocked_to_wmma_fp16",
    "cvt_warps_fp32",
    "cvt_wmma_to_blocked_fp32",
    "dot_colmax_fp16_w8",
    "dot_rowmax_fp16",
    "layer_norm_fp16",
    "loop_colsum_fp32_w8",
    "sum_axis0_fp16_w8",
    "sum_axis1_fp16_w8",
    "sum_axis1_fp32",
)


@pytest.mark.parametrize("name", LOWERED_COMPILES)
def test_kernel_totals_equal_the_assembly(name):
    """Every scratch op with scratch is lowered, and the kernel's ds_* totals per warp are the
    assembly's."""
    from wgpsim.kernel.report import kernel_report

    rep = kernel_report(Path(__file__).parent / "fixtures" / "scratch" / name)
    kinds = ("ttg.convert_layout", "tt.reduce", "atomic")
    scratch = [op for op in rep.ops if any(k in op["op"] for k in kinds)]
    assert any(op["modelled"] for op in scratch)
    assert all(op["modelled"] or "needs no LDS scratch" in op["note"] for op in scratch)
    assert rep.instruction_totals() == rep.extras["assembly"]["totals"]


#: Compiles of tests/fixtures/scratch with a tt.scan across warps, and those whose ds_* LLVM
#: pairs as `wgpsim.trace.lowering_asm` does (in the other two, loads more than 255 elements
#: apart get new base registers and LLVM pairs one of them differently: stride64 or not).
SCAN_COMPILES = (
    "cumsum_axis0_fp16",
    "cumsum_axis0_fp32",
    "cumsum_axis1_fp32_w8",
    "scan_pair_axis0_fp32",
    "scan_pair_axis1_fp32_w8",
)
SCAN_EXACT = ("cumsum_axis0_fp16", "cumsum_axis1_fp32_w8", "scan_pair_axis1_fp32_w8")


@pytest.mark.parametrize("name", SCAN_COMPILES)
def test_scan_kernel_totals(name):
    """`wgpsim kernel` lowers the scan, and its ds_* per warp are the assembly's but for the
    ds_bpermute_b32 lane shuffles: as many instructions, and the same ones where LLVM pairs
    as wgpsim does."""
    from wgpsim.kernel.report import kernel_report

    rep = kernel_report(Path(__file__).parent / "fixtures" / "scratch" / name)
    assert all(op["modelled"] for op in rep.ops if op["op"] == "tt.scan")
    asm = dict(rep.extras["assembly"]["totals"])
    asm.pop("ds_bpermute_b32", None)
    ours = rep.instruction_totals()
    assert sum(ours.values()) == sum(asm.values())
    if name in SCAN_EXACT:
        assert ours == asm


ATOMICS = sorted((FIXTURES / "atomic_cases").glob("*.ttgir"))


@pytest.mark.parametrize("path", ATOMICS, ids=lambda p: p.stem)
def test_atomic_addresses_match_triton(path):
    """An atomic whose result is used, read from its module by the kernel model and lowered by
    `wgpsim kernel`'s route: Triton's barrier, store (only the owning threads: Triton's
    predicate), barrier, load."""
    from wgpsim.frontend.ttgir import read_ttgir_file
    from wgpsim.kernel.lowering import allocate_kernel, lower_op

    kernel = read_ttgir_file(path)
    op = next(o for o in kernel.ops if "atomic" in o.op)
    low = lower_op(kernel, op, allocate_kernel(kernel)).lowering
    fixture = json.loads((FIXTURES / f"{path.stem}.json").read_text())
    theirs = _triton_steps(fixture["accesses"])
    assert [s if s == BARRIER else "lds" for s in low.steps] == [
        t if t == BARRIER else "lds" for t in theirs
    ]
    for step, their in zip(low.steps, theirs, strict=True):
        if step == BARRIER:
            continue
        assert len(their) == step.num_instructions == 1
        for w in range(step.num_warps):
            got = step.addresses[w, 0]
            want = np.asarray(their[0][1][32 * w : 32 * w + 32])
            assert (got == want).all()  # -1: a lane that skips Triton's predicated store
            if not step.store:
                assert (got >= 0).all()


def test_a_scalar_atomic_on_wave64_has_its_warps_lanes():
    """The held-out layer-norm backward's spin lock (a scalar tt.atomic_cas whose old value is
    used) compiled for gfx950 (64 lanes a warp): its scratch store comes from thread 0 alone and
    its load from all 64 lanes of every warp, one ds_write_b32 and one ds_read_b32 with two
    barriers, as the assembly's spin loop holds."""
    from corpus_others import checks

    from wgpsim.frontend.ttgir import read_ttgir_file
    from wgpsim.kernel.lowering import allocate_kernel, lower_op

    name = "heldout_tutorial_layer_norm_bwd_dx"
    kernel = read_ttgir_file(checks.root("gfx950") / "fixtures" / name / "kernel.ttgir")
    cas = next(o for o in kernel.ops if o.op == "tt.atomic_cas")
    low = lower_op(kernel, cas, allocate_kernel(kernel)).lowering
    (spin,) = checks.expected(name, "gfx950")["assembly"]["loops"]
    assert dict(low.counts) == spin["ds"] == {"ds_write_b32": 1, "ds_read_b32": 1}
    assert low.steps.count(BARRIER) == spin["instructions"]["s_barrier"] == 2
    store, load = [s for s in low.steps if s != BARRIER]
    assert store.addresses.shape == load.addresses.shape == (8, 1, 64)
    assert (store.addresses >= 0).sum() == 1 and store.addresses[0, 0, 0] >= 0
    assert (load.addresses >= 0).all()


@pytest.mark.parametrize("target", ["gfx1250", "gfx950", "gfx942"])
def test_a_pair_scan_reads_only_the_totals_its_used_result_needs(target):
    """accelerated-scan's x_t = g_t x_(t-1) + u_t (a tt.scan of (g, u), only x used): LLVM drops
    the loads of warp 0's g totals (they feed only the unused g result) and of the last warp's,
    merges the u totals from an aligned start into ds_load_b96/_b128 and pairs the g totals;
    the scan's instructions equal the compile's ds_* (no lane permutes) on every target."""
    from corpus_others import checks

    from wgpsim.frontend.ttgir import read_ttgir_file
    from wgpsim.kernel.lowering import allocate_kernel, lower_op

    name = "heldout_accelerated_scan_fwd"
    kernel = read_ttgir_file(checks.root(target) / "fixtures" / name / "kernel.ttgir")
    scan = next(o for o in kernel.ops if o.op == "tt.scan")
    assert scan.attr("results_used") == (False, True)
    got = lower_op(kernel, scan, allocate_kernel(kernel)).counts
    want = dict(checks.expected(name, target)["assembly"]["ds"])
    want.pop("ds_bpermute_b32", None)
    assert got == want
