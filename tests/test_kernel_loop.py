"""A compiled kernel's loop as traces: the assembly's loop bodies (issue 13).

The truth is the real Triton 3.9.0 gfx1250 compiles of the corpus (``tests/corpus/fixtures``,
``expected.json`` counts each loop body's instructions with the regenerate script's own regex)
and of ``examples/kernels``; and, end to end, the AMD blog's microbenchmark as a Gluon kernel,
whose simulated cycles must be those the ``lds_bandwidth`` experiment computes from layouts.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from wgpsim.engine import simulate
from wgpsim.errors import TraceError
from wgpsim.frontend.amdgcn_loops import loops, straight
from wgpsim.frontend.sources import read_kernel
from wgpsim.hw import load_hardware
from wgpsim.kernel.loop.program import loop_program, tdm_timed, ttgir_program, wmma_cost
from wgpsim.kernel.loop.traces import loop_trace
from wgpsim.microbench.bandwidth import parse_config, prepare
from wgpsim.sweeps.config import load_config
from wgpsim.trace.instructions import OPS

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted((ROOT / "tests" / "corpus" / "fixtures").iterdir())
EXAMPLES = sorted(p for p in (ROOT / "examples" / "kernels").iterdir() if p.is_dir())
#: regenerate.py's ``_COUNTED``: the mnemonics expected.json counts besides ds_*.
COUNTED = (
    "ds_",
    "tensor_load_to_lds",
    "tensor_store_from_lds",
    "global_load_async",
    "v_wmma_",
    "s_barrier",
    "s_wait_",
    "s_get_shader_cycles",
    "buffer_load",
    "global_load",
    "global_store",
)
#: Compiles whose ds_* come (partly) from ops wgpsim does not model, read off their assembly:
#: in mx_gemm a ds_store_2addr_stride64_b32 that LLVM merged from two ops' stores (.loc line
#: 0). (Scratch of convert_layout and tt.reduce is matched, the reduce's by its caller's line.)
UNMATCHED = {"mx_gemm_fp8": 1}


def _pair(path: Path) -> tuple[Path, Path]:
    if (path / "kernel.ttgir").exists():
        return path / "kernel.ttgir", path / "kernel.amdgcn"
    return next(path.glob("*.ttgir")), next(path.glob("*.amdgcn"))


def _counted(counts: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counts.items() if k.startswith(COUNTED)}


@pytest.mark.parametrize("case", FIXTURES, ids=lambda p: p.name)
def test_loop_bodies_are_the_compiles(case):
    """Each loop body's label, lines and counts equal expected.json's; the whole kernel too."""
    asm = (case / "kernel.amdgcn").read_text()
    expected = json.loads((case / "expected.json").read_text())["assembly"]
    bodies = loops(asm)
    assert [b.label for b in bodies] == [e["label"] for e in expected["loops"]]
    for body, want in zip(bodies, expected["loops"], strict=True):
        assert list(body.lines) == want["lines"]
        assert _counted(body.counts()) == want["instructions"]
        assert body.counts(("ds",)) == want["ds"]
    assert _counted(straight(asm).counts()) == expected["instructions"]


CASES = [
    (case, i)
    for case in FIXTURES + EXAMPLES
    for i in range(max(1, len(loops(_pair(case)[1].read_text()))))
]


@pytest.mark.parametrize(("case", "loop"), CASES, ids=lambda x: getattr(x, "name", str(x)))
def test_traced_iterations_hold_the_body(case, loop):
    """Every warp's every traced iteration runs exactly the body's instructions; its LDS rows
    are the body's ds_* but the unmatched ones, which are one line each and only where the
    assembly's ds_* come from ops wgpsim does not model."""
    ttgir, amdgcn = _pair(case)
    asm = amdgcn.read_text()
    kernel = read_kernel(ttgir)
    body = loops(asm)[loop] if loops(asm) else straight(asm)
    prog = loop_program(kernel, asm, loop=loop if loops(asm) else None)
    assert prog.label == body.label
    lt = loop_trace(prog, iterations=2)
    assert lt.trace.num_warps == kernel.num_warps
    for w in (0, kernel.num_warps - 1):
        for i in (0, 1):
            assert lt.counts(w, i) == body.counts()
    ds = body.counts(("ds",))
    assert len(prog.unmatched) == UNMATCHED.get(case.name, 0) * (not body.is_loop or 1)
    assert all("\n" not in str(u) and str(u).startswith("unmatched: ") for u in prog.unmatched)
    rows = (lt.trace.warp == 0) & (lt.iteration == 0) & (lt.what == "lds")
    assert rows.sum() == sum(ds.values()) - len(prog.unmatched)
    assert [OPS[c] for c in lt.trace.op[rows]] == list(lt.mnemonic[rows])
    assert (lt.op_index[rows] >= 0).all()


