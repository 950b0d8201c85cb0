"""``wgpsim layout``: the seed's cvt command, show, plot, JSON output and one-line errors."""

from __future__ import annotations

import json

import pytest

from wgpsim.cli import main

SEED_DST = (
    "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], "
    "[16, 0]], warp = [], block = []}>"
)
SEED_SHARED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>"
SEED_CVT = [
    "layout",
    "cvt",
    "--dst",
    SEED_DST,
    "--shared",
    SEED_SHARED,
    "--shape",
    "32x8",
    "--dtype",
    "bf16",
]
BLOCKED = "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>"
PARTITIONED = (
    "#ttg.partitioned_shared<{numPartitions = 2, numGroups = 2, partitionDim = 0, partitionLayout = "
    "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>}>"
)
WMMA = "#ttg.amd_wmma<{version = 3, isTranspose = false, ctaLayout = {warp = [[0, 1], [1, 0]]}, instrShape = [16, 16, 32]}>"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_seed_cvt_command_prints_the_seed_table(capsys):
    code, out, err = run(capsys, *SEED_CVT)
    assert code == 0 and err == ""
    lines = [
        line.split("(")[0].split()
        for line in out.splitlines()
        if "->" in line and "=" in line.split()[0]
    ]
    table = {parts[0]: int(parts[-1].strip("[]")) for parts in lines}
    assert table == {
        "register=1": 32, "register=2": 64, "register=4": 128,
        "lane=1": 1, "lane=2": 2, "lane=4": 4, "lane=8": 8, "lane=16": 16,
    }  # fmt: skip
    assert "bf16 (2 B per element)" in out


def test_seed_cvt_json(capsys):
    code, out, _ = run(capsys, *SEED_CVT, "--json")
    payload = json.loads(out)
    assert code == 0
    assert payload["cvt"]["in_dims"]["register"] == [[32, 0], [64, 0], [128, 0]]
    assert payload["cvt"]["out_dims"] == {"offset": 256, "block": 1}
    assert [r["bytes"] for r in payload["table"] if r["in_dim"] == "lane"] == [2, 4, 8, 16, 32]
    assert payload["shared"] == SEED_SHARED


def test_partitioned_cvt_has_a_partition_column(capsys):
    code, out, _ = run(
        capsys,
        "layout",
        "cvt",
        "--dst",
        BLOCKED,
        "--shared",
        PARTITIONED,
        "--shape",
        "4x256",
        "--json",
    )
    rows = json.loads(out)["table"]
    assert code == 0
    assert [(r["input"], r["offset"], r["partition"]) for r in rows if r["in_dim"] == "warp"] == [
        (1, 0, 1),
        (2, 256, 0),
    ]


def test_show(capsys):
    code, out, _ = run(
        capsys,
        "layout",
        "show",
        "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>",
        "--shape",
        "64x64",
    )
    assert code == 0
    assert "register=8 -> (16, 0)" in out and "warp=2 -> (8, 0)" in out
    code, out, _ = run(capsys, "layout", "show", WMMA, "--shape", "64x64", "--json")
    payload = json.loads(out)
    assert payload["kind"] == "amd_wmma"
    assert payload["in_dims"]["warp"] == [[0, 16], [16, 0]]


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot_writes_the_file(capsys, tmp_path, suffix):
    out_file = tmp_path / f"owners{suffix}"
    code, out, _ = run(
        capsys,
        "layout",
        "plot",
        "--layout",
        WMMA,
        "--shape",
        "32x32",
        "--by",
        "lane",
        "--out",
        str(out_file),
    )
    assert code == 0 and out.strip() == str(out_file)
    assert out_file.stat().st_size > 1000
    assert [p.name for p in out_file.parent.iterdir()] == [out_file.name]  # no temporary left


@pytest.mark.parametrize(
    "argv, message",
    [
        (["layout", "cvt", "--dst", SEED_DST, "--shared", SEED_SHARED.replace("perPhase = 1", "perPhase = 3"), "--shape", "32x8"],
         "swizzled_shared: field 'perPhase' must be a positive power of two, got 3"),
        (["layout", "cvt", "--dst", SEED_DST, "--shared", SEED_SHARED, "--shape", "32by8"], "expected positive sizes joined by 'x'"),
        (["layout", "cvt", "--dst", SEED_DST, "--shared", SEED_SHARED, "--shape", "32x8", "--dtype", "fp64"], "dtype 'fp64'"),
        (["layout", "cvt", "--dst", SEED_SHARED, "--shared", SEED_SHARED, "--shape", "32x8"], "must be a distributed"),
        (["layout", "cvt", "--dst", SEED_SHARED, "--shared", SEED_DST, "--shape", "32x8"],
         "--dst must be a distributed (register) layout, got swizzled_shared (are --dst and --shared swapped?)"),
        (["layout", "plot", "--layout", WMMA, "--shape", "32x32", "--by", "colour", "--out", "x.png"], "'by' must be one of"),
        (["layout", "plot", "--layout", SEED_SHARED, "--shape", "32x8", "--out", "x.png"], "is a shared layout"),
        (["layout", "plot", "--layout", WMMA, "--shape", "32x32", "--out", "x.jpg"], "must end in .png or .svg"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("wgpsim: error: ") and message in err


def test_plot_json_prints_the_path_and_who_holds_what(capsys, tmp_path):
    out_file = tmp_path / "owners.svg"
    argv = ["layout", "plot", "--layout", WMMA, "--shape", "32x32", "--out", str(out_file)]
    code, out, _ = run(capsys, *argv, "--json")
    payload = json.loads(out)
    assert code == 0 and payload["path"] == str(out_file) and out_file.is_file()
    # 4 warps (ctaLayout warp bases [0, 1], [1, 0]) each hold one 16x16 quarter of the tile
    assert payload["elements_per_owner"] == {"0": 256, "1": 256, "2": 256, "3": 256}
    assert payload["unowned_elements"] == 0 and payload["by"] == "warp"


PADDED = "#ttg.padded_shared<[4:+4] {order = [0, 1], shape = [32, 8]}>"


def test_padded_cvt_bytes_apply_the_padding(capsys):
    argv = ["layout", "cvt", "--dst", SEED_DST, "--shared", PADDED, "--shape", "32x8"]
    code, out, _ = run(capsys, *argv, "--dtype", "bf16", "--json")
    rows = {(r["in_dim"], r["input"]): r for r in json.loads(out)["table"]}
    assert code == 0
    # lane 4 reads element 4: one interval of 4 elements and 4 padding elements before it
    assert rows[("lane", 4)]["offset"] == 4 and rows[("lane", 4)]["bytes"] == (4 + 4) * 2
    assert rows[("lane", 2)]["bytes"] == 2 * 2  # before the first padding
    code, out, _ = run(capsys, *argv, "--dtype", "bf16")
    assert "padding applied" in out and "lane=4" in out and "(16 B)" in out


def test_help_does_not_import_matplotlib():
    import subprocess
    import sys

    code = "import sys; from wgpsim.cli import build_parser; build_parser(); print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
