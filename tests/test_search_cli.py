"""The layout search as a user runs it (``configs/layout_search.yaml``, the AMD blog's Part II
tile with its four hand-made candidates): ``wgpsim run`` and ``wgpsim search`` print and
write the same; no two printed rows tie on every criterion; the references are printed with
their rank and gap; and every candidate keeps the cycles and metrics that main 15b38f8 gave it
(``tests/fixtures/search/results_128x128x64_w4.csv``, made by ``make_results.py`` there)."""

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).parent.parent
CONFIG = ROOT / "configs" / "layout_search.yaml"
BEFORE = ROOT / "tests" / "fixtures" / "search" / "results_128x128x64_w4.csv"
METRICS = ["cycles", "tdm_instructions", "lds_bytes", "local_loads", "cacheline_use",
           "pieces", "partition_stall_cycles", "bank_conflict_cycles", "lockstep_overlaps"]  # fmt: skip


def _cli(*args, out: Path) -> list[str]:
    cmd = [sys.executable, "-m", "wgpsim", *args, "--workers", "1", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [line for line in proc.stdout.splitlines() if not line.startswith("wrote ")]


@pytest.fixture(scope="module")
def routes(tmp_path_factory):
    """Both verbs on the config, every row kept (``top``)."""
    out = tmp_path_factory.mktemp("routes")
    every = ("--set", "top=1000000")
    run = _cli("run", str(CONFIG), *every, out=out / "run")
    search = _cli("search", str(CONFIG), *every, out=out / "search")
    return out, run, search


def test_run_and_search_print_and_write_the_same(routes):
    out, run, search = routes
    assert run == search
    assert any(line.startswith("Pareto front") for line in run)
    assert "Winner, Gluon:" in run and any("ttgl.amd.AMDWMMALayout" in line for line in run)
    names = sorted(p.name for p in (out / "run").glob("*.csv"))
    assert names == sorted(p.name for p in (out / "search").glob("*.csv"))
    assert {"results.csv", "references.csv", "equivalents.csv", "pareto.csv"} <= set(names)
    for name in names:
        assert (out / "run" / name).read_bytes() == (out / "search" / name).read_bytes(), name


def test_no_two_rows_tie_on_every_criterion(routes):
    out, run, _ = routes
    rows = pd.read_csv(out / "run" / "results.csv")
    keys = list(rows[METRICS].itertuples(index=False))
    assert len(set(keys)) == len(keys) > 1
    assert list(rows["rank"]) == list(range(1, len(rows) + 1))
    members = pd.read_csv(out / "run" / "equivalents.csv")
    sizes = members.groupby("rank").size()
    assert list(sizes[rows["rank"]]) == list(rows["equivalents"] + 1)
    assert (rows["equivalents"] > 0).any()  # the symmetric twins are grouped
    printed = [line for line in run if re.match(r"\s*\d+\. \d+ cycles", line)]
    assert len(printed) == len(rows)
    for line, row in zip(printed, rows.itertuples(), strict=True):
        more = f" (and {row.equivalents} equivalent)" if row.equivalents else ""
        assert line.endswith(f": {row.candidate}{more}")


def test_references_are_printed_with_rank_and_gap(routes):
    out, run, _ = routes
    members = pd.read_csv(out / "run" / "equivalents.csv").set_index("candidate")
    winner = pd.read_csv(out / "run" / "results.csv").iloc[0]
    before = pd.read_csv(BEFORE).set_index("candidate")
    for name in ("standard", "swizzled", "swizzled_partitioned", "coarse"):
        rank, cycles = members.loc[name, "rank"], members.loc[name, "cycles"]
        gap = cycles - winner["cycles"]
        (line,) = [x for x in run if x.startswith(f"  {name}: rank ")]
        assert line.startswith(f"  {name}: rank {rank}")
        assert f"{cycles} cycles, {gap:+d} cycles ({100 * gap / winner['cycles']:+.1f}%)" in line
        if gap:  # why: the stalls main measured for it
            assert f"{before.loc[name, 'partition_stall_cycles']} partition-stall cycles" in line


def test_every_candidate_keeps_its_cycles_and_place(routes):
    """The same candidates simulated, each with the metrics main gave it, and the rows in an
    order that refines main's ranking (cycles, TDM, LDS bytes, local_loads)."""
    out, _, _ = routes
    now = pd.read_csv(out / "run" / "equivalents.csv").set_index("candidate").sort_index()
    before = pd.read_csv(BEFORE).set_index("candidate").sort_index()
    before["pieces"] = before["a_pieces"] + before["b_pieces"]
    assert list(now.index) == list(before.index)
    pd.testing.assert_frame_equal(now[METRICS], before[METRICS])
    places = pd.DataFrame({"old": before["rank"], "new": now["rank"]})
    spans = places.groupby("old")["new"].agg(["min", "max"]).sort_index()
    assert (spans["max"].to_numpy()[:-1] < spans["min"].to_numpy()[1:]).all()
