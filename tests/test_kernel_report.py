"""`wgpsim kernel` on real Triton 3.9.0 gfx1250 compiles (examples/kernels): per op the
instructions and counts of the assembly, buffers at Triton's offsets, lds_bytes = ttg.shared;
from the cache .ttgir (wgpsim allocates) and from the post-allocation dump (the module's)."""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from wgpsim.cli import main
from wgpsim.frontend.amdgcn import COUNTED
from wgpsim.frontend.amdgcn_loops import stream
from wgpsim.frontend.model import SCRATCH_LDS_OPS
from wgpsim.frontend.ttgir import read_ttgir_file
from wgpsim.kernel.report import kernel_report

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernels"
DUMPS = sorted(p for p in EXAMPLES.iterdir() if p.is_dir())
#: Kernels where LLVM's line info moves a whole op's instructions to another line (or line 0):
#: the epilogue's loads of the matmuls and of the attention loop. Their totals are checked.
LINES_MOVED = {"matmul", "matmul_fp32", "matmul_fp8", "attention"}
#: LLVM pairs two b32/b64 loads of a lane into ds_load_2addr_* here (issue 11 item 1).
PAIRED = {"matmul_fp32", "matmul_fp8"}


def _stem(d: Path) -> str:
    return next(d.glob("*.ttgir")).name.split(".")[0]


@pytest.fixture(scope="module", params=DUMPS, ids=lambda d: d.name)
def reports(request):
    d = request.param
    stem = _stem(d)
    from_cache = kernel_report(d / f"{stem}.ttgir")  # wgpsim allocates
    from_post = kernel_report(d / f"{stem}.post.mlir")  # the module's offsets
    return d, from_cache, from_post


def _by_kernel_line(asm: str) -> dict[int, dict[str, int]]:
    """ds_*/tensor_* per kernels.py line; an inlined library function's (tl.sum's
    standard.py) counts on the kernels.py line that called it (the ``.loc`` comment's
    ``@[ kernels.py:N:C ]``)."""
    out: dict[int, Counter] = {}
    for kind, instr, _ in stream(asm):
        if kind != "instr" or not instr.mnemonic.startswith(COUNTED):
            continue
        line = next((n for f, n in instr.frames if f == "kernels.py"), None)
        if line is not None:  # its own line, or the innermost kernels.py frame that called it
            out.setdefault(line, Counter())[instr.mnemonic] += 1
    return {k: dict(v) for k, v in out.items()}


def test_instructions_equal_the_assembly(reports, request):
    """Per source line (totals where LLVM moves lines), the LDS ops' instructions per warp are
    the assembly's, scratch ops wgpsim lowers (convert_layout) included; lines of scratch ops
    it does not lower yet are left out and listed as not modelled."""
    d, _, rep = reports
    asm = _by_kernel_line((d / f"{_stem(d)}.amdgcn").read_text())
    lowered = {op["loc"] for op in rep.ops if op["op"] in SCRATCH_LDS_OPS and op["modelled"]}
    scratch = {b["loc"] for b in rep.buffers if b["kind"] == "scratch"} - lowered
    assert scratch <= {n["loc"] for n in rep.not_modelled}
    asm = {k: v for k, v in asm.items() if f"kernels.py:{k}" not in scratch}
    copies = "the copy engine writes the LDS"  # async copies: not LDS instructions of a warp
    access = [op for op in rep.ops if op["op"] not in SCRATCH_LDS_OPS or op["modelled"]]
    assert all(op["instructions_per_warp"] > 0 for op in access if copies not in op["note"])
    total: Counter = Counter()
    for counts in asm.values():
        total.update(counts)
    assert rep.instruction_totals() == dict(total)
    if d.name in LINES_MOVED:
        return
    per_line: dict[int, Counter] = {}
    for op in access:
        per_line.setdefault(op["line"], Counter()).update(op["instructions"])
    assert {k: dict(v) for k, v in per_line.items()} == asm


def test_ops_checked_count():
    """How many ops these tests hold against the assembly: 38 on the fp16 kernels, 24 more
    on the fp32/fp8 matmuls (their paired forms), 2 scratch ops not modelled."""
    ops = {
        d.name: sum(
            op["op"] not in SCRATCH_LDS_OPS for op in kernel_report(d / f"{_stem(d)}.post.mlir").ops
        )
        for d in DUMPS
    }
    assert sum(n for k, n in ops.items() if k not in PAIRED) == 38
    assert sum(ops[k] for k in PAIRED) == 24


