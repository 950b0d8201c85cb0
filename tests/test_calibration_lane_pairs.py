"""The CDNA (gfx942, gfx950) lane-pair kit: its kernels compile for both targets with Triton 3.9.0
(in a child process) and hold the named ds instruction, 16 times, between the two ``s_memtime``
and no other LDS access; a rocprofv3 counter CSV (``tests/fixtures/calibration``, README.txt
says how it was written from rocprofv3's documented layout) fits back to the bank count and
phases of the device it describes (the issue's measured gfx950 ``ds_read_b128`` phases); a file
without ``SQ_LDS_BANK_CONFLICT`` or a malformed one is one line and exit code 2."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wgpsim.calibration.lanes.compare import lane_compare
from wgpsim.calibration.lanes.counters import probe_counters
from wgpsim.calibration.lanes.fit import compare_hardware, counter_values, fit_lanes, span_values
from wgpsim.calibration.lanes.pairs import OPS, REPEATS, TARGETS, catalogue
from wgpsim.calibration.lanes.traces import renamed, simulated_values
from wgpsim.calibration.measurements import read_measurements
from wgpsim.calibration.probe_gluon import write_kit
from wgpsim.calibration.probes import read_kit
from wgpsim.calibration.rocprof_csv import read_counters
from wgpsim.cli import main
from wgpsim.errors import ModuleError
from wgpsim.hw import load_hardware
from wgpsim.packaged import hardware_path

FIXTURES = Path(__file__).parent / "fixtures" / "calibration"

CHILD = textwrap.dedent(
    """
    import importlib.util, json, re, sys
    from pathlib import Path
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    out = {}
    for path in sorted(Path(sys.argv[1], "probes").glob("*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        sig = {"out_ptr": "*i32", "cycles_ptr": "*i64", "lane_a": "i32", "lane_b": "i32",
               "offset_b": "i32"}
        compiled = triton.compile(
            GluonASTSource(m.kernel, sig, constexprs={}),
            target=GPUTarget("hip", sys.argv[2], 64),
            options={"num_warps": m.NUM_WARPS},
        )
        lines = [line.strip() for line in compiled.asm["amdgcn"].splitlines()
                 if re.match(r"\\s*[a-z]", line) and not line.strip().startswith(".")]
        clocks = [i for i, line in enumerate(lines) if line.startswith("s_memtime")]
        out[m.NAME] = {"clocks": len(clocks), "timed": lines[clocks[0] + 1 : clocks[1]],
                       "ds": [line for line in lines if line.startswith("ds_")],
                       "lds": compiled.metadata.shared}
    print(json.dumps(out))
    """
)


def _kit(tmp_path: Path, target: str, ops=tuple(OPS)) -> Path:
    probes = [
        p
        for p in catalogue(target)
        if p.param("op") in ops and (p.family != "phase" or p.param("lane_a") == 0)
    ]
    return write_kit(tmp_path / target, probes, target)


@pytest.mark.parametrize("target", TARGETS)
def test_lane_kernels_compile_and_hold_the_named_instruction(tmp_path, target):
    kit = _kit(tmp_path, target)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(kit), target],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    compiled = json.loads(done.stdout.splitlines()[-1])
    assert sorted(compiled) == sorted(f"lds_{op}" for op in OPS)
    for op in OPS:
        got = compiled[f"lds_{op}"]
        assert got["clocks"] == 2 and got["lds"] == 16384
        ops = [line.split()[0] for line in got["timed"]]
        assert ops.count(op) == REPEATS
        assert [o for o in ops if o.startswith("ds_")] == [op] * REPEATS
        assert len(got["ds"]) == REPEATS  # the kernel's only LDS accesses
        assert all(re.fullmatch(rf"{op} v[\d\[\]:]+, v[\d\[\]:]+", line) for line in got["ds"])


def _fit(counters: Path | None):
    target, probes = read_kit(FIXTURES / "gfx950_kit" / "manifest.json")
    runs = read_measurements(FIXTURES / "gfx950_measurements.csv")
    assert target == "gfx950"
    if counters is None:
        return fit_lanes(span_values(runs), probes)
    return fit_lanes(counter_values(probe_counters(read_counters(counters), runs)), probes)


def test_counters_imply_banks_and_phases():
    fits = _fit(FIXTURES / "gfx950_counter_collection.csv")
    b128 = fits["ds_read_b128"]
    assert b128.banks == 64 and fits["ds_write_b64"].banks == 32
    # issue 27's measured gfx950 ds_read_b128 phase: lanes 0-3, 12-15, 20-27 (and the same
    # shapes for 32-63): phase bit 0 = lane bits 2^3^4, phase bit 1 = lane bit 5
    assert b128.phase_bits == (0b011100, 0b100000)
    assert b128.groups[0] == (*range(4), *range(12, 16), *range(20, 28))
    assert len(b128.groups) == 4 and all(len(g) == 16 for g in b128.groups)
    assert fits["ds_write_b64"].phase_bits == (0b010000, 0b100000)  # 16 consecutive lanes
    assert b128.cycles_per_conflict == 1.0
    spans = _fit(None)  # without the counter: the s_memtime spans (20 cycles per conflicting probe)
    for op, fit in fits.items():
        assert (spans[op].banks, spans[op].phase_bits) == (fit.banks, fit.phase_bits)
    assert spans["ds_read_b128"].cycles_per_conflict == 20 / REPEATS


def test_missing_bank_conflict_counter_is_one_line(tmp_path, capsys):
    with pytest.raises(ModuleError, match="rocMLIR#2005"):
        _fit(FIXTURES / "gfx950_no_bank_conflict_pmc.csv")
    kit = tmp_path / "kit"
    shutil.copytree(FIXTURES / "gfx950_kit", kit)
    shutil.copy(FIXTURES / "gfx950_measurements.csv", kit / "measurements.csv")
    code = main(
        [
            "calibrate",
            "lanes",
            str(kit),
            "--counters",
            str(FIXTURES / "gfx950_no_bank_conflict_pmc.csv"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "no SQ_LDS_BANK_CONFLICT rows" in err


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "Dispatch_Id,Kernel_Name,Counter_Name,Counter_Value\n1,lds_ds_read_b128,SQ_X,\x00\n",
            "not",
        ),
        ('"unclosed,\n', "not a counter CSV"),
        (
            "Dispatch_Id,Kernel_Name,Counter_Name,Counter_Value\n1,lds_ds_read_b128,SQ_LDS_BANK_CONFLICT,3\n",
            "dispatches",
        ),
    ],
)
def test_malformed_counter_file_is_one_line_exit_2(tmp_path, capsys, text, message):
    kit = tmp_path / "kit"
    shutil.copytree(FIXTURES / "gfx950_kit", kit)
    shutil.copy(FIXTURES / "gfx950_measurements.csv", kit / "measurements.csv")
    (tmp_path / "c.csv").write_text(text)
    code = main(["calibrate", "lanes", str(kit), "--counters", str(tmp_path / "c.csv")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err


def test_runner_lists_the_lane_kit_without_a_gpu(tmp_path):
    kit = _kit(tmp_path, "gfx942", ("ds_read_b32",))
    listed = subprocess.run(
        [sys.executable, str(kit / "run_probes.py"), "--list"], capture_output=True, text=True
    )
    assert listed.returncode == 0
    lines = listed.stdout.splitlines()
    assert len(lines) == 1 + 10 + 63 and "'lane_b': 63" in lines[-1]
    assert read_kit(kit / "manifest.json")[0] == "gfx942"


def test_rocprof_compute_wide_layout_reads_the_same(tmp_path):
    """rocprof-compute's pmc_perf.csv: one row per dispatch, one column per counter."""
    long = read_counters(FIXTURES / "gfx950_counter_collection.csv")
    wide = long.pivot_table("value", ["dispatch", "kernel"], "counter").fillna(0).reset_index()
    wide = wide.rename(columns={"dispatch": "Dispatch_ID", "kernel": "Kernel_Name"})
    wide.insert(2, "GPU_ID", 0)
    wide.to_csv(tmp_path / "pmc_perf.csv", index=False)
    assert _fit(tmp_path / "pmc_perf.csv") == _fit(FIXTURES / "gfx950_counter_collection.csv")


def test_simulated_counters_fit_back_to_the_hardware_file():
    """The model's own counters for the probes (one trace row per probe, the static bank
    table) fit back to the wave64 file's bank count and phases: ds_load_b128's measured gfx9
    phase (bits 2^3^4, 5) and ds_store_b64's top lane bit; a 2-way conflict is 1 cycle."""
    from wave64_hardware import wave64

    hw = wave64()
    probes = [
        renamed(p, {"ds_read_b128": "ds_load_b128", "ds_write_b64": "ds_store_b64"}[op])
        for p in catalogue("gfx950")
        if (op := p.param("op")) in ("ds_read_b128", "ds_write_b64")
    ]
    fits = fit_lanes(simulated_values(probes, hw), probes)
    assert fits["ds_load_b128"].phase_bits == (0b011100, 0b100000)
    assert fits["ds_store_b64"].phase_bits == (0b100000,)
    assert {f.banks for f in fits.values()} == {64}
    assert {f.cycles_per_conflict for f in fits.values()} == {1.0}
    table = compare_hardware(fits, hw, fits)
    assert table["agrees"].all() and len(table) == 6, table
    # the same probes against mi450's wave32 file: one row saying so
    assert compare_hardware(fits, load_hardware())["constant"].tolist() == ["wgp.warp_size"]


def test_compare_measured_beside_simulated(tmp_path, capsys):
    """The fixture device (gfx950's published b128 phases and 32-bank writes) beside the wave64
    test file: every b128 probe agrees under its measured grouping, the writes disagree where
    the file says 64 banks and 32-lane halves, and under Triton's b128 tile (pass bits 2, 5)
    the pairs that tile splits differently disagree. A wave32 file cannot simulate the kit:
    one line, exit 2."""
    from wave64_hardware import wave64

    names = {"ds_read_b128": "ds_load_b128", "ds_write_b64": "ds_store_b64"}
    target, probes = read_kit(FIXTURES / "gfx950_kit" / "manifest.json")
    runs = read_measurements(FIXTURES / "gfx950_measurements.csv")
    counters = probe_counters(read_counters(FIXTURES / "gfx950_counter_collection.csv"), runs)
    by_old = {p.name: renamed(p, names[p.param("op")]) for p in probes}
    measured = {by_old[k].name: v for k, v in counter_values(counters).items()}
    used = list(by_old.values())
    _, per_op = lane_compare(measured, simulated_values(used, wave64()), used)
    per_op = per_op.set_index(["op", "family"])
    assert per_op["probes"].sum() == len(used) - 2
    b128 = per_op.loc["ds_load_b128"]
    assert (b128["agree"] == b128["probes"]).all()
    # the test file's writes: 64 banks, lanes 0-31 / 32-63; the device's: 32 banks, 16 lanes
    b64 = per_op.loc["ds_store_b64"]
    assert b64.loc["bank_sweep", "first_disagreeing"] == "ds_store_b64_o128"
    assert b64.loc["phase", "probes"] - b64.loc["phase", "agree"] == 16
    triton = wave64(**{"passes.lane_grouping": "triton"})
    _, per_op = lane_compare(measured, simulated_values(used, triton), used)
    b128 = per_op.set_index(["op", "family"]).loc[("ds_load_b128", "phase")]
    # lane 0's measured phase-mates 1-3, 12-15, 20-27 vs the tile's 1-3, 8-11, 16-19, 24-27
    assert (
        b128["probes"] - b128["agree"] == 16 and b128["first_disagreeing"] == "ds_load_b128_l0_l8"
    )
    kit = tmp_path / "kit"
    shutil.copytree(FIXTURES / "gfx950_kit", kit)
    shutil.copy(FIXTURES / "gfx950_measurements.csv", kit / "measurements.csv")
    mi450 = str(hardware_path("mi450"))
    assert main(["compare", str(kit / "measurements.csv"), "--hw", mi450]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a wave64 hardware file" in err


def test_packaged_gfx950_file_meets_the_fixture_device(tmp_path, capsys):
    """With the packaged gfx950 file (picked from the kit's target, no --hw), every constant the
    fixture's counters imply agrees with the file and with the model's own counters: the
    fixture device holds the file's cited measurements. (Skipped in a tree without the file.)"""
    if not hardware_path("gfx950").is_file():
        pytest.skip("no packaged gfx950 hardware file in this tree")
    kit = tmp_path / "kit"
    shutil.copytree(FIXTURES / "gfx950_kit", kit)
    shutil.copy(FIXTURES / "gfx950_measurements.csv", kit / "measurements.csv")
    counters = str(FIXTURES / "gfx950_counter_collection.csv")
    assert main(["calibrate", "lanes", str(kit), "--counters", counters, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 6 and all(r["agrees"] for r in rows), rows
    assert main(["compare", str(kit / "measurements.csv"), "--counters", counters, "--json"]) == 0
    ops = json.loads(capsys.readouterr().out)["ops"]
    assert sum(o["probes"] for o in ops) == 143 and all(o["agree"] == o["probes"] for o in ops)
