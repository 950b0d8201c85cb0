"""The gfx950 and gfx942 hardware files: shipped, sourced, validated, their instruction sets, and
``--target NAME`` (the shorthand for ``--hw`` on replay, lower, run and search)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from hardware_sources import value_sources

from wgpsim.cli import main
from wgpsim.errors import ConfigError
from wgpsim.hw.config import HardwareConfig, load_hardware
from wgpsim.packaged import hardware_path, hardware_targets
from wgpsim.trace.instructions import INSTRUCTIONS

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"gfx950": "hip:gfx950", "gfx942": "hip:gfx942", "mi450": "hip:gfx1250"}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_each_target_ships_in_the_package_with_a_configs_link(name):
    linked = ROOT / "configs" / f"{name}.yaml"
    assert linked.is_symlink() and linked.resolve() == hardware_path(name).resolve()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"hw/*.yaml"' in pyproject  # package-data: every hardware file ships
    hw = load_hardware(hardware_path(name))
    assert (hw.name, hw.target) == (name, TARGETS[name])
    assert name in hardware_targets()


@pytest.mark.parametrize("name", ["gfx950", "gfx942"])
def test_every_constant_names_its_source(name):
    """Each value line carries, inline or in the comment block above it, its kind of source:
    measured, document, derived or assumption (the file's header says what each means)."""
    for n, line, text in value_sources(hardware_path(name)):
        assert re.search(r"\b(measured|document|derived|assumption)\b", text), (
            f"{name} line {n} has no source: {line}"
        )


def test_the_targets_differ_where_the_sources_say():
    gfx950, gfx942 = load_hardware(hardware_path("gfx950")), load_hardware(hardware_path("gfx942"))
    assert gfx950.wgp.warp_size == gfx942.wgp.warp_size == 64
    assert (gfx950.partitions.lds_bytes, gfx942.partitions.lds_bytes) == (160 * 1024, 64 * 1024)
    assert gfx950.partitions.count == gfx942.partitions.count == 1
    # gfx950: reads 64 banks, writes 32, ds_read_b96 32 (HipKittens); gfx942: 32 throughout
    counts = {op: gfx950.bank_count(op) for op in ("ds_read_b128", "ds_write_b64", "ds_read_b96")}
    assert counts == {"ds_read_b128": 64, "ds_write_b64": 32, "ds_read_b96": 32}
    assert {gfx942.bank_count(op) for op in gfx942.instructions} == {32}
    # the transposed loads and the x3/x4 direct-to-LDS writes are gfx950's only
    only950 = set(gfx950.instructions) - set(gfx942.instructions)
    assert only950 == {
        "ds_read_b64_tr_b16", "ds_read_b64_tr_b8", "ds_read_b64_tr_b4", "ds_read_b96_tr_b6",
        "global_load_lds_dwordx3", "global_load_lds_dwordx4",
    }  # fmt: skip
    assert set(gfx942.instructions) < set(gfx950.instructions)
    assert all(INSTRUCTIONS[op].family == "gfx9" for op in gfx950.instructions)


def _raw(name: str) -> dict:
    return yaml.safe_load(hardware_path(name).read_text())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(target="gfx950"), "field 'target' must be Triton's target name"),
        (
            lambda d: d["banks"].update(by_instruction={"ds_read_b512": 32}),
            "'banks.by_instruction' must be a mapping of instruction -> bank count",
        ),
        (
            lambda d: d["banks"].update(by_instruction={"ds_load_b128": 32}),
            "'banks.by_instruction.ds_load_b128' must be an instruction of this target",
        ),
        (lambda d: d["banks"].update(store_count=0), "'banks.store_count' must be a positive"),
        (
            lambda d: d["passes"]["groupings"].update(other={"ds_load_b128": [4, 5]}),
            "'passes.groupings.other.ds_load_b128': not an instruction of this target",
        ),
        (
            lambda d: d["passes"]["groupings"]["measured"].pop("ds_read_b64"),
            "missing field 'passes.groupings.measured.ds_read_b64' (the target has ds_read2_b64",
        ),
    ],
)
def test_the_schema_checks_the_new_fields(change, message):
    data = _raw("gfx950")
    change(data)
    with pytest.raises(ConfigError, match=re.escape(message)):
        HardwareConfig.from_dict(data, source="gfx950.yaml")


