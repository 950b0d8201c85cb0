"""Plain-Triton pipelined matmuls (``tests/fixtures/async_copy``, real Triton 3.9.0 gfx1250
compiles): each masked ``ttg.async_copy_global_to_local`` becomes ``global_load_async_to_lds`` and
a ``ds_store`` of its ``other`` value; the loop timing holds every ``ds_*`` of the assembly's
loop body, attached to its op, and names every row by op and source line."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from wgpsim.cli import main
from wgpsim.frontend.amdgcn_loops import loops
from wgpsim.frontend.sources import read_kernel
from wgpsim.kernel.asm_forms import at_width
from wgpsim.kernel.loop.program import loop_program, ttgir_program
from wgpsim.kernel.loop.traces import loop_trace
from wgpsim.kernel.lowering import allocate_kernel, lower_op

HERE = Path(__file__).resolve().parent / "fixtures" / "async_copy"
CASES = sorted(p for p in HERE.iterdir() if p.is_dir() and p.name != "__pycache__")
COPY = "ttg.async_copy_global_to_local"
#: ds_* of the assembly's loop that come from ops wgpsim does not model: none (the blockscale
#: GEMM's convert_layout of its row scales through LDS scratch, kernels.py:122, is lowered).
UNMATCHED: dict[str, Counter] = {}


def _read(case: Path):
    kernel = read_kernel(case)
    asm = next(case.glob("*.amdgcn")).read_text()
    main_loop = max(
        range(len(loops(asm))), key=lambda i: sum(loops(asm)[i].counts(("ds",)).values())
    )
    return kernel, asm, main_loop


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_every_ds_of_the_loop_is_traced_and_the_copies_store_their_other_value(case):
    """Per iteration, the LDS rows are the body's ds_* but the unmatched ones; the copies'
    ds_store are matched to the copy ops, as many as the body holds on the copies' lines."""
    kernel, asm, i = _read(case)
    body = loops(asm)[i]
    prog = loop_program(kernel, asm, loop=i)
    assert Counter(u.mnemonic for u in prog.unmatched) == UNMATCHED.get(case.name, Counter())
    lt = loop_trace(prog, iterations=2)
    rows = (lt.trace.warp == 0) & (lt.iteration == 1) & (lt.what == "lds")
    traced = Counter(lt.mnemonic[rows])
    assert traced + UNMATCHED.get(case.name, Counter()) == Counter(body.counts(("ds",)))
    copies = [op for op in kernel.ops if op.op == COPY and op.loops]
    copy_lines = {(op.loc.short.split(":")[0], op.loc.line) for op in copies}
    stores_there = sum(
        ins.mnemonic.startswith("ds_store")
        for ins in body.instructions
        if ins.kind == "ds" and (ins.src_file, ins.src_line) in copy_lines
    )
    from_copies = np.isin(lt.op_index[rows], [op.index for op in copies])
    assert stores_there > 0 and from_copies.sum() == stores_there
    assert all(m.startswith("ds_store") for m in lt.mnemonic[rows][from_copies])


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_without_assembly_the_ttgir_rule_issues_the_bodys_ds(case):
    """From the TTGIR alone (no assembly), the loop's LDS ops issue what the assembly's body
    holds, the copies' other stores included (the unmatched scratch ds_* aside)."""
    kernel, asm, i = _read(case)
    prog = ttgir_program(kernel)
    issued = Counter(s.op for s in prog.steps if s.what == "lds")
    body = Counter(loops(asm)[i].counts(("ds",)))
    assert issued + UNMATCHED.get(case.name, Counter()) == body


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_a_copys_other_store_writes_each_byte_of_its_tile_once(case):
    """The other-value store of every copy into the loop's buffers writes each byte of the
    copied tile exactly once (all warps, lanes, instructions), inside its buffer."""
    kernel = read_kernel(case)
    alloc = allocate_kernel(kernel)
    for op in (op for op in kernel.ops if op.op == COPY):
        low = lower_op(kernel, op, alloc)
        assert low.modelled, low.note
        width = int(re.search(r"b(\d+)$", low.instruction).group(1)) // 8
        addr = low.lowering.issued.addresses.ravel()
        written = (addr[:, None] + np.arange(width)[None, :]).ravel()
        tile = int(np.prod(op.memdesc.shape)) * op.memdesc.elem_bits // 8
        assert len(written) == len(set(written.tolist())) == tile
        base = alloc.offsets[op.buffer][0]
        assert base <= written.min() and written.max() < base + sum(alloc.sizes[op.buffer])


