"""``wgpsim lower`` as a user runs it: decision, reason, counts, simulation, plot, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from wgpsim.cli import main

SHARED_N = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
SHARED_M = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>"
V_OPERAND = (
    "#ttg.dot_op<{opIdx = 1, parent = #ttg.amd_wmma<{version = 3, isTranspose = false, "
    "warpsPerCTA = [8, 1], instrShape = [16, 16, 32]}>, kWidth = 8}>"
)
TOY = (
    "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], "
    "lane = [[1, 0], [2, 0], [4, 0], [8, 0], [16, 0]], warp = [], block = []}>"
)
TOY_SWAPPED = TOY.replace("lane = [[1, 0], [2, 0]", "lane = [[2, 0], [1, 0]")


def _run(capsys, *argv):
    code = main(["lower", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _attention(capsys, *extra):
    return _run(
        capsys,
        *("--shared", SHARED_N, "--dst", V_OPERAND, "--shape", "128x256", "--dtype", "fp16"),
        *("--warps", "8", "--json", "--simulate", *extra),
    )


def test_attention_example_json_and_simulation(capsys):
    code, out, err = _attention(capsys)
    assert code == 0, err
    tr = json.loads(out)
    assert tr["counts_per_warp"] == {"ds_load_tr16_b128": 128}
    code, out, _ = _attention(capsys, "--no-transpose")
    plain = json.loads(out)
    assert plain["counts_per_warp"] == {"ds_load_u16": 1024}
    for res in (tr, plain):
        sim = res["simulation"]
        assert len(sim["lds_cycles_per_warp"]) == 8
        assert sim["bytes"] == 8 * 128 * 256 * 2  # every warp loads the whole V tile
        assert min(sim["lds_cycles_per_warp"]) > 0
    # a tr16 instruction is 2 passes of 16 lanes; a u16 instruction one pass of 32
    assert tr["simulation"]["passes"] == 8 * 128 * 2
    assert plain["simulation"]["passes"] == 8 * 1024


def test_text_output_names_decision_reason_counts(capsys):
    code, out, _ = _run(
        capsys, "--shared", SHARED_M, "--dst", TOY, "--shape", "32x8", "--dtype", "bf16"
    )
    assert code == 0
    assert "decision: ds_load_tr16_b128" in out and "eligibility: valid" in out
    assert "per warp: 1 x ds_load_tr16_b128 in the assembly (8 bf16 elements per lane)" in out
    assert "register=[[32], [64], [128]]" in out


def test_invalid_case_reason(capsys):
    code, out, _ = _run(
        capsys, "--shared", SHARED_M, "--dst", TOY_SWAPPED, "--shape", "32x8", "--dtype", "bf16"
    )
    assert code == 0
    assert "lane bases 1,2,4 must map to offsets 1,2,4; lane=1 (basis 0) maps to offset 2" in out
    assert "8 x ds_load_u16" in out


def test_plot_writes_png(capsys, tmp_path):
    png = tmp_path / "tr.png"
    code, out, err = _run(
        capsys,
        *("--shared", SHARED_M, "--dst", TOY, "--shape", "32x8", "--dtype", "bf16"),
        *("--plot", str(png)),
    )
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_panels_show_the_transpose():
    from wgpsim.layout.notation import parse
    from wgpsim.plots.transpose import panels
    from wgpsim.trace.lowering import lower

    low = lower(parse(SHARED_M), parse(TOY), (32, 8), "bf16")
    src, dst, reg = panels(low)
    assert src.shape == (32, 8)
    # element (m, k) is read by the lane whose row holds column k (S = k within the group)...
    assert np.array_equal(src, (np.arange(32)[:, None] // 8) * 8 + np.arange(8)[None, :])
    # ...and received by lane m as register k (the destination layout)
    assert np.array_equal(dst, np.broadcast_to(np.arange(32)[:, None], (32, 8)))
    assert np.array_equal(reg, np.broadcast_to(np.arange(8)[None, :], (32, 8)))


@pytest.mark.parametrize(
    ("argv", "msg"),
    [
        (["--shape", "32by8"], "shape"),
        (["--dtype", "fp7"], "dtype"),
        (["--warps", "4"], "--warps 4: the dst layout spans 1 warp"),
        (["--base", "zero"], "--base"),
        (
            ["--base", "0,65536"],
            "--base 0,65536: 2 address(es) given, the shared layout has one buffer",
        ),
        (["--base", "-16"], "--base -16: -16 is not a byte address aligned to 16"),
        (["--base", "8"], "--base 8: 8 is not a byte address aligned to 16"),
        (["--base", "327680"], "ends past the 327680 B LDS"),
        (
            ["--shared", TOY, "--dst", SHARED_M],
            "--dst must be a distributed (register) layout, got swizzled_shared (are --dst and --shared swapped?)",
        ),
        (["--dst", SHARED_M], "--dst must be a distributed (register) layout, got swizzled_shared"),
        (
            ["--set", "timing.lds_latency=-1"],
            "--set timing.lds_latency=-1: field 'timing.lds_latency' must be a positive integer",
        ),
        (["--shared", "#ttg.swizzled_shared<{vec = 3}>"], "swizzled_shared"),
    ],
)
def test_errors_are_one_line_exit_2(capsys, argv, msg):
    base = {"--shared": SHARED_M, "--dst": TOY, "--shape": "32x8", "--dtype": "bf16"}
    for k, v in zip(argv[::2], argv[1::2], strict=True):
        base[k] = v
    code, out, err = _run(capsys, *[x for kv in base.items() for x in kv])
    assert code == 2
    assert err.startswith("wgpsim: error:") and msg in err and err.count("\n") == 1


BLOCKED = (
    "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], "
    "order = [1, 0]}>"
)
PARTITIONED = (
    "#ttg.partitioned_shared<{numPartitions = 2, numGroups = 2, partitionDim = 0, partitionLayout = "
    "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>}>"
)


def test_partitioned_bases_default_to_the_allocator(capsys):
    argv = ("--shared", PARTITIONED, "--dst", BLOCKED, "--shape", "4x256", "--dtype", "fp16")
    code, out, err = _run(capsys, *argv, "--json", "--simulate")
    auto = json.loads(out)
    assert code == 0, err
    from wgpsim.hw import load_hardware
    from wgpsim.hw.alloc import allocate_on, tensor_buffers
    from wgpsim.layout import parse

    alloc = allocate_on(load_hardware(), tensor_buffers("t", parse(PARTITIONED), (4, 256), 2))
    assert (
        auto["bases"] == alloc.offsets_of("t") and len(set(b // 65536 for b in auto["bases"])) == 2
    )
    code, out, _ = _run(capsys, *argv, "--json", "--simulate", "--base", "0,65536")
    assert json.loads(out)["simulation"] == auto["simulation"]  # the same partitions
    code, out, err = _run(capsys, *argv, "--base", "0")
    assert code == 2 and "the shared layout has 2 partition buffers" in err


def test_set_changes_the_simulated_hardware(capsys):
    argv = ("--shared", SHARED_M, "--dst", TOY, "--shape", "32x8", "--dtype", "bf16", "--json")
    _, out, _ = _run(capsys, *argv, "--simulate")
    _, slow, _ = _run(capsys, *argv, "--simulate", "--set", "timing.lds_latency=80")
    before, after = json.loads(out)["simulation"], json.loads(slow)["simulation"]
    assert after["lds_cycles_max"] - before["lds_cycles_max"] == 80 - 56


@pytest.mark.parametrize(
    "flag, argv",
    [
        ("--shared", ["--shared", SHARED_M[:40], "--dst", TOY]),
        ("--dst", ["--shared", SHARED_M, "--dst", "bogus"]),
    ],
)
def test_an_unreadable_layout_names_its_flag(capsys, flag, argv):
    assert main(["lower", *argv, "--shape", "32x8", "--dtype", "bf16"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"wgpsim: error: {flag}: notation: ")