def _bandwidth(name: str):
    d = ROOT / "tests" / "corpus" / "fixtures" / name
    return read_kernel(d / "kernel.ttgir"), (d / "kernel.amdgcn").read_text()


@pytest.mark.parametrize(("case", "layout"), [("plain", "plain"), ("partitioned", "partitioned")])
def test_the_blogs_microbenchmark_compiled_gives_the_experiments_cycles(case, layout):
    """The Gluon microbenchmark's assembly, timed through the loop path (a straight-line
    kernel: one iteration of its whole body), gives the cycles `wgpsim run
    configs/lds_bandwidth.yaml` computes from layouts at burst 32 (323 and 195 today), and
    its loads read what the experiment's do."""
    hw = load_hardware()
    kernel, asm = _bandwidth(f"lds_bandwidth_{case}")
    prog = loop_program(kernel, asm, hw=hw)
    assert prog.source == "assembly" and prog.iterations == 1 and not prog.unmatched
    timed = [s.op for s in prog.steps if s.op != "delay"]
    assert timed == ["barrier", "clock", *["ds_load_b128"] * 32, "wait_ds", "barrier", "clock"]
    lt = loop_trace(prog, hw=hw)
    raw, source = load_config(ROOT / "configs" / "lds_bandwidth.yaml")
    cfg = parse_config(raw, source)
    want = prepare(cfg, layout, 32)
    got = simulate(lt.trace, hw).measurement()
    assert got == simulate(want.trace, cfg.hw).measurement()
    assert got in ((323,) if case == "plain" else (195, 196))
    mine, theirs = lt.trace.addr[lt.trace.lds_mask()], want.trace.addr[want.trace.lds_mask()]
    assert sorted(map(tuple, mine.tolist())) == sorted(map(tuple, theirs.tolist()))


def test_an_unrolled_body_serves_each_op_twice():
    """BLOCK_K = 16: LLVM unrolls the main loop by two (an epilogue preheader follows); each
    op's four loads appear twice in the body, matched by their immediates per copy."""
    d = ROOT / "tests" / "corpus" / "fixtures" / "matmul_fp16_k16"
    prog = loop_program(read_kernel(d / "kernel.ttgir"), (d / "kernel.amdgcn").read_text())
    assert "the body holds 2 iterations of the TTGIR loop (LLVM unrolled it)" in prog.notes
    assert not prog.unmatched
    per_op = {}
    for s in prog.steps:
        if s.what == "lds":
            per_op.setdefault(s.name, []).append(s.issued)
    assert {k: sorted(v) for k, v in per_op.items()} == {
        "%a_70": [0, 0, 1, 1, 2, 2, 3, 3],
        "%b_74": [0, 0, 1, 1, 2, 2, 3, 3],
    }


def test_every_wmma_of_the_corpus_has_an_llvm_class():
    hw = load_hardware()
    seen = {}
    for case in FIXTURES + EXAMPLES:
        for i in straight(_pair(case)[1].read_text()).instructions:
            if i.kind == "wmma":
                seen[i.mnemonic] = wmma_cost(i, hw)
    assert all(note == "" for _, note in seen.values()), seen
    # LLVM GFX1250SpeedModel: f16 2-pass XDL (8), iu8 4-pass (16), f32 16x16x4 4-pass VALU (16)
    assert seen["v_wmma_f32_16x16x32_f16"][0] == hw.costs.wmma_xdl_2pass
    assert seen["v_wmma_i32_16x16x64_iu8"][0] == hw.costs.wmma_xdl_4pass
    assert seen["v_wmma_f32_16x16x4_f32"][0] == hw.costs.wmma_valu_4pass


