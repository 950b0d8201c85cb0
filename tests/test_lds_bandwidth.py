"""The seed's LDS bandwidth microbenchmark through the Python API (``run_experiment``).

The numbers come out of the model: the layouts, the allocator and the engine. The seed's table is
the target; a changed hardware constant moves the rates with it.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from wgpsim.errors import ConfigError
from wgpsim.experiments import run_experiment
from wgpsim.hw import load_hardware
from wgpsim.measures.ports import usable_ports
from wgpsim.microbench.bandwidth import parse_config, prepare
from wgpsim.sweeps.config import load_config
from wgpsim.trace.instructions import INSTRUCTIONS

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "lds_bandwidth.yaml"

# The seed's table: layout -> (measured cycles, LDS bytes, raw, steady, peak B/cycle).
SEED = {
    "plain": (323, 64 * 1024, 202.9, 255.4, 256),
    "partitioned": (196, 96 * 1024, 334.4, 509.8, 512),
}


@pytest.fixture(scope="module")
def result():
    return run_experiment(CONFIG)


def test_seed_table(result):
    table = result.table.set_index("layout")
    assert list(table.index) == ["plain", "partitioned"]
    for layout, (cycles, lds, raw, steady, peak) in SEED.items():
        row = table.loc[layout]
        assert row.cycles == pytest.approx(cycles, rel=0.01), layout
        assert row.raw_bytes_per_cycle == pytest.approx(raw, rel=0.01), layout
        assert row.steady_bytes_per_cycle == pytest.approx(steady, rel=0.01), layout
        assert row.lds_bytes == lds
        assert row.peak_bytes_per_cycle == peak
    assert table.loc["partitioned", "speedup"] == pytest.approx(1.65, abs=0.02)
    assert table.loc["plain", "speedup"] == 1
    fixed = table["fixed_cycles"]
    assert abs(fixed["plain"] - fixed["partitioned"]) <= 2
    assert (table["r_squared"] > 0.99).all()


def test_table_is_consistent_with_the_sweep(result):
    sweep, table = result.tables["sweep"], result.table.set_index("layout")
    assert set(sweep["burst"]) == set(yaml.safe_load(CONFIG.read_text())["burst_lengths"])
    # Every burst reads the [4, N] fp16 tensor once: 4 warps x burst x 512 B.
    assert (sweep["bytes"] == 4 * sweep["burst"] * 512).all()
    at32 = sweep[sweep["burst"] == 32].set_index("layout")
    assert (at32["cycles"] == table["cycles"]).all()
    assert np.allclose(at32["bytes"] / at32["cycles"], table["raw_bytes_per_cycle"])
    # The plain layout's pairs stall on the shared partition; the partitioned one's never do.
    plain = sweep[sweep["layout"] == "plain"]
    part = sweep[sweep["layout"] == "partitioned"]
    assert (plain["partition_conflict_cycles"] > 0).all()
    assert (part["partition_conflict_cycles"] == 0).all()
    # "No bank conflicts either way" (seed).
    assert (sweep["bank_conflict_cycles"] == 0).all()


def test_fit_table_and_display(result):
    fit = result.tables["fit"].set_index("layout")
    sizes = result.tables["sweep"].groupby("layout").size()
    assert fit["num_points"].to_dict() == sizes.to_dict()
    shown = result.display.set_index("layout")
    assert shown.loc["plain", "LDS"] == "64 KiB"
    assert shown.loc["partitioned", "LDS"] == "96 KiB"
    assert set(result.summary.fits) == {"plain", "partitioned"}


def test_engines_agree_and_auto_is_the_default():
    raw, _ = load_config(CONFIG)
    raw.pop("engine", None)
    raw["hardware"] = str(CONFIG.parent / raw["hardware"])
    default = run_experiment(raw, workers=1)
    fast = run_experiment(raw, overrides={"engine": "fast"}, workers=1)
    des = run_experiment(raw, overrides={"engine": "des"}, workers=1)
    assert default.summary.config.engine == "auto"
    assert fast.summary.config.engine == "fast" and des.summary.config.engine == "des"
    for name, table in des.tables.items():
        pd.testing.assert_frame_equal(table, fast.tables[name], check_exact=True)
        pd.testing.assert_frame_equal(table, default.tables[name], check_exact=True)


def narrow_ports(port_bytes: int) -> dict:
    """``hardware_overrides`` for ports of ``port_bytes`` B/cycle: every instruction's lanes
    split into enough passes that one pass fits the narrower port (the config requires it)."""
    hw = load_hardware(CONFIG.parent / "mi450.yaml")
    lane_bits = hw.wgp.warp_size.bit_length() - 1
    groupings = {}
    for name, table in hw.to_dict()["passes"]["groupings"].items():
        groupings[name] = {}
        for op, bits in table.items():
            free = [b for b in reversed(range(lane_bits)) if b not in bits]
            while (hw.wgp.warp_size >> len(bits)) * INSTRUCTIONS[op].bytes_per_lane > port_bytes:
                bits = sorted([*bits, free.pop(0)])
            groupings[name][op] = bits
    return {"ports": {"bytes_per_cycle": port_bytes}, "passes": {"groupings": groupings}}


def test_rates_follow_the_port_width():
    # Halve the port bandwidth: both steady rates halve (the table is not echoed).
    overrides = {"burst_lengths": [4, 8, 16, 32], "hardware_overrides": narrow_ports(128)}
    narrow = run_experiment(CONFIG, overrides=overrides).table.set_index("layout")
    assert narrow.loc["plain", "steady_bytes_per_cycle"] == pytest.approx(128, rel=0.02)
    assert narrow.loc["partitioned", "steady_bytes_per_cycle"] == pytest.approx(256, rel=0.02)
    assert narrow.loc["plain", "peak_bytes_per_cycle"] == 128
    assert narrow.loc["partitioned", "peak_bytes_per_cycle"] == 256


def test_a_third_candidate_from_yaml_alone():
    raw, _ = load_config(CONFIG)
    raw["layouts"]["quad"] = (
        "#ttg.partitioned_shared<{numPartitions = 4, numGroups = 1, partitionDim = 0, "
        "partitionLayout = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, "
        "order = [1, 0]}>}>"
    )
    # Rows 0,1 in one buffer and rows 2,3 in the other: each pair reads both partitions, but
    # lock-step warps fall into a rhythm where the pairs alternate partitions.
    raw["layouts"]["halves"] = raw["layouts"]["partitioned"].replace(
        "numGroups = 2", "numGroups = 1"
    )
    # Each row split along dim 1: every warp reads partition 0, then partition 1, in lock step.
    raw["layouts"]["columns"] = raw["layouts"]["halves"].replace(
        "partitionDim = 0", "partitionDim = 1"
    )
    raw["hardware"] = str(CONFIG.parent / raw["hardware"])
    raw["burst_lengths"] = [4, 8, 16, 32]
    result = run_experiment(raw)
    table = result.table.set_index("layout")
    assert list(table.index) == ["plain", "partitioned", "quad", "halves", "columns"]
    # Four 16 KiB buffers, one per 64 KiB partition.
    assert table.loc["quad", "lds_bytes"] == 3 * 65536 + 16384
    assert table.loc["quad", "peak_bytes_per_cycle"] == 512
    assert table.loc["quad", "steady_bytes_per_cycle"] == pytest.approx(512, rel=0.02)
    # 96 KiB of LDS for nothing: the pairs read the same partition in the same cycles.
    assert table.loc["columns", "lds_bytes"] == 96 * 1024
    assert table.loc["columns", "peak_bytes_per_cycle"] == 512
    assert table.loc["columns", "steady_bytes_per_cycle"] == pytest.approx(256, rel=0.02)
    sweep = result.tables["sweep"].set_index(["layout", "burst"])
    assert sweep.loc[("columns", 32), "partition_conflict_cycles"] > 0
    assert (table["steady_bytes_per_cycle"] <= table["peak_bytes_per_cycle"] * 1.01).all()


def test_case_pipeline_pieces():
    raw, source = load_config(CONFIG)
    cfg = parse_config(raw, source)
    assert cfg.shape(32) == (4, 8192) and cfg.vec == 8
    plain, part = prepare(cfg, "plain", 32), prepare(cfg, "partitioned", 32)
    assert plain.allocation.offsets_of("plain") == [0]
    assert part.allocation.offsets_of("partitioned") == [0, 65536]
    assert np.prod(plain.shape) * cfg.elem_bytes == np.prod(part.shape) * cfg.elem_bytes == 65536
    assert usable_ports(plain.trace, cfg.hw) == 1
    assert usable_ports(part.trace, cfg.hw) == 2
    # Warp w's row lands in partition w % 2 when partitioned, partition 0 when plain.
    lds = part.trace.addr[part.trace.addr[:, 0] >= 0]
    warps = part.trace.warp[part.trace.addr[:, 0] >= 0]
    assert ((lds[:, 0] // 65536) == warps % 2).all()
    assert (plain.trace.addr[plain.trace.addr[:, 0] >= 0] < 65536).all()


def _raw(**changes):
    raw, _ = load_config(CONFIG)
    raw["hardware"] = str(CONFIG.parent / raw["hardware"])
    raw.update(changes)
    return raw


@pytest.mark.parametrize(
    "changes, message",
    [
        (
            {"burst_lenghts": [1, 2]},
            "field 'burst_lenghts': unknown field; did you mean 'burst_lengths'?",
        ),
        ({"burst_lengths": [32]}, "field 'burst_lengths': .*at least 2 distinct"),
        ({"report_burst": 48}, "field 'report_burst': 48 is not among burst_lengths"),
        (
            {"burst_lengths": [1, 256], "report_burst": 256},
            "field 'burst_lengths': burst 256 .*does not fit in the LDS",
        ),
        ({"dtype": "fp61"}, "field 'dtype': unknown value 'fp61'; did you mean 'fp16'?"),
        (
            {"instruction": "ds_load_b12"},
            "field 'instruction': unknown load instruction 'ds_load_b12'; did you mean",
        ),
        ({"warps": 8}, "field 'distributed': .*4 warps but warps is 8"),
        (
            {"layouts": {"bad": "#ttg.swizzled_shared<{vec = 1, perPhase = 1"}},
            "field 'layouts.bad': ",
        ),
        (
            {
                "layouts": {
                    "too_many": "#ttg.partitioned_shared<{numPartitions = 8, numGroups = 1, partitionDim = 0, partitionLayout = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>}>"
                }
            },
            "field 'layouts.too_many': does not fit in the LDS even at burst 1",
        ),
        (
            {
                "layouts": {
                    "dim2": "#ttg.partitioned_shared<{numPartitions = 2, numGroups = 1, partitionDim = 2, partitionLayout = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>}>"
                }
            },
            "field 'layouts.dim2': ",
        ),
        (
            {"burst_lengths": [1, 3, 4], "report_burst": 4},
            "field 'layouts.plain': shape \\[4, 768\\]: .*power of two",
        ),
        ({"layouts": {}}, "field 'layouts': no candidates"),
        ({"hardware": "nope.yaml"}, "field 'hardware': .*nope.yaml: no such hardware file"),
        (
            {"hardware_overrides": {"ports": {"byte_per_cycle": 1}}},
            "field 'hardware_overrides.ports.byte_per_cycle': cannot override an unknown field",
        ),
    ],
)
def test_bad_configs_are_one_line_config_errors(changes, message):
    with pytest.raises(ConfigError, match=f"^<config>: {message}") as err:
        run_experiment(_raw(**changes))
    # a message per problem (a burst too big for both candidates: two), each one line
    assert all(m.startswith("<config>: field '") and "\n" not in m for m in err.value.messages)


# ------------------------------------------------------------------ drift (configs/lds_drift.yaml)
DRIFT_CONFIG = ROOT / "configs" / "lds_drift.yaml"
DRIFT_SMALL = ["drift.seeds=4", "drift.jitter_cycles=[0, 16]"]


@pytest.fixture(scope="module")
def drift_run(tmp_path_factory):
    """configs/lds_drift.yaml through the CLI, with few seeds: the JSON rows and the out dir."""
    import contextlib
    import io
    import json

    from wgpsim.cli import main

    out = tmp_path_factory.mktemp("drift")
    sets = [a for s in DRIFT_SMALL for a in ("--set", s)]
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(["run", str(DRIFT_CONFIG), "--json", "--out", str(out), *sets])
    assert code == 0
    return json.loads(stdout.getvalue()), out


def test_drift_table_rates_and_intervals(drift_run):
    rows, out = drift_run
    drift = pd.read_csv(out / "drift.csv")
    runs = pd.read_csv(out / "drift_runs.csv")
    sweep = pd.read_csv(out / "sweep.csv").set_index(["layout", "burst"])
    assert [r["layout"] for r in rows] == ["plain", "partitioned"]  # the main table is unchanged
    assert drift[["layout", "jitter_cycles"]].values.tolist() == [
        ["plain", 0],
        ["plain", 16],
        ["partitioned", 0],
        ["partitioned", 16],
    ]
    assert (drift["seeds"] == 4).all() and len(runs) == 2 * 2 * 4
    assert sorted(set(runs["seed"])) == [0, 1, 2, 3]  # config seed 0 and the next three
    d = drift.set_index(["layout", "jitter_cycles"])
    # Jitter 0 is the lock step of the main sweep at the same burst (32): same stalls, cycles.
    for layout in ("plain", "partitioned"):
        at = sweep.loc[(layout, 32)]
        passes = runs.loc[runs["layout"] == layout, "passes"].iloc[0]
        assert d.loc[(layout, 0), "conflict_rate"] == at["partition_conflict_cycles"] / passes
        assert d.loc[(layout, 0), "cycles"] == at["cycles"]
        assert d.loc[(layout, 0), "conflict_rate_std"] == 0
    # Plain: the pairs share partition 0 and conflict; drift lowers the rate, not to zero.
    assert 0 < d.loc[("plain", 16), "conflict_rate"] < d.loc[("plain", 0), "conflict_rate"]
    # Partitioned: each pair has its own partition, so no timing can make them conflict.
    assert (d.loc["partitioned", "conflict_rate_ci_high"] == 0).all()
    for col in ("conflict_rate", "cycles"):
        assert (drift[f"{col}_ci_low"] <= drift[col]).all()
        assert (drift[col] <= drift[f"{col}_ci_high"]).all()
    means = runs.groupby(["layout", "jitter_cycles"], sort=False)["conflict_rate"].mean()
    assert np.allclose(means.to_numpy(), drift["conflict_rate"].to_numpy())
    assert (out / "conflict_rate_vs_jitter.png").stat().st_size > 0


def test_drift_config_prints_its_drift_result_first(tmp_path, capsys, monkeypatch):
    # issue 25: lds_drift.yaml printed only the bandwidth table; its own result (the
    # partition-conflict rate and cycles per jitter) now comes first, then the bandwidth table
    from wgpsim.cli import main

    monkeypatch.setenv("COLUMNS", "200")
    sets = [a for s in DRIFT_SMALL for a in ("--set", s)]
    assert main(["run", str(DRIFT_CONFIG), "--out", str(tmp_path), "--workers", "1", *sets]) == 0
    text = capsys.readouterr().out
    drift = pd.read_csv(tmp_path / "drift.csv")
    assert text.index("partition conflicts under drift") < text.index("steady B/cycle")
    plain16 = drift[(drift["layout"] == "plain") & (drift["jitter_cycles"] == 16)].iloc[0]
    row = next(line for line in text.splitlines() if "plain" in line and " 16 " in line)
    assert f"{100 * plain16['conflict_rate']:.1f} %" in row
    assert f"{plain16['cycles']:.1f} [" in row


def test_main_config_prints_no_drift_table(capsys, tmp_path):
    from wgpsim.cli import main

    assert main(["run", str(CONFIG), "--out", str(tmp_path), "--workers", "1"]) == 0
    assert "under drift" not in capsys.readouterr().out


def test_main_config_has_no_drift_section(result):
    assert "drift" not in result.tables and "drift" not in yaml.safe_load(CONFIG.read_text())


def test_drift_points_resume_from_the_checkpoint(tmp_path):
    overrides = ["burst_lengths=[4, 8]", "report_burst=8", *DRIFT_SMALL]
    path = tmp_path / "checkpoint.jsonl"
    first = run_experiment(DRIFT_CONFIG, overrides=overrides, checkpoint=path, workers=1)
    lines = path.read_text().splitlines()
    assert sum('"lds_bandwidth.drift"' in line for line in lines) == 2 * 2 * 4
    again = run_experiment(
        DRIFT_CONFIG, overrides=overrides, checkpoint=path, resume=True, workers=1
    )
    assert path.read_text().splitlines() == lines  # nothing ran again
    for name in ("drift", "drift_runs"):
        pd.testing.assert_frame_equal(first.tables[name], again.tables[name])


@pytest.mark.parametrize(
    "drift, message",
    [
        ({"jiter_cycles": [1]}, "field 'drift.jiter_cycles': .*did you mean 'jitter_cycles'"),
        ({"seeds": 1}, "field 'drift.seeds': 1 is out of range \\(valid: 2\\.\\.10000\\)"),
        ({"jitter_cycles": [-2, 4]}, "field 'drift.jitter_cycles': -2 is out of range"),
        ({"jitter_cycles": 4}, "field 'drift.jitter_cycles': expected a list"),
        ({"burst": 4096}, "field 'drift.burst': 4096: "),
        (
            {"confidence": 95},
            "field 'drift.confidence': 95 is out of range \\(valid: 0\\.5\\.\\.0\\.9999\\)",
        ),
        ([0, 2], "field 'drift': expected a mapping"),
    ],
)
def test_bad_drift_sections_are_one_line_config_errors(drift, message):
    with pytest.raises(ConfigError, match=f"^<config>: {message}") as err:
        run_experiment(_raw(drift=drift, burst_lengths=[1, 2], report_burst=2))
    assert "\n" not in str(err.value)


def test_peak_is_the_bytes_a_pass_moves_times_the_ports():
    # ds_load_b64 with fp16: 4 elements a lane, one pass of 32 lanes x 8 B = 256 B (a full port);
    # ds_load_b32: 2 elements a lane, one pass of 128 B: the ceiling halves, and the model's
    # steady rate stays under it.
    for op, per_pass in (("ds_load_b64", 256), ("ds_load_b32", 128)):
        raw, _ = load_config(CONFIG)
        raw["hardware"] = str(CONFIG.parent / raw["hardware"])
        raw["instruction"] = op
        # fp16 elements a lane: 8 B -> 4, 4 B -> 2
        raw["distributed"] = raw["distributed"].replace("[1, 8]", f"[1, {per_pass // 64}]")
        raw["burst_lengths"] = [4, 8, 16, 32]
        table = run_experiment(raw).table.set_index("layout")
        assert table.loc["plain", "peak_bytes_per_cycle"] == per_pass
        assert table.loc["partitioned", "peak_bytes_per_cycle"] == 2 * per_pass
        assert (table["steady_bytes_per_cycle"] <= table["peak_bytes_per_cycle"] * 1.01).all()


def test_peak_is_taken_at_the_reported_burst():
    # Eight warps: at burst 32 the plain [8, 8192] fp16 tensor is 128 KiB, two partitions, and
    # pairs can be served from different ones; at burst 1 it all sits in partition 0.
    raw, _ = load_config(CONFIG)
    raw["hardware"] = str(CONFIG.parent / raw["hardware"])
    raw["warps"] = 8
    raw["distributed"] = raw["distributed"].replace("warpsPerCTA = [4, 1]", "warpsPerCTA = [8, 1]")
    raw["burst_lengths"] = [1, 32]
    raw["layouts"] = {"plain": raw["layouts"]["plain"]}
    table = run_experiment(raw).table.set_index("layout")
    assert table.loc["plain", "peak_bytes_per_cycle"] == 512
    assert table.loc["plain", "raw_bytes_per_cycle"] <= 512


def test_a_padded_candidate_takes_the_shape_of_every_burst():
    # Named once with a small shape; the sweep fills in [4, N] at each burst (and the piece
    # shape inside a partitioned layout). The padding then breaks nothing: same rates.
    raw, _ = load_config(CONFIG)
    raw["hardware"] = str(CONFIG.parent / raw["hardware"])
    raw["burst_lengths"] = [4, 8, 16, 32]
    padded = "#ttg.padded_shared<[8192:+8] {order = [1, 0], shape = [4, 256]}>"
    raw["layouts"] = {
        "padded": padded,
        "padded_partitioned": "#ttg.partitioned_shared<{numPartitions = 2, numGroups = 2, "
        f"partitionDim = 0, partitionLayout = {padded.replace('[4, 256]', '[1, 256]')}}}>",
    }
    table = run_experiment(raw).table.set_index("layout")
    assert table.loc["padded", "steady_bytes_per_cycle"] == pytest.approx(256, rel=0.02)
    assert table.loc["padded_partitioned", "steady_bytes_per_cycle"] == pytest.approx(512, rel=0.02)
    # 8 elements of padding after each 8192-element row: 16 B more per row but the last.
    assert table.loc["padded", "lds_bytes"] == 65536 + 3 * 16


def test_bank_conflict_column_explains_fp32():
    """fp32 with the blog's 8-element lanes: each ds_load_b128 lane covers 16 of a lane's 32
    bytes, so a 16-lane pass spans 512 B and every bank serves 2 dwords: one conflict cycle per
    pass, and the steady rate halves."""
    from wgpsim.experiments import run_experiment

    fp16 = run_experiment(CONFIG, overrides=["burst_lengths=[8, 32]"]).table.set_index("layout")
    fp32 = run_experiment(CONFIG, overrides=["burst_lengths=[8, 32]", "dtype=fp32"])
    t32 = fp32.table.set_index("layout")
    assert (fp16["bank_conflict_cycles"] == 0).all() and (fp16["bank_conflict_rate"] == 0).all()
    assert t32.loc["plain", "bank_conflict_cycles"] == 256  # 256 passes, one extra cycle each
    assert t32.loc["plain", "bank_conflict_rate"] == pytest.approx(100.0)
    assert t32.loc["plain", "steady_bytes_per_cycle"] == pytest.approx(128.0, rel=0.01)
    assert list(fp32.display["bank conflicts"]) == ["256 (100%)", "256 (100%)"]


def test_poor_fit_warns():
    from wgpsim.experiments import run_experiment

    eight = (
        '"#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], '
        'warpsPerCTA = [8, 1], order = [1, 0]}>"'
    )
    result = run_experiment(CONFIG, overrides=["warps=8", f"distributed={eight}"])
    r2 = result.table.set_index("layout")["r_squared"]
    assert r2["plain"] == pytest.approx(0.975, abs=0.002)
    assert len(result.notes) == 1 and result.notes[0].startswith("plain: poor steady-state fit")
    assert run_experiment(CONFIG, overrides=["burst_lengths=[8, 32]"]).notes == ()


def test_gfx950_measures_the_plain_layout_in_its_own_terms():
    """`wgpsim run configs/lds_bandwidth.yaml --target gfx950`: ds_read_b128 over wave64 rows,
    the partitioned candidate (MI450's) skipped with a line; contiguous 16-byte reads by 64
    lanes cover 1 KiB with no bank conflict, at one 64-bank x 4-byte row a cycle."""
    from wgpsim.hw.config import hardware_path

    got = run_experiment(CONFIG, hw_path=hardware_path("gfx950"), workers=1)
    table = got.table.set_index("layout")
    assert list(table.index) == ["plain"]
    assert any("'partitioned' skipped" in n for n in got.notes)
    cfg = got.summary.config
    assert cfg.instruction == "ds_read_b128"
    assert prepare(cfg, "plain", 1).trace.lanes == 64
    assert table.loc["plain", "bank_conflict_cycles"] == 0
    assert table.loc["plain", "steady_bytes_per_cycle"] == pytest.approx(64 * 4, rel=0.01)
