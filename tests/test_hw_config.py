"""wgpsim/hw/mi450.yaml -> HardwareConfig: contents, provenance comments, validation, overrides."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from hardware_sources import value_sources

from wgpsim.errors import ConfigError
from wgpsim.hw.config import HardwareConfig, load_hardware, parse_overrides
from wgpsim.trace.instructions import INSTRUCTIONS

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "mi450.yaml"
PACKAGED = ROOT / "wgpsim" / "hw" / "mi450.yaml"


@pytest.fixture(scope="module")
def hw() -> HardwareConfig:
    return HardwareConfig.from_yaml(CONFIG)


def test_one_hardware_file():
    # configs/mi450.yaml is the packaged file itself (a link), not a second copy to keep in step
    assert CONFIG.resolve() == PACKAGED.resolve() and not PACKAGED.is_symlink()


def test_seed_topology(hw):
    assert hw.wgp.simds == 4
    assert dict(hw.wgp.pairs) == {"A": (0, 2), "B": (1, 3)}
    assert [hw.pair_of_warp(w) for w in range(8)] == [0, 1, 0, 1, 0, 1, 0, 1]
    assert hw.ports.names == ("L", "C") and hw.ports.bytes_per_cycle == 256
    p = hw.partitions
    assert (p.size, p.count, p.lds, p.l0, p.lds_bytes) == (65536, 6, (0, 1, 2, 3, 4), (5,), 327680)
    assert hw.banks.count * hw.banks.width_bytes == hw.ports.bytes_per_cycle


def test_every_instruction_has_a_lane_grouping(hw):
    # MI450 has exactly the gfx1250-spelled instructions (the gfx9 ones are other targets')
    assert sorted(hw.instructions) == sorted(
        n for n, i in INSTRUCTIONS.items() if i.family == "gfx12"
    )
    for op in hw.instructions:
        masks = hw.lane_masks(op)
        lanes_per_pass = hw.wgp.warp_size >> len(masks)
        assert lanes_per_pass * INSTRUCTIONS[op].bytes_per_lane <= hw.ports.bytes_per_cycle
    assert hw.lane_masks("ds_load_b128") == ((4,),)
    triton = hw.with_overrides(**{"passes.lane_grouping": "triton"})
    assert triton.lane_masks("ds_load_b128") == ((2,),)
    assert triton.lane_masks("ds_load_b64") == hw.lane_masks("ds_load_b64")


def test_a_file_without_partitions(hw):
    """partitions.count 1 with the whole LDS in one partition (gfx950: 160 KiB) and no L0;
    lds_bytes must still be len(lds) * size."""
    one = {"partitions.count": 1, "partitions.lds": [0], "partitions.l0": []}
    flat = hw.with_overrides(**one, **{"partitions.size": 163840, "partitions.lds_bytes": 163840})
    assert (flat.partitions.count, flat.partitions.lds_bytes) == (1, 163840)
    with pytest.raises(ConfigError, match="'partitions.lds_bytes' must be len"):
        hw.with_overrides(**one, **{"partitions.size": 163840, "partitions.lds_bytes": 327680})


def test_store_count_is_optional_and_round_trips(hw):
    assert hw.banks.store_count is None and hw.to_dict()["banks"]["store_count"] is None
    split = hw.with_overrides(**{"banks.store_count": 32})
    assert split.to_dict()["banks"]["store_count"] == 32
    assert HardwareConfig.from_dict(split.to_dict()) == split
    assert (split.bank_count("ds_load_b64"), split.bank_count("ds_store_b64")) == (64, 32)
    assert split.bank_count("tensor_load_to_lds") == 32  # the TDM's rows are writes


def test_groupings_read_both_forms_and_round_trip(hw):
    """A grouping entry is the lane bits that select the pass, or masks whose XOR is a pass
    bit; the plain form still writes back plain (the MI450 file's to_dict is unchanged)."""
    xor = hw.with_overrides(**{"passes.groupings.blog.ds_load_b128": [[2, 3, 4]]})
    assert xor.lane_masks("ds_load_b128") == ((2, 3, 4),)
    assert xor.to_dict()["passes"]["groupings"]["blog"]["ds_load_b128"] == [[2, 3, 4]]
    assert hw.to_dict()["passes"]["groupings"]["blog"]["ds_load_b128"] == [4]
    assert HardwareConfig.from_dict(xor.to_dict()) == xor


def test_every_constant_has_a_source_comment():
    """Every value line carries a comment naming seed/fit/assumption (or LLVM's scheduling
    model or Triton's AMD TargetInfo, named sources docs/DESIGN.md allows), inline or in the nearest comment block above
    it (a table's rows share the comment above the table)."""
    for n, line, text in value_sources(CONFIG):
        assert re.search(
            r"\b(seed|fit|assumption|LLVM GFX1250SpeedModel|Triton's AMD TargetInfo)\b", text
        ), f"line {n} has no source: {line}"


def test_fit_arithmetic_matches_the_constants(hw):
    t = hw.timing
    assert t.clock_latency + t.lds_latency + t.barrier_latency == 67
    assert "67 = clock_latency + lds_latency + barrier_latency" in CONFIG.read_text()


def test_load_hardware_default_and_cache(hw):
    assert load_hardware() == hw
    assert load_hardware() is load_hardware()


def _raw() -> dict:
    return yaml.safe_load(CONFIG.read_text())


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda d: d["ports"].update(bytes_per_cycle=-1),
            "field 'ports.bytes_per_cycle' must be a positive integer (valid: 1..65536), got -1",
        ),
        (
            lambda d: d["timing"].update(lds_latency=0),
            "field 'timing.lds_latency' must be a positive integer (valid: 1..65536), got 0",
        ),
        (
            lambda d: d["timing"].update(queue_depth="4"),
            "field 'timing.queue_depth' must be a positive integer (valid: 1..1024), got '4'",
        ),
        (
            lambda d: d["timing"].update(issue_interval=1.5),
            "'timing.issue_interval' must be a positive integer",
        ),
        (lambda d: d["timing"].update(extra=3), "unknown field 'timing.extra'"),
        (lambda d: d["banks"].pop("count"), "missing field 'banks.count'"),
        (
            lambda d: d["banks"].update(store_count=0),
            "field 'banks.store_count' must be a positive integer (valid: 1..4096), got 0",
        ),
        (lambda d: d.pop("drift"), "missing field 'drift'"),
        (lambda d: d["drift"].update(model=False), "quote it in YAML"),
        (
            lambda d: d["drift"].update(jitter_cycles=-2),
            "'drift.jitter_cycles' must be a non-negative integer",
        ),
        (
            lambda d: d["passes"].update(lane_grouping="nvidia"),
            "'passes.lane_grouping' must be one of blog, triton",
        ),
        (
            lambda d: d["passes"]["groupings"]["blog"].update(ds_load_b128=[]),
            "ds_load_b128' must be enough passes",
        ),
        (  # pass bits 0 and 1 are one map: some passes would be empty
            lambda d: d["passes"]["groupings"]["blog"].update(ds_load_b128=[[2, 3], [2, 3]]),
            "ds_load_b128' must be a list of lane bits in 0..4, or of masks",
        ),
        (
            lambda d: d["passes"]["groupings"]["blog"].update(ds_load_b128=[[2, 5]]),
            "ds_load_b128' must be a list of lane bits in 0..4, or of masks",
        ),
        (
            lambda d: d["passes"]["groupings"]["blog"].update(ds_load_b128=[[]]),
            "ds_load_b128' must be a list of lane bits in 0..4, or of masks",
        ),
        (
            lambda d: d["passes"]["groupings"]["blog"].pop("ds_load_b32"),
            "missing field 'passes.groupings.blog.ds_load_b32' (the target has ds_load_2addr_b32",
        ),
        (lambda d: d["passes"]["groupings"]["blog"].update(ds_load_b512=[]), "unknown instruction"),
        (
            lambda d: d["partitions"].update(lds_bytes=1000),
            "'partitions.lds_bytes' must be len(lds) * size",
        ),
        (
            lambda d: d["wgp"]["pairs"].update(B=[1]),
            "'wgp.pairs' must be a partition of SIMDs 0..3",
        ),
        (
            lambda d: d["wgp"].update(warp_size=16),
            "'wgp.warp_size' must be 32 (wave32) or 64 (wave64), got 16",
        ),
        (
            lambda d: d["partitions"].update(lds=[1, 2, 3, 4, 5], l0=[0]),
            "'partitions.lds' must be partitions 0..4 in order",
        ),
    ],
)
def test_validation_errors(tmp_path, mutate, message):
    data = _raw()
    mutate(data)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=re.escape(message)) as err:
        HardwareConfig.from_yaml(path)
    assert "bad.yaml: " in str(err.value)
    assert "\n" not in str(err.value)