def test_wgpsim_allocation_equals_triton(reports):
    d, rep, post = reports
    module = read_ttgir_file(d / f"{_stem(d)}.post.mlir")
    want = {b.name: list(b.offsets) for b in module.buffers if b.kind == "explicit"}
    mine = {b["name"]: b["wgpsim_offsets"] for b in rep.buffers if b["kind"] == "explicit"}
    assert mine == want  # allocated from the liveness in the cache .ttgir
    assert rep.extras["offsets_from"] == "wgpsim" and post.extras["offsets_from"] == "module"
    assert rep.ttg_shared == module.ttg_shared  # from the metadata json beside the .ttgir
    # the directory: the cache .ttgir's liveness, the post-allocation module's scratch sizes
    merged = kernel_report(d)
    want_all = {b.name: list(b.offsets) for b in module.buffers}
    assert {b["name"]: b["wgpsim_offsets"] for b in merged.buffers} == {
        (n if not n.startswith("scratch:") else b["name"]): v
        for (n, v), b in zip(want_all.items(), merged.buffers, strict=True)
    }
    assert merged.lds_bytes == merged.ttg_shared and merged.lds_bytes_match
    if not any(b["kind"] == "scratch" for b in merged.buffers):
        assert rep.lds_bytes == rep.ttg_shared
    # the post-allocation dump gives the same per-op instructions
    assert [op["instructions"] for op in post.ops] == [op["instructions"] for op in rep.ops]


def test_attention_v_loads():
    """The AMD blog's attention example (tutorial 06, fp16, 128/128/256, 8 warps): 128
    ds_load_tr16_b128 for the V operand per loop iteration."""
    rep = kernel_report(EXAMPLES / "attention")
    (v,) = [op for op in rep.ops if op["loop_depth"] == 1 and op["transposed"]]
    assert v["instructions"] == {"ds_load_tr16_b128": 128} and v["eligibility"] == "valid"
    assert rep.warps == 8


def test_bandwidth_microbenchmark_sizes_and_co_location():
    plain = kernel_report(EXAMPLES / "lds_bandwidth_plain")
    part = kernel_report(EXAMPLES / "lds_bandwidth_partitioned")
    assert (plain.lds_bytes, part.lds_bytes) == (65536, 98304)  # the AMD blog: 64 / 96 KiB
    (load_plain,) = [op for op in plain.ops if op["op"] == "ttg.local_load"]
    (load_part,) = [op for op in part.ops if op["op"] == "ttg.local_load"]
    assert load_plain["co_located"] and load_plain["pair_partitions"] == {"A": [0], "B": [0]}
    assert not load_part["co_located"] and load_part["pair_partitions"] == {"A": [0], "B": [1]}
    assert load_plain["partition_stall_cycles"] > 0 == load_part["partition_stall_cycles"]
    assert load_part["lds_cycles"] < load_plain["lds_cycles"]
    assert load_plain["bank_conflict_cycles"] == 0 and load_plain["SQ_LDS_IDX_ACTIVE"] == 4 * 64


def test_gemm_partitioned_layouts_remove_partition_stalls():
    std = kernel_report(EXAMPLES / "gemm_tdm_standard")
    part = kernel_report(EXAMPLES / "gemm_tdm_partitioned")
    loads = lambda r: [op for op in r.ops if op["op"] == "ttg.local_load"]  # noqa: E731
    assert all(op["partition_stall_cycles"] > 0 for op in loads(std))
    assert all(op["partition_stall_cycles"] == 0 for op in loads(part))
    assert [op["instructions"] for op in part.ops if op["op"].startswith("amdg.async_tdm")] == [
        {"tensor_load_to_lds": 1}
    ] * 4


