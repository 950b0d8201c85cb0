"""One regression case per finding of issue 24 about reading (silent wrong results, unbounded
memory, tracebacks, inputs taken as given), each run as a user runs the CLI; what a run leaves
behind and how it ends on a signal are in ``test_regressions_24_outputs.py``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_runner import run_child, run_cli

ROOT = Path(__file__).resolve().parents[2]


# -- 1. a silent wrong result: cycle counts beyond any real measurement ----------------------
@pytest.mark.parametrize(
    "cell, shown",
    [
        (str(2**63), f"'{2**63}' is out of range (valid: 0..{2**48})"),
        ("1e30", "'1e30' is out of range"),
        ("inf", "'inf' is out of range"),
        ("9" * 400, "an integer of 400 digits is out of range"),
        ("-3", "'-3' is out of range"),
        ("6.5", "'6.5' is not a whole number"),
    ],
)
@pytest.mark.parametrize("verb", [["compare"], ["calibrate", "fit"]])
def test_a_cycle_count_out_of_range_is_refused(kit, verb, cell, shown):
    (kit / "m.csv").write_text(f"probe,warp,cycles\nbanks_s4,0,60\nbanks_s4,0,{cell}\n")
    outcome = run_cli(*verb, kit / "m.csv", "--manifest", kit / "manifest.json")
    outcome.assert_one_line("m.csv: row 3 column 'cycles'", shown)


def test_a_warp_of_1e30_is_refused(kit):
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,1e30,60\n")
    run_cli("calibrate", "fit", kit / "m.csv", "--manifest", kit / "manifest.json").assert_one_line(
        "m.csv: row 2 column 'warp'", "'1e30' is out of range (valid: 0..65535)"
    )


def _proton(dur: str) -> str:
    return (
        '{"traceEvents": [{"ph": "X", "name": "banks_s4", "cat": "banks_s4", '
        f'"pid": "banks_s4 Core0 CTA0", "tid": "warp 0 (line 0)", "ts": 0, "dur": {dur}}}]}}'
    )


@pytest.mark.parametrize(
    "text, message",
    [
        (_proton("Infinity"), "Infinity is not a JSON number"),
        (_proton("NaN"), "NaN is not a JSON number"),
        (_proton("1e300"), "'dur' 1e+300 is out of range"),
        (_proton("9" * 400), "an integer of 400 digits"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (_proton("0.062").replace("warp 0", "warp " + "9" * 30), "is out of range"),
    ],
)
def test_a_bad_proton_trace_is_one_line(kit, text, message):
    (kit / "p.json").write_text(text)
    run_cli("compare", kit / "p.json").assert_one_line("p.json", message)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda m: {**m, "version": True}, "manifest version True, this wgpsim reads 1"),
        (lambda m: {**m, "version": 10**400}, "an integer of 401 digits"),
        (lambda m: {**m, "probes": json.loads("[" * 50 + "]" * 50)}, "probes[0]"),
    ],
)
def test_a_bad_manifest_is_one_line(kit, edit, message):
    manifest = json.loads((kit / "manifest.json").read_text())
    (kit / "manifest.json").write_text(json.dumps(edit(manifest)))
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    run_cli("compare", kit / "m.csv").assert_one_line("manifest.json", message)


def test_a_deeply_nested_manifest_is_one_line(kit):
    (kit / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    run_cli("compare", kit / "m.csv").assert_one_line("manifest.json", "nested too deeply")


def test_a_counter_of_infinity_is_refused(kit):
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    (kit / "c.csv").write_text(
        "Kernel_Name,Counter_Name,Counter_Value\nbanks_s4,SQ_INSTS_LDS,inf\n"
    )
    run_cli("compare", kit / "m.csv", "--counters", kit / "c.csv").assert_one_line(
        "c.csv", "'SQ_INSTS_LDS'", "is out of range (valid: 0..2**53)"
    )


def test_a_long_probe_name_is_not_echoed(kit):
    name = "x" * 200_000
    (kit / "m.csv").write_text(f"probe,warp,cycles\n{name},0,60\n")
    outcome = run_cli("compare", kit / "m.csv")
    outcome.assert_one_line("a string of 200000 characters is not in the manifest")
    assert len(outcome.err) < 300


# -- 3. unbounded memory from small inputs: refused before anything is built ------------------
SWIZZLED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
MATMUL = ROOT / "tests" / "corpus" / "fixtures" / "matmul_bt_fp16" / "kernel.ttgir"


def _bounded(*argv: object, cwd: Path) -> subprocess.CompletedProcess:
    """``wgpsim ARGV`` in a child limited to 4 GiB of address space and 120 s."""
    return run_child(*argv, cwd=cwd, timeout=120)


def _one_line(done: subprocess.CompletedProcess, *fragments: str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.startswith("wgpsim: error: ") and done.stderr.count("\n") == 1, done.stderr
    for fragment in fragments:
        assert fragment in done.stderr, done.stderr


def test_lower_refuses_half_a_million_warps_before_building_addresses(tmp_path):
    dst = (
        "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], "
        "warpsPerCTA = [8, 65536], order = [1, 0]}>"
    )
    done = _bounded("lower", "--shared", SWIZZLED, "--dst", dst, "--shape", "128x256",
                    "--dtype", "fp16", cwd=tmp_path)  # fmt: skip
    _one_line(done, "warp count 524,288: a CTA has 1..32 warps")


@pytest.mark.parametrize("block", ["1024x1024x16", "512x512x64"])
def test_search_says_how_large_and_refuses_before_it_starts(tmp_path, block):
    done = _bounded("search", "--block", block, "--warps", "4", cwd=tmp_path)
    _one_line(done, f"--block: {block} on 4 warps is", "ctaLayouts", "(400,000,000)")


@pytest.mark.parametrize("warps", ["3", "4294967296", "64", "9" * 30])
def test_a_module_of_odd_num_warps_is_refused(tmp_path, warps):
    module = tmp_path / "k.ttgir"
    module.write_text(
        MATMUL.read_text().replace('"ttg.num-warps" = 4', f'"ttg.num-warps" = {warps}')
    )
    done = _bounded("kernel", module, cwd=tmp_path)
    _one_line(done, "k.ttgir: module attribute 'ttg.num-warps'")


def test_a_kwidth_of_2_to_the_32_is_refused(tmp_path):
    module = tmp_path / "k.ttgir"
    module.write_text(MATMUL.read_text().replace("kWidth = 8", f"kWidth = {2**32}"))
    _one_line(_bounded("kernel", module, cwd=tmp_path), "k.ttgir:", "field 'kWidth' 4294967296")
    run_cli(
        "layout", "show",
        "#ttg.dot_op<{opIdx = 0, parent = #ttg.amd_wmma<{version = 3, isTranspose = false, "
        f"ctaLayout = {{warp = [[1, 0]]}}, instrShape = [16, 16, 32]}}>, kWidth = {2**32}}}>",
        "--shape", "64x64",
    ).assert_one_line("field 'kWidth' 4294967296 is out of range (valid: 1..64")  # fmt: skip


def test_a_parquet_delay_on_warp_2_to_the_31_is_refused_as_in_json_lines(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from wgpsim.trace.io import write_trace
    from wgpsim.trace.trace import TraceBuilder

    b = TraceBuilder(num_warps=1)
    b.delay(0, 10)
    write_trace(b.build(), tmp_path / "one.parquet")
    table = pq.read_table(tmp_path / "one.parquet")
    table = table.set_column(0, "warp", pa.array([2**31 - 1], type=pa.int32()))
    meta = {k: v for k, v in table.schema.metadata.items() if k != b"wgpsim.num_warps"}
    pq.write_table(table.replace_schema_metadata(meta), tmp_path / "far.parquet")
    _one_line(
        _bounded("replay", "far.parquet", cwd=tmp_path),
        "far.parquet: row 0: field 'warp': 2147483647 is too large (at most 65535)",
    )
    (tmp_path / "far.jsonl").write_text(f'{{"warp": {2**31 - 1}, "op": "delay", "cycles": 10}}\n')
    run_cli("replay", tmp_path / "far.jsonl").assert_one_line("'warp': 2147483647 is too large")


@pytest.mark.parametrize(
    "argv",
    [
        ["kernel", "/dev/zero"],
        ["compare", "m.csv", "--manifest", "/dev/zero"],
        ["compare", "/dev/zero", "--manifest", "manifest.json"],
        ["compare", "m.csv", "--manifest", "manifest.json", "--counters", "/dev/zero"],
        ["kernel", "endless.ndjson"],
    ],
)
def test_every_reader_stops_at_8_mib(kit, argv):
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    with (kit / "endless.ndjson").open("w") as f:
        f.write("x" * (9 << 20))
    _one_line(_bounded(*argv, cwd=kit), "8 MiB")


# -- 4. replay of a trace with no LDS instruction (a regression) ------------------------------
@pytest.mark.parametrize(
    "text",
    ["", "# a comment only\n", '{"warp": 0, "op": "delay", "cycles": 10}\n'],
    ids=["empty", "comments", "delays"],
)
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_replay_of_a_trace_without_lds_instructions_succeeds(tmp_path, text, json_flag):
    (tmp_path / "t.jsonl").write_text(text)
    outcome = run_cli("replay", tmp_path / "t.jsonl", *json_flag)
    assert outcome.code == 0 and outcome.err == "", outcome.err
    assert "instruction" in outcome.out or json_flag


# -- 5. tracebacks: assembly numbers past 64 bits, a block smaller than one instruction -------
PLAIN = ROOT / "tests" / "corpus" / "fixtures" / "lds_bandwidth_plain"


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("s_wait_dscnt 0x0", "s_wait_dscnt 0xffffffffffffffff",
         "s_wait_dscnt count '0xffffffffffffffff' is out of range (valid: 0..65535"),
        ("v1 offset:512\n", "v1 offset:99999999999999999999999\n",
         "ds_load_b128 offset '99999999999999999999999' is out of range (valid: 0..65535"),
        ("v1 offset:512\n", "v1 offset:65536\n", "offset '65536' is out of range"),
    ],
)  # fmt: skip
def test_kernel_loop_timing_with_numbers_past_their_field(tmp_path, old, new, message):
    for name in ("kernel.ttgir", "kernel.alloc.mlir"):
        (tmp_path / name).write_text((PLAIN / name).read_text())
    asm = (PLAIN / "kernel.amdgcn").read_text()
    assert old in asm
    (tmp_path / "kernel.amdgcn").write_text(asm.replace(old, new, 1))
    run_cli("kernel", tmp_path / "kernel.ttgir", "--loop-timing").assert_one_line(
        "assembly line", message
    )


@pytest.mark.parametrize(
    "block, message",
    [
        ("[1, 1, 1]", "block M 1 must be a power-of-two multiple of the instruction tile 16"),
        ("[128, 128, 48]", "block K 48 must be a power of two"),
    ],
)
def test_a_gemm_block_smaller_than_an_instruction_is_one_line(tmp_path, block, message):
    config = ROOT / "configs" / "gemm_128x128.yaml"
    outcome = run_cli("run", config, "--set", f"block={block}", "--out", tmp_path / "o")
    outcome.assert_one_line("--set block", message)
    assert not (tmp_path / "o").exists()


# -- 7. a YAML key given twice is an error naming it and both lines ---------------------------
def test_a_duplicate_key_in_a_config_is_refused(tmp_path):
    config = tmp_path / "lds.yaml"
    config.write_text("kind: lds_bandwidth\nwarps: 4\nburst_lengths: [4, 8]\nwarps: 8\n")
    run_cli("run", config, "--out", tmp_path / "o").assert_one_line(
        "lds.yaml: line 4: key 'warps' given twice (first at line 2)"
    )
    assert not (tmp_path / "o").exists()


def test_a_duplicate_key_in_a_hardware_file_is_refused(tmp_path):
    hw = (ROOT / "configs" / "mi450.yaml").read_text()
    assert "  lds_latency: " in hw
    lines = hw.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("  lds_latency: "))
    lines.insert(at + 1, "  lds_latency: 1\n")
    (tmp_path / "hw.yaml").write_text("".join(lines))
    trace = ROOT / "examples" / "traces" / "bank_conflict.jsonl"
    run_cli("replay", trace, "--hw", tmp_path / "hw.yaml").assert_one_line(
        f"hw.yaml: line {at + 2}: key 'lds_latency' given twice (first at line {at + 1})"
    )


def test_a_merge_may_still_override_a_key(tmp_path):
    config = tmp_path / "lds.yaml"
    config.write_text(
        "base: &b {warps: 4}\nkind: lds_bandwidth\nburst_lengths: [4, 8]\nreport_burst: 8\n"
        "<<: *b\nwarps: 2\n"
    )
    outcome = run_cli("run", config, "--out", tmp_path / "o", "--workers", "1")
    assert "given twice" not in outcome.err


# -- 8. inputs taken as given ------------------------------------------------------------------
def test_a_negative_shared_in_the_metadata_is_refused(tmp_path):
    (tmp_path / "kernel.ttgir").write_text((PLAIN / "kernel.ttgir").read_text())
    (tmp_path / "kernel.json").write_text('{"name": "k", "shared": -4096}')
    run_cli("kernel", tmp_path / "kernel.ttgir").assert_one_line(
        "kernel.ttgir: metadata 'shared' -4096 is out of range (valid: 0..327680"
    )


def test_a_symlink_loop_is_called_one(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "k.ttgir").symlink_to("k.ttgir")
    (cache / "a.yaml").symlink_to("b.yaml")
    (cache / "b.yaml").symlink_to("a.yaml")
    (cache / "t.jsonl").symlink_to("gone.jsonl")
    run_cli("kernel", cache).assert_one_line("k.ttgir: a symlink loop")
    run_cli("kernel", cache / "k.ttgir").assert_one_line("k.ttgir: a symlink loop")
    run_cli("run", cache / "a.yaml").assert_one_line("a.yaml: cannot read", "a symlink loop")
    run_cli("replay", cache / "t.jsonl").assert_one_line("a symbolic link to 'gone.jsonl'")


def test_an_output_path_that_is_a_directory_is_named(tmp_path, kit):
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    (kit / "c.png").mkdir()
    outcome = run_cli("compare", kit / "m.csv", "--figure", kit / "c.png")
    outcome.assert_one_line(f"{kit / 'c.png'}: is a directory, not a file")
    assert ".c.png." not in outcome.err  # never the temporary file


@pytest.mark.parametrize("size", [10_000, 200_000])
@pytest.mark.parametrize("column", ["warp", "cycles"])
def test_a_huge_csv_cell_is_described_not_echoed(kit, size, column):
    cell = "x" * size if column == "warp" else "7" * size
    row = f"banks_s4,{cell},60" if column == "warp" else f"banks_s4,0,{cell}"
    (kit / "m.csv").write_text(f"probe,warp,cycles\n{row}\n")
    outcome = run_cli("compare", kit / "m.csv")
    outcome.assert_one_line(f"row 2 column '{column}'")
    assert len(outcome.err) < 300, outcome.err[:300]


def test_a_counter_of_400_digits_is_refused(kit):
    """Found by tests/fuzz/test_fuzz_surfaces.py: pandas reads it as a Python int, whose float()
    overflowed (a traceback)."""
    (kit / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    (kit / "c.csv").write_text(
        f"Kernel_Name,Counter_Name,Counter_Value\nbanks_s4,SQ_INSTS_LDS,{'9' * 400}\n"
    )
    run_cli("compare", kit / "m.csv", "--counters", kit / "c.csv").assert_one_line(
        "c.csv", "is out of range (valid: 0..2**53)"
    )