def test_error_names_the_file_as_given(hw):
    with pytest.raises(ConfigError) as err:
        hw.with_overrides(**{"ports.bytes_per_cycle": -1})
    assert str(err.value).endswith(
        "field 'ports.bytes_per_cycle' must be a positive integer (valid: 1..65536), got -1"
    )
    assert "mi450.yaml" in str(err.value)


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="no such hardware config"):
        HardwareConfig.from_yaml(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nports: [unclosed\nbanks: 3\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: not valid YAML \(.* at line \d+\)$") as err:
        HardwareConfig.from_yaml(bad)
    assert "\n" not in str(err.value)
    with pytest.raises(ConfigError, match=r"is a directory, expected a hardware YAML file"):
        HardwareConfig.from_yaml(tmp_path)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(
        ConfigError, match=r"binary.yaml: cannot read the hardware YAML \(not UTF-8"
    ):
        HardwareConfig.from_yaml(binary)


def test_overrides_round_trip(hw):
    assert HardwareConfig.from_dict(hw.to_dict()) == hw
    changed = hw.with_overrides(**{"timing.lds_latency": 40, "drift.model": "uniform"})
    assert changed.timing.lds_latency == 40 and changed.drift.model == "uniform"
    assert changed.timing.queue_depth == hw.timing.queue_depth
    assert hw.timing.lds_latency == 56  # the original is untouched
    nested = hw.with_overrides(timing={"barrier_latency": 9})
    assert nested.timing.barrier_latency == 9 and nested.timing.lds_latency == 56
    with pytest.raises(ConfigError, match="unknown field 'timing.latency'"):
        hw.with_overrides(**{"timing.latency": 3})


def test_parse_overrides():
    assert parse_overrides(["a.b=3", "c=[1, 2]", "d=triton"]) == {
        "a.b": 3,
        "c": [1, 2],
        "d": "triton",
    }
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_overrides(["timing.lds_latency"])


def test_override_typos_suggest_the_field():
    from wgpsim.errors import ConfigError
    from wgpsim.hw import load_hardware

    with pytest.raises(ConfigError, match=r"did you mean 'lds_latency'\?"):
        load_hardware().with_overrides(**{"timing.lds_latncy": 40})


def test_the_old_grouping_name_seed_still_loads_as_blog(tmp_path):
    """Issue 25: the AMD blog's lane grouping is named ``blog`` ("seed" also names the random
    seed); a hardware file or override written with ``seed`` loads with the same passes."""
    data = yaml.safe_load((ROOT / "wgpsim" / "hw" / "mi450.yaml").read_text())
    assert data["passes"]["lane_grouping"] == "blog"
    data["passes"]["lane_grouping"] = "seed"
    data["passes"]["groupings"] = {
        ("seed" if k == "blog" else k): v for k, v in data["passes"]["groupings"].items()
    }
    old = tmp_path / "old.yaml"
    old.write_text(yaml.safe_dump(data))
    hw, legacy = load_hardware(), load_hardware(old)
    assert legacy.passes.lane_grouping == "blog"
    for op in ("ds_load_b128", "ds_store_b128", "ds_load_b64"):
        assert legacy.lane_masks(op) == hw.lane_masks(op)
    overridden = hw.with_overrides(**{"passes.lane_grouping": "seed"})
    assert overridden.passes.lane_grouping == "blog"