def _wave64_trace(path: Path, op: str) -> Path:
    rows = [
        {"num_warps": 2, "lanes": 64},
        *({"warp": w, "op": "clock", "label": "start"} for w in range(2)),
        *({"warp": w, "op": op, "addr": {"base": 0, "stride": 256}} for w in range(2)),
        *({"warp": w, "op": "wait_ds", "n": 0} for w in range(2)),
        *({"warp": w, "op": "clock", "label": "end"} for w in range(2)),
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_target_is_the_shorthand_of_hw(tmp_path, capsys):
    trace = _wave64_trace(tmp_path / "b128.jsonl", "ds_read_b128")
    out = {}
    for flags in (["--target", "gfx950"], ["--hw", str(ROOT / "configs" / "gfx950.yaml")]):
        assert main(["replay", str(trace), *flags, "--json"]) == 0
        out[flags[0]] = json.loads(capsys.readouterr().out)
    assert out["--target"]["bank_cycles"] == out["--hw"]["bank_cycles"]
    assert out["--target"]["measured_cycles"] == out["--hw"]["measured_cycles"]
    # 2 warps x 4 passes of 16 lanes, every lane in bank 0-3 at its own address: 16 cycles each
    assert out["--target"]["bank_cycles"] == 2 * 4 * 16
    assert main(["replay", str(trace), "--target", "gfx942", "--json"]) == 0
    # gfx942: 8 passes of 8 lanes on 32 banks
    assert json.loads(capsys.readouterr().out)["bank_cycles"] == 2 * 8 * 8


def test_a_trace_using_an_instruction_the_target_lacks_is_refused_in_one_line(tmp_path, capsys):
    trace = _wave64_trace(tmp_path / "tr.jsonl", "ds_read_b64_tr_b16")
    assert main(["replay", str(trace), "--target", "gfx942"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "the trace uses ds_read_b64_tr_b16, which gfx942 (hip:gfx942) does not have" in err
    assert main(["replay", str(trace), "--target", "gfx950", "--json"]) == 0


@pytest.mark.parametrize("verb", ["replay", "lower", "run", "search"])
def test_every_verb_takes_target_and_refuses_it_with_hw(verb, capsys):
    with pytest.raises(SystemExit) as stop:
        main([verb, "x", "--target", "gfx950", "--hw", "y.yaml"])
    assert stop.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main([verb, "x", "--target", "mi455"])
    assert stop.value.code == 2
    assert (
        "unknown target 'mi455' (valid: mi450|gfx1250, gfx942, gfx950)" in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    "argv",
    [["replay", "x"], ["lower", "--shared", "x", "--dst", "y", "--shape", "1", "--dtype", "fp16"],
     ["kernel", "x"], ["diff", "x", "y"], ["compile", "x.py:f"], ["run", "x"], ["search", "x"],
     ["calibrate", "probes", "--out", "kit"], ["calibrate", "lanes", "kit"]],
)  # fmt: skip
def test_one_target_vocabulary_on_every_verb(argv, capsys):
    """Review 2, #9: a file name, its arch and Triton's name all pick the same hardware file on
    every verb (``calibrate probes`` once refused ``mi450``, ``kernel`` refused ``gfx1250``)."""
    from wgpsim.cli import build_parser
    from wgpsim.packaged import hardware_path

    parsed = [
        build_parser().parse_args([*argv, "--target", name])
        for name in ("mi450", "gfx1250", "hip:gfx1250")
    ]
    values = {str(p.hw if argv[:2] != ["calibrate", "probes"] else p.target) for p in parsed}
    assert values in ({str(hardware_path("mi450"))}, {"gfx1250"})
    with pytest.raises(SystemExit):
        build_parser().parse_args([*argv, "--target", "gfx90a"])
    assert "(valid: mi450|gfx1250, gfx942, gfx950)" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["gfx950", "gfx942"])
@pytest.mark.parametrize("seed", range(6))
def test_des_and_fast_agree_on_the_targets(name, seed):
    """Random wave64 traces over every instruction of the target (its own bank counts: gfx950's
    32-bank writes and ds_read_b96, one port, one partition): the two engines, written apart,
    give the same cycles."""
    import numpy as np

    from wgpsim.engine import simulate
    from wgpsim.trace import random_trace

    hw = load_hardware(hardware_path(name))
    trace = random_trace(
        np.random.default_rng(seed), num_warps=4, ops=hw.instructions, lanes=64,
        lds_bytes=hw.partitions.lds_bytes,
    )  # fmt: skip
    des, fast = (simulate(trace, hw, engine=e) for e in ("des", "fast"))
    assert (des.total_cycles, des.bank_cycles, des.passes) == (
        fast.total_cycles, fast.bank_cycles, fast.passes,
    )  # fmt: skip
    assert des.passes > 0
