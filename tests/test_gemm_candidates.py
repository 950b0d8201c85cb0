"""``wgpsim run configs/gemm_128x128.yaml``: the seed's Part II worked example, end to end
through the CLI's JSON (C[128, 128] = A[128, K] x B[K, 128], 4 warps, fp16, K = 128)."""

import contextlib
import io
import json
import os
from pathlib import Path

import pandas as pd
import pytest
import yaml

from wgpsim.cli import main
from wgpsim.errors import ConfigError
from wgpsim.experiments import run_experiment

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "gemm_128x128.yaml"


def _main(*argv):
    stdout, stderr = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = main(["run", *map(str, argv)])
    finally:
        os.chdir(cwd)
    return code, stdout.getvalue(), stderr.getvalue()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The shipped config as a user runs it, once for the module."""
    out = tmp_path_factory.mktemp("gemm")
    code, stdout, _ = _main("configs/gemm_128x128.yaml", "--json", "--out", out)
    assert code == 0
    return {r["candidate"]: r for r in json.loads(stdout)}, out


def test_rows_have_snake_case_fields_and_ranks(run):
    rows, _ = run
    assert set(rows) == {
        "standard",
        "swizzled",
        "swizzled_partitioned",
        "swizzled_auto",
        "coarse_auto",
    }
    for row in rows.values():
        assert all(k == k.lower() and " " not in k for k in row)
        assert row["rank_reason"]
    # swizzled_partitioned and swizzled_auto are the same layouts: they share second place.
    assert sorted(r["rank"] for r in rows.values()) == [1, 2, 2, 4, 5]
    assert rows["swizzled_partitioned"]["rank"] == rows["swizzled_auto"]["rank"] == 2


def test_standard_layout_colocates_a_not_b(run):
    std = run[0]["standard"]
    assert std["a_co_located"] is True
    assert std["a_co_located_instructions"] == 16
    assert std["b_co_located"] is False


def test_swizzle_separates_a_but_one_partition_still_conflicts(run):
    swz = run[0]["swizzled"]
    assert swz["a_co_located"] is False and swz["b_co_located"] is False
    # A (34800 B with padding) is placed after B at 36832: it straddles the 64 KiB boundary, but
    # in every lock-step A load the two pairs still read a common partition.
    assert swz["a_same_partition"] is True
    assert len(swz["a_offsets"]) == 1 and swz["a_pieces"] == 1
    assert swz["a_lockstep_conflict_loads"] == swz["a_dialect_loads_per_warp"]
    assert swz["partition_conflict_cycles"] > 0


def test_partitioned_layouts_remove_partition_conflicts_and_cost_fewer_cycles(run):
    rows, _ = run
    part = rows["swizzled_partitioned"]
    assert (part["a_partition_dim"], part["a_num_groups"], part["a_pieces"]) == (0, 2, 4)
    assert part["a_tdm_instructions"] == 1
    assert (part["b_partition_dim"], part["b_num_groups"], part["b_pieces"]) == (1, 4, 8)
    assert part["b_tdm_instructions"] == 2
    assert part["b_piece_shape"] == [128, 16] and part["b_cacheline_use"] == 0.25
    assert part["partition_conflict_cycles"] == 0
    assert part["a_same_partition"] is False and part["b_same_partition"] is False
    assert part["a_lockstep_conflict_loads"] == part["b_lockstep_conflict_loads"] == 0
    for other in ("standard", "swizzled"):
        assert part["cycles"] < rows[other]["cycles"]
        assert part["bytes"] == rows[other]["bytes"]
    # the allocator puts each operand's two buffers in different 64 KiB partitions
    for op in "ab":
        p0, p1 = part[f"{op}_offsets"]
        assert p0 // 65536 != p1 // 65536
    assert part["lds_bytes"] > rows["swizzled"]["lds_bytes"]


def test_auto_derives_the_explicit_parameters(run):
    rows, _ = run
    auto, explicit = rows["swizzled_auto"], rows["swizzled_partitioned"]
    assert auto["a_partitioned_auto"] and not explicit["a_partitioned_auto"]
    for key in ("shared", "partition_dim", "num_groups", "pieces", "num_partitions", "offsets"):
        for op in "ab":
            assert auto[f"{op}_{key}"] == explicit[f"{op}_{key}"], (op, key)
    assert auto["cycles"] == explicit["cycles"]


def test_coarse_layout_makes_b_two_full_cacheline_pieces(run):
    rows, _ = run
    coarse, fine = rows["coarse_auto"], rows["swizzled_auto"]
    for key in ("pieces", "num_groups", "piece_shape", "tdm_instructions", "partition_dim"):
        assert coarse[f"a_{key}"] == fine[f"a_{key}"]  # A unchanged
    assert coarse["b_pieces"] == 2 and coarse["b_num_groups"] == 1
    assert coarse["b_piece_shape"] == [128, 64]
    assert coarse["b_tdm_instructions"] == 1 and coarse["b_cacheline_use"] == 1.0
    assert coarse["b_piece_row_bytes"] == 128
    assert coarse["partition_conflict_cycles"] == 0
    # same cycles as the fine partitioned candidates, one TDM instruction fewer: ranked first
    assert coarse["rank"] == 1 and "TDM" in coarse["rank_reason"]


def test_files_and_figures_are_written(run):
    rows, out = run
    for table in ("results", "operands", "instructions", "loads", "allocation"):
        assert (out / f"{table}.csv").stat().st_size > 0
    assert (out / "candidates_cycles.png").stat().st_size > 0
    for name in rows:
        assert (out / f"ownership_{name}.png").exists()
        assert (out / f"pieces_{name}.png").exists()
    instr = pd.read_csv(out / "instructions.csv")
    assert len(instr) == len(rows) * 2 * 16 * 4  # candidates x operands x instructions x warps
    ops = pd.read_csv(out / "operands.csv")
    assert set(ops["load"]) == {"ds_load_b128", "ds_load_tr16_b128"}
    loads = pd.read_csv(out / "loads.csv")
    assert len(loads) == 4 * ops["dialect_loads_per_warp"].sum()  # every load of every warp
    per = loads.groupby(["candidate", "operand"])["lockstep_conflict"].any()
    assert per["swizzled", "a"] and not per["swizzled_partitioned", "a"]


def test_table_on_stdout(tmp_path):
    code, out, _ = _main(CONFIG, "--out", tmp_path, "--set", "block=[128, 128, 64]")
    assert code == 0
    assert "coarse_auto" in out and "gemm_candidates" in out


def _with(tmp_path, **changes):
    raw = yaml.safe_load(CONFIG.read_text())
    for key, value in changes.items():
        node = raw
        *path, last = key.split(".")
        for part in path:
            node = node[part]
        node[last] = value
    path = tmp_path / "gemm.yaml"
    raw["hardware"] = str(ROOT / "configs" / "mi450.yaml")
    path.write_text(yaml.safe_dump(raw))
    return path


def test_auto_on_a_colocated_operand_ranks_it_infeasible(tmp_path):
    """`partitioned: auto` cannot split an operand both pairs read (co-located): that candidate
    is ranked last with the reason, the others still compared."""
    path = _with(tmp_path, **{"candidates.standard.a": {"partitioned": "auto"}})
    result = run_experiment(path)
    row = result.table.set_index("candidate").loc["standard"]
    assert row["rank"] == len(result.table)
    assert "co-located" in row["rank_reason"] and row["rank_reason"].startswith("infeasible")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"warps": 2}, "warps"),
        ({"candidates.standard.cta_layout": {"warp": [[0, 1]]}}, "candidates.standard"),
        ({"candidates.standard.b": {"padded": [[128, 8]], "vec": 2}}, "candidates.standard.b"),
        ({"candidates.standard.note": 3}, "candidates.standard.note"),
        ({"block": [128, 128]}, "block"),
    ],
)
def test_config_errors_name_the_field(tmp_path, change, field):
    with pytest.raises(ConfigError, match=f"field '{field}"):
        run_experiment(_with(tmp_path, **change))


def test_eight_warps_auto(tmp_path):
    """Gluon's 8-warp rule: a third warp basis takes the M-group step ([4, 0]); w4 shares SIMD 0
    with w0 and takes turns with it, so only warps of one issue round must be apart."""
    cand = {
        "cta_layout": {"register": [[0, 1], [0, 2], [1, 0]], "warp": [[4, 4], [2, 0], [4, 0]]},
        "a": {"partitioned": "auto"},
        "b": {"partitioned": "auto"},
    }
    path = _with(tmp_path, warps=8, block=[128, 128, 64], candidates={"g8": cand})
    row = run_experiment(path).records()[0]
    assert (row["a_num_groups"], row["b_num_groups"]) == (1, 1)
    assert row["a_tdm_instructions"] == row["b_tdm_instructions"] == 1
    assert row["partition_conflict_cycles"] == 0
    assert not row["a_same_partition"] and not row["b_same_partition"]


# --------------------------------------------------------------------------------- drift
DRIFT_CANDIDATES = ("standard", "swizzled", "swizzled_partitioned")


def _small(tmp_path, **changes):
    """Three of the shipped candidates at BLOCK_K 64 on the fast engine (quick)."""
    raw = yaml.safe_load(CONFIG.read_text())
    cands = {k: raw["candidates"][k] for k in DRIFT_CANDIDATES}
    return _with(tmp_path, candidates=cands, block=[128, 128, 64], engine="fast", **changes)


@pytest.fixture(scope="module")
def drift_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gemm_drift")
    path = _small(tmp, drift={"jitter_cycles": [0, 8], "seeds": 6})
    code, stdout, _ = _main(path, "--json", "--out", tmp / "out")
    assert code == 0
    return {r["candidate"]: r for r in json.loads(stdout)}, tmp / "out"


def test_drift_columns_and_tables(drift_run):
    rows, out = drift_run
    drift = pd.read_csv(out / "drift.csv").set_index(["candidate", "jitter_cycles"])
    runs = pd.read_csv(out / "drift_runs.csv")
    assert len(runs) == len(DRIFT_CANDIDATES) * 2 * 6
    for name, row in rows.items():
        for j in (0, 8):
            mean = row[f"conflict_rate_jitter{j}"]
            assert mean == drift.loc[(name, j), "conflict_rate"]
            assert row[f"conflict_rate_jitter{j}_ci_low"] <= mean
            assert mean <= row[f"conflict_rate_jitter{j}_ci_high"]
        # Jitter 0 is the lock step the table's own K step ran in.
        lock = runs[(runs["candidate"] == name) & (runs["jitter_cycles"] == 0)]
        assert (lock["partition_stall_cycles"] == row["partition_conflict_cycles"]).all()
        assert (lock["cycles"] == row["cycles"]).all()
        assert (row["conflict_rate_jitter0"] > 0) == (row["partition_conflict_cycles"] > 0)
    assert (out / "conflict_rate_vs_jitter.png").stat().st_size > 0


def test_partitioning_is_conflict_free_in_lock_step_only(drift_run):
    rows, _ = drift_run
    part, std = rows["swizzled_partitioned"], rows["standard"]
    assert part["conflict_rate_jitter0"] == 0 < std["conflict_rate_jitter0"]
    # Drifting warps meet on other instructions' bands, so the rate is no longer zero, but it
    # stays well below the layout that shares partitions (seed, Note in Part II).
    assert part["conflict_rate_jitter8_ci_low"] > 0
    assert part["conflict_rate_jitter8_ci_high"] < std["conflict_rate_jitter8_ci_low"]


def test_candidates_resume_from_the_checkpoint(tmp_path):
    path = _small(tmp_path, drift={"jitter_cycles": [4], "seeds": 2})
    checkpoint = tmp_path / "checkpoint.jsonl"
    first = run_experiment(path, checkpoint=checkpoint, workers=1)
    lines = checkpoint.read_text().splitlines()
    assert len(lines) == len(DRIFT_CANDIDATES)  # one point per candidate
    again = run_experiment(path, checkpoint=checkpoint, resume=True, workers=1)
    assert checkpoint.read_text().splitlines() == lines  # nothing ran again
    for name, table in first.tables.items():
        pd.testing.assert_frame_equal(table, again.tables[name], check_exact=True)


def test_pool_gives_the_same_tables_as_in_process(tmp_path, monkeypatch):
    import wgpsim.sweeps.executor as executor

    path = _small(tmp_path)
    here = run_experiment(path, workers=1)
    monkeypatch.setattr(executor, "INLINE_SECONDS", 0.0)  # the pool after two probe points
    monkeypatch.setattr(executor, "CHUNK_SECONDS", 1e-9)
    pool = run_experiment(path, workers=2)
    for name, table in here.tables.items():
        pd.testing.assert_frame_equal(table, pool.tables[name], check_exact=True)


def test_analyses_for_figures_come_lazily(tmp_path):
    result = run_experiment(_small(tmp_path), workers=1)
    analyses = result.summary.candidates
    assert list(analyses) == list(DRIFT_CANDIDATES) and len(analyses) == 3
    table = result.table.set_index("candidate")
    for name in DRIFT_CANDIDATES:
        assert analyses[name].result.measurement() == table.loc[name, "cycles"]
    with pytest.raises(KeyError):
        analyses["nope"]


@pytest.mark.parametrize(
    ("drift", "message"),
    [
        ({"burst": 4}, "field 'drift.burst': unknown field"),
        ({"seeds": 0}, "field 'drift.seeds': 0 is out of range \\(valid: 2\\.\\.10000\\)"),
        ({"jiter_cycles": [2]}, "did you mean 'jitter_cycles'"),
    ],
)
def test_drift_config_errors_name_the_field(tmp_path, drift, message):
    with pytest.raises(ConfigError, match=message):
        run_experiment(_small(tmp_path, drift=drift))


def test_an_infeasible_candidate_is_ranked_not_fatal():
    """A candidate whose padded layouts need more than the 320 KiB LDS is ranked last with the
    allocator's reason; the others are compared as without it."""
    import yaml

    from wgpsim.experiments import run_experiment

    raw = yaml.safe_load((ROOT / "configs" / "gemm_128x128.yaml").read_text())
    raw["hardware"] = str(ROOT / "configs" / "mi450.yaml")
    raw["candidates"] = {k: raw["candidates"][k] for k in ("standard", "coarse_auto")}
    raw["candidates"]["too_big"] = {
        "cta_layout": {"warps_per_cta": [2, 2]},
        "a": {"padded": [[8, 256]]},  # 256 elements of padding every 8: 33x the tensor
        "b": {"padded": [[8, 256]]},
    }
    result = run_experiment(raw)
    table = result.table.set_index("candidate")
    assert list(table.index) == ["coarse_auto", "standard", "too_big"]
    assert table.loc["too_big", "rank"] == 3
    assert table.loc["too_big", "rank_reason"].startswith("infeasible: LDS allocation needs")
    assert "327680 bytes of LDS" in table.loc["too_big", "infeasible"]
    assert table.loc["coarse_auto", "cycles"] == 316 and table.loc["standard", "cycles"] == 570
    assert result.records()[0]["cycles"] == 316  # an int, for --json
    row = result.display.set_index("candidate").loc["too_big"]
    assert row["cycles"] == "-" and row["why"].startswith("infeasible")


def test_loads_are_counted_as_the_assembly_holds_them(tmp_path):
    """fp8 A with kWidth 8: Triton's dialect asks for ds_load_b64s; LLVM pairs each two into one
    ds_load_2addr_b64 (the corpus's fp8 GEMM compiles: 8 x 2addr_b64 where the dialect has 16
    b64). The table reports what runs, and keeps the dialect's count beside it."""
    standard = yaml.safe_load(CONFIG.read_text())["candidates"]["standard"]
    path = _with(tmp_path, dtype="fp8", instr_shape=[16, 16, 64], candidates={"standard": standard})
    row = run_experiment(path).records()[0]
    assert (row["a_dialect_load"], row["a_load"]) == ("ds_load_b64", "ds_load_2addr_b64")
    assert row["a_loads_per_warp"] * 2 == row["a_dialect_loads_per_warp"]
    assert row["b_load"] == row["b_dialect_load"] == "ds_load_tr8_b64"  # nothing to pair
