"""`wgpsim.frontend.ssa_scopes.unshadow`: a name MLIR's printer reuses in sibling regions gets a
name of its own, and the reader then sees one value per name. The real case is Triton 3.9.0's
persistent matmul tutorial with tensor descriptors (``%3`` in four regions), whose buffers must
land where Triton's allocation put them."""

import re
from pathlib import Path

from wgpsim.frontend import read_ttgir
from wgpsim.frontend.sources import read_kernel
from wgpsim.frontend.ssa_scopes import original_name, unshadow
from wgpsim.kernel.report import kernel_report

FIXTURES = Path(__file__).resolve().parent / "corpus_others" / "fixtures"
PERSISTENT = FIXTURES / "tutorial_descriptor_persistent_matmul"

HEADER = """#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
#blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#smem = #ttg.shared_memory
module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx1250", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @k(%arg0: tensor<64x64xf16, #blocked>, %c: i1) {
"""
FOOTER = """    tt.return
  }
}
"""
T = "tensor<64x64xf16, #blocked>"
M = "!ttg.memdesc<64x64xf16, #shared, #smem>"


def _alloc_and_load(res: str, alloc: str, src: str = "%arg0", pad: str = "      ") -> str:
    return (
        f"{pad}{alloc} = ttg.local_alloc {src} : ({T}) -> {M}\n"
        f"{pad}{res} = ttg.local_load {alloc} : {M} -> {T}\n"
    )


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()]


def test_siblings_get_names_of_their_own_and_the_reader_one_buffer_each():
    body = (
        "    scf.if %c {\n"
        + _alloc_and_load("%4", "%3")
        + "    } else {\n"
        + _alloc_and_load("%4", "%3")
        + "    }\n"
        + "    scf.if %c {\n"
        + _alloc_and_load("%4", "%3")
        + "    }\n"
    )
    text = HEADER + body + FOOTER
    out = unshadow(text)
    assert len(out.splitlines()) == len(text.splitlines())  # lines keep their numbers
    allocs = [line.split(" = ")[0] for line in _lines(out) if "local_alloc" in line]
    loads = [
        line.split(" = ttg.local_load ")[1].split(" ")[0]
        for line in _lines(out)
        if "local_load" in line
    ]
    assert allocs == loads == ["%3", "%3$2", "%3$3"]
    k = read_ttgir(text)  # before the pass: "buffer names must be unique" in the allocator
    assert [b.name for b in k.buffers] == ["%3", "%3$2", "%3$3"]
    assert [op.buffer for op in k.ops if op.op == "ttg.local_load"] == ["%3", "%3$2", "%3$3"]
    lives = [b.live for b in k.buffers]  # each from its alloc to its own load, none overlapping
    assert all(end - start == 2 for start, end in lives)
    assert all(a[1] <= b[0] for a, b in zip(lives, lives[1:], strict=False))


def test_a_name_in_scope_is_kept_and_one_out_of_scope_renamed_with_its_later_uses():
    text = (
        "module {\n"
        "  %1 = arith.constant 1 : i32\n"
        "  scf.if %c {\n"
        "    %2 = arith.addi %1, %1 : i32\n"  # the outer %1 is in scope here
        "    scf.if %c {\n"
        "      %3 = arith.addi %2, %1 : i32\n"  # %2 of the enclosing region
        "    }\n"
        "  }\n"
        "  %2 = arith.muli %1, %1 : i32\n"  # %2 again: its first region has closed
        "  scf.if %c {\n"
        "    %3 = arith.addi %2, %1 : i32\n"  # reads the outer, renamed %2
        "  }\n"
        "  %4 = arith.addi %2, %1 : i32\n"
        "}"
    )
    out = _lines(unshadow(text))
    assert out[3] == "%2 = arith.addi %1, %1 : i32"
    assert out[5] == "%3 = arith.addi %2, %1 : i32"
    assert out[8] == "%2$2 = arith.muli %1, %1 : i32"
    assert out[10] == "%3$2 = arith.addi %2$2, %1 : i32"
    assert out[12] == "%4 = arith.addi %2$2, %1 : i32"