def test_an_unpaired_assembly_takes_the_layouts_addresses_at_its_width():
    """The fp8 GEMM's loop with every ds_load_2addr_b64 written as the two ds_load_b64 LLVM
    would issue unpaired (the immediates offset0 x 8 and offset1 x 8 of the real compile):
    the A operand's lowering is re-derived at ds_load_b64, every instruction is matched to its
    op by its immediates, and the 16 pairs become 32 single loads."""
    case = HERE / "masked_fp8_s2_w8"
    kernel, asm, i = _read(case)

    def unpair(m: re.Match) -> str:
        dst, addr, o0, o1 = m.group(1), m.group(2), int(m.group(3) or 0), int(m.group(4))
        lo, hi = (int(x) for x in re.match(r"v\[(\d+):(\d+)\]", dst).groups())
        first, second = f"v[{lo}:{lo + 1}]", f"v[{lo + 2}:{hi}]"
        return (
            f"ds_load_b64 {first}, {addr} offset:{o0 * 8}\n"
            f"\tds_load_b64 {second}, {addr} offset:{o1 * 8}"
        )

    pattern = r"ds_load_2addr_b64 (v\[\d+:\d+\]), (v\d+)(?: offset0:(\d+))? offset1:(\d+)"
    unpaired = re.sub(pattern, unpair, asm)
    assert unpaired != asm
    prog = loop_program(kernel, unpaired, loop=i)
    body = loops(unpaired)[i]
    assert body.counts(("ds",))["ds_load_b64"] == 32
    assert not prog.unmatched
    assert not [n for n in prog.notes if "immediates do not match" in n]
    assert any("the assembly holds ds_load_b64" in n for n in prog.notes)
    lds = [s for s in prog.steps if s.what == "lds"]
    assert Counter(s.asm[-1] for s in lds) == Counter(body.counts(("ds",)))


def test_at_width_is_the_paired_accesses_split():
    """The fp32 GEMM's B operand: the ds_load_2addr_b32 LLVM pairs, split into their two
    addresses, are the accesses at_width re-derives at ds_load_b32 (per warp and lane)."""
    kernel = read_kernel(HERE / "masked_fp32_s2")
    alloc = allocate_kernel(kernel)
    op = next(o for o in kernel.ops if o.op == "ttg.local_load" and o.loops and o.name == "%b_93")
    low = lower_op(kernel, op, alloc).lowering
    issued = low.issued
    assert set(issued.ops) == {"ds_load_2addr_b32"}
    pairs = np.concatenate(
        [issued.addresses, issued.addresses + issued.distance[None, :, None]], axis=1
    )
    single = at_width(low, "ds_load_b32")
    assert set(single.ops) == {"ds_load_b32"} and len(single) == 2 * len(issued)
    for w in range(low.num_warps):
        assert sorted(map(tuple, pairs[w].T.tolist())) == sorted(
            map(tuple, single.addresses[w].T.tolist())
        )


def test_loop_table_rows_name_op_and_line_and_unmatched_is_in_the_json(capsys):
    """``wgpsim kernel --loop-timing``: the A and B copies' stores are two rows, every op row
    names its op and source line, the row scales' convert_layout through scratch is a row of
    its own (3 ds_* an iteration, nothing unmatched); ``--json`` lists unmatched ds_*
    (mnemonic, assembly line, source line, reason) and the table shows them as rows (the
    corpus's mx_gemm_fp8: a ds_store_2addr_stride64_b32 LLVM merged from two ops, line 0)."""
    path = str(HERE / "blockscale_fp8_s2")
    assert main(["kernel", path, "--loop-timing", "--iterations", "2"]) == 0
    text = capsys.readouterr().out
    table = text[text.index("\nop ") + 1 :].split("\n\n")[0].splitlines()[1:]
    assert table and all(re.search(r"\(kernels\.py:\d+\)", row) for row in table)
    copy_rows = [r for r in table if "async_copy_global_to_local" in r]
    assert len(copy_rows) == 2
    assert {re.search(r"kernels\.py:(\d+)", r).group(1) for r in copy_rows} == {"118", "119"}
    cvt = [r.split() for r in table if "convert_layout (kernels.py:122)" in r]
    assert len(cvt) == 1 and cvt[0][3:5] == ["ds", "3"]
    assert not [r for r in table if "unmatched" in r.split()[0]]
    mx = str(Path(__file__).resolve().parent / "corpus" / "fixtures" / "mx_gemm_fp8")
    assert main(["kernel", mx, "--loop-timing", "--iterations", "2"]) == 0
    text = capsys.readouterr().out
    table = text[text.index("\nop ") + 1 :].split("\n\n")[0].splitlines()[1:]
    assert [r.split()[0:3] for r in table if "unmatched" in r.split()[0]] == [
        ["unmatched", "ds_store_2addr_stride64_b32", "(gluon_access.py:0)"]
    ]
    assert main(["kernel", mx, "--json", "--iterations", "2"]) == 0
    unmatched = json.loads(capsys.readouterr().out)["loop_timing"]["unmatched"]
    assert [u["mnemonic"] for u in unmatched] == ["ds_store_2addr_stride64_b32"]
    asm = (Path(mx) / "kernel.amdgcn").read_text().splitlines()
    for u in unmatched:
        assert set(u) == {"mnemonic", "line", "loc", "reason"}
        assert u["loc"] == "gluon_access.py:0" and "no source line" in u["reason"]
        assert asm[u["line"] - 1].split()[0] == u["mnemonic"]
