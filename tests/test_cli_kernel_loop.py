"""``wgpsim kernel PATH --timeline out.json --timeline-png out.png --iterations N`` on the AMD
blog's Part II GEMM (real Triton 3.9.0 gfx1250 compiles, examples/kernels/): the loop timing
section, its JSON, the Chrome trace against the trace-event format, and the blog's claim that
the partitioned layouts remove the pairs' partition conflicts (so separating partitions saves
nothing there) while the standard layouts pay for them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_loop_timing import check_chrome_trace

from wgpsim.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernels"


@pytest.fixture(scope="module")
def gemm(tmp_path_factory):
    """Both GEMMs through the CLI with --json, 3 iterations; the payloads and files."""
    out = {}
    for name in ("gemm_tdm_standard", "gemm_tdm_partitioned"):
        d = tmp_path_factory.mktemp(name)
        args = ["kernel", str(EXAMPLES / name), "--json", "--iterations", "3"]
        args += ["--timeline", str(d / "t.json"), "--timeline-png", str(d / "t.png")]
        out[name] = (args, d)
    return out


def _run(capsys, args):
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def test_gemm_loop_timing_json_and_files(gemm, capsys):
    std = _run(capsys, gemm["gemm_tdm_standard"][0])
    part = _run(capsys, gemm["gemm_tdm_partitioned"][0])
    for payload, (_, d) in ((std, gemm["gemm_tdm_standard"]), (part, gemm["gemm_tdm_partitioned"])):
        lt = payload["loop_timing"]
        assert lt["iterations"] == 3 and lt["steady_from"] == 1 and lt["num_warps"] == 4
        assert lt["sentence"].startswith("LDS is exposed for ")
        assert set(lt["what_ifs"]) == {"ideal_banks", "separate_partitions", "no_lds"}
        loads = [op for op in lt["ops"] if op["kind"] == "ds"]
        copies = [op for op in lt["ops"] if op["kind"] == "tdm"]
        # the loop's ds ops are the two dot-operand local_loads, 16 instructions each per
        # iteration (the assembly's loop body: 16 ds_load_b128 + 16 ds_load_tr16_b128)
        assert sorted(op["instructions"] for op in loads) == [16, 16]
        # the TDM copies of A (128x64 fp16) and B (64x128): 16 KiB each per iteration, over 4
        # warps 4 KiB = 16 rows of 256 B per warp
        assert sorted(op["instructions"] for op in copies) == [16, 16]
        assert sorted(payload["written"]) == sorted([str(d / "t.json"), str(d / "t.png")])
        check_chrome_trace(json.loads((d / "t.json").read_text()))
        assert (d / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        # neither layout's reads have bank conflicts (the AMD blog: both are conflict-free)
        assert all(op["bank_conflict_cycles"] == 0 for op in loads)
        # the bound: infinitely fast LDS is never slower
        assert lt["what_ifs"]["no_lds"]["cycles_per_iteration"] <= lt["cycles_per_iteration"]
    # the partitioned layouts keep the pairs' reads apart (the blog); what stalls is left to
    # the reads meeting the TDM's writes, far less than the standard layouts' stalls
    stalls = {
        k: sum(op["partition_stall_cycles"] for op in p["loop_timing"]["ops"] if op["kind"] == "ds")
        for k, p in (("std", std), ("part", part))
    }
    assert stalls["part"] < stalls["std"] / 10
    sep = {
        k: p["loop_timing"]["what_ifs"]["separate_partitions"]["saves"]
        for k, p in (("std", std), ("part", part))
    }
    assert 0 < sep["part"] < sep["std"]
    assert part["loop_timing"]["lds_exposed"] < std["loop_timing"]["lds_exposed"]


def test_gemm_loop_timing_text(capsys):
    assert main(["kernel", str(EXAMPLES / "gemm_tdm_standard"), "--loop-timing"]) == 0
    out = capsys.readouterr().out
    assert "loop .LBB0_5 (assembly): 4 iterations x 4 warps timed" in out
    assert "separating partitions would save" in out
    for name in ("ideal_banks", "separate_partitions", "no_lds"):
        assert name in out


def test_bad_iterations_is_one_line(capsys):
    args = ["kernel", str(EXAMPLES / "gemm_tdm_standard"), "--iterations", "0"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--iterations 0" in err


def test_readme_quotes_the_sentences_the_tool_prints(capsys):
    """docs/USAGE.md's GEMM story quotes the loop-timing sentence of both kernels as printed."""
    readme = (EXAMPLES.parents[1] / "docs" / "USAGE.md").read_text()
    for name in ("gemm_tdm_standard", "gemm_tdm_partitioned"):
        assert main(["kernel", str(EXAMPLES / name), "--loop-timing"]) == 0
        out = capsys.readouterr().out
        sentence = next(line for line in out.splitlines() if line.startswith("LDS is exposed"))
        assert f"> {sentence}\n" in readme, name