def test_block_arguments_of_reduce_bodies_and_loop_arguments():
    text = (
        "module {\n"
        '  %r = "tt.reduce"(%x) <{axis = 1 : i32}> ({\n'
        '  ^bb0(%a: f32 loc("x.py":1:2), %b: f32 loc("x.py":1:2)):\n'
        "    %s = arith.addf %a, %b : f32\n"
        "    tt.reduce.return %s : f32\n"
        "  }) : (tensor<8x8xf32, #b>) -> tensor<8xf32, #s>\n"
        '  %q = "tt.reduce"(%x) <{axis = 1 : i32}> ({\n'
        "  ^bb0(%a: f32, %b: f32):\n"
        "    %s = arith.maxnumf %a, %b : f32\n"
        "    tt.reduce.return %s : f32\n"
        "  }) : (tensor<8x8xf32, #b>) -> tensor<8xf32, #s>\n"
        "  %l:2 = scf.for %i = %lb to %ub step %st iter_args(%u = %r, %v = %q) -> (f32, f32)  : i32 {\n"
        "    scf.yield %v, %u : f32, f32\n"
        "  }\n"
        "  %u = arith.addf %l#0, %l#1 : f32\n"  # %u again, out of the loop: renamed
        "  %m = scf.for %i = %lb to %ub step %st iter_args(%w = %u) -> (f32)  : i32 {\n"
        "    %v = arith.addf %w, %l#1 : f32\n"
        "    scf.yield %v : f32\n"
        "  }\n"
        "}"
    )
    out = _lines(unshadow(text))
    assert out[2] == '^bb0(%a: f32 loc("x.py":1:2), %b: f32 loc("x.py":1:2)):'
    assert out[7] == "^bb0(%a$2: f32, %b$2: f32):"
    assert out[8:10] == ["%s$2 = arith.maxnumf %a$2, %b$2 : f32", "tt.reduce.return %s$2 : f32"]
    assert out[11].startswith("%l:2 = scf.for %i = %lb to %ub step %st iter_args(%u = %r, %v = %q)")
    assert out[14] == "%u$2 = arith.addf %l#0, %l#1 : f32"
    # the second loop: its induction variable renamed, its init the outer (renamed) %u
    assert "scf.for %i$2 = %lb to %ub step %st iter_args(%w = %u$2)" in out[15]
    assert out[16:18] == ["%v$2 = arith.addf %w, %l#1 : f32", "scf.yield %v$2 : f32"]


def test_fresh_names_skip_names_the_text_holds_and_strings_are_left_alone():
    text = (
        "module {\n"
        "  scf.if %c {\n"
        "    %3 = arith.constant 0 : i32\n"
        "  }\n"
        "  %3$2 = arith.constant 1 : i32\n"
        "  scf.if %c {\n"
        '    %3 = arith.constant 2 : i32 loc("%3")\n'
        "  }\n"
        "}"
    )
    out = _lines(unshadow(text))
    assert out[6] == '%3$3 = arith.constant 2 : i32 loc("%3")'
    assert original_name("%3$3") == "%3"


def test_persistent_matmul_buffers_where_triton_put_them():
    """The tutorial's three descriptor-store allocs (one per copy of the flattened loop's
    epilogue, each ``%3``) are three buffers, each read by the TDM store of its own region;
    wgpsim's allocation of the cache TTGIR puts every buffer at the offset of Triton's
    (``kernel.alloc.mlir``, cf form, where names are unique) and needs its ``ttg.shared``."""
    ttgir = (PERSISTENT / "kernel.ttgir").read_text()
    lines = [n for n, line in enumerate(ttgir.splitlines(), 1) if "%3 = ttg.local_alloc" in line]
    assert lines == [147, 217, 252]
    kernel = read_kernel(PERSISTENT / "kernel.ttgir")
    epilogue = [b for b in kernel.buffers if original_name(b.name) == "%3"]
    assert [b.line for b in epilogue] == lines and len({b.name for b in epilogue}) == 3
    store = {op.line: op.buffer for op in kernel.ops if op.op.endswith("local_to_global")}
    assert [store[b.line + 2] for b in epilogue] == [b.name for b in epilogue]
    alloc = (PERSISTENT / "kernel.alloc.mlir").read_text()
    triton = [[int(v)] for v in re.findall(r"local_alloc[^:]*allocation\.offset = (\d+)", alloc)]
    shared = int(re.search(r"ttg\.shared = (\d+)", alloc).group(1))
    rep = kernel_report(PERSISTENT / "kernel.ttgir")
    assert [b["wgpsim_offsets"] for b in rep.buffers] == triton
    assert rep.lds_bytes == shared == 106432
