"""``wgpsim kernel CACHE_ROOT --all`` on a cache root holding the shipped compiles (real Triton
3.9.0 gfx1250 compiles, examples/kernels/, one hash-like folder each) and an unreadable one:
every kernel is a row, worst first, the LDS bytes beside Triton's own (its ``NAME.json``), the
unreadable kernel a row with its reason; ``--json`` and ``--csv`` hold the same rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from wgpsim.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernels"
KERNELS = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cache")
    for name in KERNELS:
        shutil.copytree(EXAMPLES / name, root / f"HASH_{name}")
    (root / "HASH_bad").mkdir()
    (root / "HASH_bad" / "broken.ttgir").write_text("module {\n")
    return root


@pytest.fixture(scope="module")
def rows(cache, tmp_path_factory):
    import contextlib
    import io

    csv = tmp_path_factory.mktemp("out") / "all.csv"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["kernel", str(cache), "--all", "--json", "--csv", str(csv)]) == 1
    return json.loads(out.getvalue())["kernels"], pd.read_csv(csv)


def test_every_kernel_is_a_row_with_tritons_lds_bytes(rows):
    kernels, _ = rows
    assert sorted(r["folder"] for r in kernels) == sorted(
        [f"HASH_{n}" for n in KERNELS] + ["HASH_bad"]
    )
    for r in kernels:
        if r["folder"] == "HASH_bad":
            continue
        meta = next((EXAMPLES / r["folder"][5:]).glob("*.json"))
        triton = json.loads(meta.read_text())
        assert r["ttg_shared"] == triton["shared"] == r["lds_bytes"]
        assert r["warps"] == triton["num_warps"]
        assert r["target"] == triton["target"]


def test_worst_first_and_the_unreadable_kernel_last_with_its_reason(rows):
    kernels, _ = rows
    timed = [r for r in kernels if r["exposed"] is not None]
    assert len(timed) == len(KERNELS)
    # loops first, per iteration, then kernels without a loop, per run: each worst first
    pers = [r["per"] for r in timed]
    assert pers == sorted(pers) and {"iteration", "run"} <= set(pers), pers
    for per in ("iteration", "run"):
        exposed = [r["exposed"] for r in timed if r["per"] == per]
        assert exposed == sorted(exposed, reverse=True)
    bad = kernels[-1]
    assert bad["folder"] == "HASH_bad" and bad["lds_bytes"] is None
    assert "broken.ttgir" in bad["error"] and "\n" not in bad["error"]
    by = {r["folder"]: r for r in kernels}
    # the AMD blog's Part II: the standard GEMM exposes more LDS time than the partitioned one
    std, part = by["HASH_gemm_tdm_standard"], by["HASH_gemm_tdm_partitioned"]
    assert (
        std["exposed"] > part["exposed"] and std["partition_stalls"] > 0 == part["partition_stalls"]
    )
    assert std["worst_line"].startswith("kernels.py:")


def test_csv_holds_the_same_rows(rows):
    kernels, frame = rows
    assert list(frame["folder"]) == [r["folder"] for r in kernels]
    assert list(frame["lds_bytes"].fillna(-1).astype(int)) == [
        r["lds_bytes"] or -1 for r in kernels
    ]


def test_table_text_names_the_unreadable_kernel(cache, capsys):
    assert main(["kernel", str(cache), "--all"]) == 1  # HASH_bad
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"{len(KERNELS) + 1} kernels, worst first")
    assert "broken (HASH_bad): " in out


def test_one_kernel_flags_are_refused_with_all(cache, tmp_path, capsys):
    assert main(["kernel", str(cache), "--all", "--plot", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--plot: one kernel at a time" in err[0]


def test_the_table_labels_each_rows_unit(cache, capsys):
    """A kernel without a loop is timed once, whole: its figures are per run, not per
    iteration; the printed table says which on each row."""
    assert main(["kernel", str(cache), "--all"]) == 1  # HASH_bad is unreadable
    lines = {line.split()[1]: line for line in capsys.readouterr().out.splitlines()[2:]}
    for folder, unit in (("HASH_gemm_tdm_standard", "/iter"), ("HASH_lds_bandwidth_plain", "/run")):
        line = lines[folder]
        assert line.count(unit) == 2 and ("/iter" in line) != ("/run" in line), line