# ---------------------------------------------------------------- the CLI
def test_json_schema(capsys):
    assert main(["kernel", str(EXAMPLES / "gemm_tdm_standard"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("kernel", "warps", "lds_bytes", "ttg_shared", "buffers", "ops", "not_modelled"):
        assert key in data
    assert set(data["buffers"][0]) >= {"name", "offsets", "bytes"}
    op_keys = {"index", "op", "name", "loc", "instructions", "bank_conflict_cycles",
               "partition_stall_cycles", "lds_cycles"}  # fmt: skip
    assert all(set(op) >= op_keys for op in data["ops"])
    assert [op["index"] for op in data["ops"]] == list(range(len(data["ops"])))
    assert data["buffers"][1]["offsets"] == [36848]
    assert all(set(n) >= {"op", "loc"} for n in data["not_modelled"])
    src = (EXAMPLES / "kernels.py").read_text().splitlines()
    line = 1 + src.index("        a = a_smem.index(s).load(dot_a)")
    assert data["ops"][4]["loc"] == f"kernels.py:{line}" and data["kernel"] == "gemm_tdm"


@pytest.mark.parametrize("asked", [[], ["--engine", "auto"], ["--engine", "des"]])
def test_json_names_the_engine_that_ran(capsys, asked):
    """``engine`` (the report's and its loop's) is the engine that ran, never ``auto``."""
    d = str(EXAMPLES / "lds_bandwidth_plain")
    assert main(["kernel", d, "--json", "--loop-timing", *asked]) == 0
    data = json.loads(capsys.readouterr().out)
    ran = (data["engine"], data["loop_timing"]["engine"])
    assert ran == ("des", "des") if "des" in asked else set(ran) <= {"des", "fast"}


def test_text_csv_and_plot(tmp_path, capsys):
    csv, png = tmp_path / "ops.csv", tmp_path / "map.png"
    d = EXAMPLES / "lds_bandwidth_plain"
    assert main(["kernel", str(d), "--csv", str(csv), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "LDS 65536 B (wgpsim) vs ttg.shared 65536 B" in out and "32 x ds_load_b128" in out
    assert png.stat().st_size > 0
    assert csv.read_text().splitlines()[0].startswith("index,op,name,loc")


def test_a_module_without_ttg_shared_says_so(tmp_path, capsys):
    """The cache's ``.ttgir`` alone (no ``matmul.json``, no post-allocation dump) has no
    ``ttg.shared``: the header says so in words, not ``ttg.shared - B``."""
    (tmp_path / "matmul.ttgir").write_text((EXAMPLES / "matmul" / "matmul.ttgir").read_text())
    assert "ttg.shared =" not in (tmp_path / "matmul.ttgir").read_text()
    assert main(["kernel", str(tmp_path)]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert head.startswith("kernel matmul: 4 warps, LDS 71632 B (wgpsim); ttg.shared: not in the")
    rep = kernel_report(tmp_path)
    assert rep.ttg_shared is None and "(ttg.shared: not in the module)" in repr(rep)


def test_allocation_notes_are_in_the_text_too(tmp_path, capsys):
    """A result tensor whose rank disagrees with its layout (column_sum's convert_layout to a
    1-D tensor with the 2-D ``#blocked``): the scratch wgpsim cannot size is a note in the text
    report as in ``--json``, and the header says why there is no LDS total."""
    text = (EXAMPLES / "column_sum" / "column_sum.ttgir").read_text()
    old = "parent = #blocked}>> -> tensor<64xf32, #blocked1>"  # the convert_layout's result
    assert text.count(old) == 1
    bad = text.replace(old, "parent = #blocked}>> -> tensor<64xf32, #blocked>")
    (tmp_path / "column_sum.ttgir").write_text(bad)
    assert main(["kernel", str(tmp_path), "--json"]) == 0
    notes = json.loads(capsys.readouterr().out)["allocation_notes"]
    assert notes[0] == "scratch:%2: scratch not sized: blocked: shape [64] has rank 1, expected 2"
    assert main(["kernel", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line for line in out if line.startswith("allocation note: ")] == [
        f"allocation note: {n}" for n in notes
    ]
    assert "LDS not sized (wgpsim: see the allocation notes)" in out[0]


def test_narrow_terminal_keeps_every_column(capsys, monkeypatch):
    """At ``COLUMNS=80`` the op and buffer tables split into column groups (the ``#`` / buffer
    column repeated); every column and every cell of the whole-row form stays, whole."""
    d = str(EXAMPLES / "gemm_tdm_standard")
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["kernel", d]) == 0
    wide = capsys.readouterr().out.splitlines()
    heads = [line for line in wide if line.startswith(("#  line", "buffer  "))]
    assert len(heads) == 2 and max(map(len, wide)) > 80  # the whole-row form does not fit
    columns = [c for line in heads for c in re.split(r" {2,}", line)]
    cells = {c for line in wide if re.match(r"\d+  |%", line) for c in re.split(r" {2,}", line)}
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["kernel", d]) == 0
    narrow = capsys.readouterr().out.splitlines()
    assert max(map(len, narrow)) <= 80
    shown = {c for line in narrow for c in re.split(r" {2,}", line)}
    assert set(columns) <= shown and "src -> dst" in columns and "stall" in columns
    assert cells <= shown and "#shared1 -> dot_op(opIdx=1, parent=#mma, kWidth=8)" in cells


BAD = [
    ("truncated", lambda t: t[: t.index("tt.return")], "truncated"),
    ("unknown op", lambda t: t.replace("ttg.local_load", "ttg.local_lode", 1), "unknown op"),
    ("unknown attribute", lambda t: t.replace("#ttg.blocked", "#ttg.blokked", 1), "unknown attr"),
    ("non-AMD target", lambda t: t.replace('"hip:gfx1250"', '"cuda:100"'), "not an AMD target"),
]


@pytest.mark.parametrize("name,mutate,want", BAD, ids=[b[0] for b in BAD])
def test_bad_modules_one_line_exit_2(tmp_path, capsys, name, mutate, want):
    text = (EXAMPLES / "lds_bandwidth_plain" / "lds_bandwidth.ttgir").read_text()
    bad = tmp_path / "bad.ttgir"
    bad.write_text(mutate(text))
    assert main(["kernel", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and want in err and f"{bad}:" in err


def test_empty_directory_is_one_line(tmp_path, capsys):
    assert main(["kernel", str(tmp_path)]) == 2
    assert "no *.ttgir" in capsys.readouterr().err


def test_report_sets_its_instructions_beside_the_assembly():
    rep = kernel_report(EXAMPLES / "gemm_tdm_partitioned")
    asm = rep.extras["assembly"]
    assert asm["matching_lines"] == len(asm["lines"]) == 8
    assert asm["totals"] == rep.instruction_totals()
    moved = kernel_report(EXAMPLES / "matmul").extras["assembly"]  # LLVM moved a load's line
    assert moved["matching_lines"] < len(moved["lines"])
    assert kernel_report(EXAMPLES / "matmul").instruction_totals() == moved["totals"]