def test_without_assembly_the_body_comes_from_the_ttgir_by_rule():
    kernel = read_kernel(ROOT / "examples/kernels/lds_bandwidth_plain/lds_bandwidth.ttgir")
    prog = ttgir_program(kernel)
    assert prog.source == "ttgir" and "no assembly" in prog.notes[0]
    ops = [s.op for s in prog.steps]
    # the local_alloc's 32 stores, wait, barrier; the local_load's 32 loads, wait
    assert ops == ["ds_store_b128"] * 32 + ["wait_ds", "barrier"] + ["ds_load_b128"] * 32 + [
        "wait_ds"
    ]
    lt = loop_trace(prog)
    assert lt.trace.count_by_op()["ds_load_b128"] == 4 * 32


def test_iterations_from_constant_bounds_and_bad_counts():
    d = ROOT / "tests" / "corpus" / "fixtures" / "gemm_tdm_partitioned_fp16"
    prog = loop_program(read_kernel(d / "kernel.ttgir"), (d / "kernel.amdgcn").read_text())
    assert prog.iterations is None  # scf.for %k = %c0 to %K: not a constant
    lt = loop_trace(prog)
    assert lt.iterations == 4 and set(lt.iteration.tolist()) == {0, 1, 2, 3}
    with pytest.raises(TraceError, match="iterations 0: expected a positive integer"):
        loop_trace(prog, iterations=0)
    with pytest.raises(TraceError, match="not a loop label"):
        loop_program(read_kernel(d / "kernel.ttgir"), (d / "kernel.amdgcn").read_text(), loop="x")


@pytest.mark.triton
@pytest.mark.slow
def test_a_live_compile_of_the_gluon_microbenchmark_times_like_the_fixture():
    """Compiled now (CPU, gfx1250): the assembly holds exactly barrier, clock, 32 loads, wait,
    barrier, clock between the barriers, and times as the experiment computes."""
    pytest.importorskip("triton")
    from corpus.kernels.gluon_bandwidth import CASES

    from wgpsim.frontend.compile import compile_for_gfx1250

    case = next(c for c in CASES if c.name == "lds_bandwidth_plain")
    compiled = compile_for_gfx1250(
        case.fn, case.signature, case.constexprs, num_warps=case.num_warps
    )
    kernel = compiled.kernel()
    body = straight(kernel.assembly)
    kinds = [
        i.mnemonic for i in body.instructions if i.kind in ("ds", "wait_ds", "barrier", "clock")
    ]
    assert kinds == [
        "s_barrier_signal",
        "s_barrier_wait",
        "s_get_shader_cycles_u64",
        *["ds_load_b128"] * 32,
        "s_wait_dscnt",
        "s_barrier_signal",
        "s_barrier_wait",
        "s_get_shader_cycles_u64",
    ]
    hw = load_hardware()
    lt = loop_trace(loop_program(kernel, hw=hw), hw=hw)
    raw, source = load_config(ROOT / "configs" / "lds_bandwidth.yaml")
    cfg = parse_config(raw, source)
    want = simulate(prepare(cfg, "plain", 32).trace, cfg.hw).measurement()
    assert simulate(lt.trace, hw).measurement() == want


def test_the_python_entry_reads_a_path_with_its_assembly():
    """``wgpsim.kernel.loop(path)``: the TTGIR and the assembly beside it; 4 iterations of a
    loop with a runtime bound; each holds the compile's loop body (expected.json)."""
    from wgpsim.kernel import loop

    d = ROOT / "tests" / "corpus" / "fixtures" / "gemm_tdm_partitioned_fp16"
    lt = loop(d / "kernel.ttgir")
    want = json.loads((d / "expected.json").read_text())["assembly"]["loops"][0]
    assert lt.program.label == want["label"] and lt.iterations == 4
    for w in range(4):
        assert _counted(lt.counts(w, 3)) == want["instructions"]


@pytest.mark.parametrize(
    ("path", "how"),
    [
        ("examples/kernels/gemm_tdm_partitioned", "computed"),
        ("tests/corpus/fixtures/matmul_fp16", "loop-carried"),
    ],
)
def test_double_buffered_loads_alternate_stages(path, how):
    """The Gluon GEMM reads ``a_smem.index(k % 2)``, Triton's pipelined matmul a view carried
    through the loop and advanced modulo its two buffers: iteration i reads stage i mod 2, so
    iterations 0 and 2 read the same addresses and iteration 1 the other buffer, one stage
    further on in every lane of every load."""
    d = ROOT / path
    from wgpsim.kernel import loop

    lt = loop(next(d.glob("*.ttgir")), iterations=3)
    assert any(
        f"stage index is {how}: TTGIR iteration t reads stage (0 + t) mod 2" in n
        for n in lt.program.notes
    )
    lds = lt.what == "lds"
    for w in range(lt.trace.num_warps):
        rows = [lds & (lt.trace.warp == w) & (lt.iteration == i) for i in range(3)]
        a0, a1, a2 = (lt.trace.addr[r].astype(np.int64) for r in rows)
        assert (a0 == a2).all()
        names = lt.op_name[rows[0]]
        for name in set(names):
            step = (a1 - a0)[names == name]
            assert len(np.unique(step)) == 1 and step[0, 0] > 0  # one stage on, each op


def test_tdm_rows_name_their_copy_op():
    """Until the engines time TDM writes, a tensor_load_to_lds is a delay row of its issue,
    named after the TTGIR copy of its line (the timeline's label)."""
    d = ROOT / "tests" / "corpus" / "fixtures" / "gemm_tdm_partitioned_fp16"
    prog = loop_program(read_kernel(d / "kernel.ttgir"), (d / "kernel.amdgcn").read_text())
    tdm = [s for s in prog.steps if s.what == "tdm"]
    op = "tensor_load_to_lds" if tdm_timed() else "delay"
    assert [(s.op, s.name, s.loc) for s in tdm] == [
        (op, "%11", "gluon_gemm.py:38"),
        (op, "%14", "gluon_gemm.py:39"),
    ]
    assert any("not timed as LDS writes" in n for n in prog.notes) == (not tdm_timed())


@pytest.mark.skipif(not tdm_timed(), reason="the engines do not time TDM writes yet")
def test_tdm_writes_are_traced_per_warp_and_iteration():
    """Each tensor_load_to_lds is its warp's granule rows (`tdm_writes.block_rows`): per
    iteration every warp writes its part of both tiles, the whole of them together (the
    stage written alternates, the other buffer than the loads read), and s_wait_tensorcnt
    is a wait_tensor row."""
    from wgpsim.kernel import loop
    from wgpsim.trace.instructions import op_code

    d = ROOT / "examples" / "kernels" / "gemm_tdm_partitioned"
    lt = loop(next(d.glob("*.ttgir")), iterations=2)
    tdm = lt.trace.op == op_code("tensor_load_to_lds")
    waits = lt.program.asm_counts["s_wait_tensorcnt"]  # per body, per warp
    assert (lt.trace.op == op_code("wait_tensor")).sum() == waits * 2 * 4
    for i in range(2):
        rows = tdm & (lt.iteration == i)
        written = lt.trace.addr[rows]
        written = written[written >= 0]
        assert len(written) * 8 == 2 * 128 * 64 * 2  # both fp16 tiles, 8 B a granule
        assert len(set(written.tolist())) == len(written)
        loads = lt.trace.addr[(lt.what == "lds") & (lt.iteration == i)]
        assert not set(written.tolist()) & set(loads[loads >= 0].tolist())


@pytest.mark.parametrize("text", ["", "not assembly at all\n\x00", ".text\n.loc 1 2 3\n"])
def test_an_assembly_without_a_kernel_is_one_line(text):
    from wgpsim.errors import ModuleError

    kernel, _ = _bandwidth("lds_bandwidth_plain")
    with pytest.raises(ModuleError, match="no function in the assembly") as err:
        loop_program(kernel, text)
    assert "\n" not in str(err.value)


def test_s_nop_waits_its_count_plus_one():
    """The ISA: ``s_nop N`` inserts N + 1 wait states; the other hints cost nothing."""
    from wgpsim.frontend.amdgcn_loops import straight as body_of
    from wgpsim.kernel.loop.costs import issue_cycles

    hw = load_hardware()
    body = body_of("k:\n  s_nop 0x3\n  s_nop 0\n  s_wait_alu depctr_va_vdst(0)\n  s_endpgm")
    assert [issue_cycles(i, hw) for i in body.instructions] == [4, 1, 0, hw.costs.salu]


def test_the_listing_is_read_once_and_each_caller_gets_its_own_list():
    asm = "k:\n.L1:\n  ds_load_b128 v[1:4], v2\n  s_cbranch_scc1 .L1\n  s_endpgm"
    first = loops(asm)
    first.clear()  # a caller's list: the next caller's is whole
    again = loops(asm)
    assert [b.label for b in again] == [".L1"] and again[0] is loops(asm)[0]
