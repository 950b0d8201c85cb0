"""The readers of what device owners already collect, on files in the tools' own formats
(``tests/fixtures/calibration``, README.txt names each format's source): proton's intra-kernel
Chrome trace into measurements, rocprofv3 / rocprof-compute counter CSVs beside the simulated
LDS counters of the same probe kernels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wgpsim.calibration.counters import compare_counters
from wgpsim.calibration.probes import catalogue, write_manifest
from wgpsim.calibration.proton_trace import read_proton_trace
from wgpsim.calibration.rocprof_csv import read_counters
from wgpsim.cli import main
from wgpsim.errors import ModuleError

FIXTURES = Path(__file__).parent / "fixtures" / "calibration"


def test_proton_trace_spans_per_warp():
    rows = read_proton_trace(FIXTURES / "proton_intra_kernel.json")
    # the call_path bar and the flow endpoint are skipped: 2 + 4 scope events
    assert len(rows) == 6
    trip = rows[rows["probe"] == "round_trip_b64_x1"]
    assert trip["cycles"].tolist() == [45, 46] and trip["repeat"].tolist() == [0, 1]
    barrier = rows[rows["probe"] == "barrier_w4_x1"]
    assert barrier["warp"].tolist() == [0, 1, 2, 3]
    assert barrier["cycles"].tolist() == [19, 19, 18, 18]  # dur 0.019 us at "1 GHz"
    assert set(barrier["cta"]) == {0}


def test_proton_trace_older_writer_float_durations():
    rows = read_proton_trace(FIXTURES / "proton_intra_kernel_v1.json")
    # float32(323 / 1000) printed as 0.32300001382827759: 323 cycles after rounding
    assert rows["cycles"].tolist() == [323, 322]
    assert rows["kernel"].tolist() == ["bandwidth_plain_w4_b32"] * 2


def test_proton_trace_bad_input():
    with pytest.raises(ModuleError, match="no 'traceEvents' list"):
        read_proton_trace({"events": []})
    with pytest.raises(ModuleError, match="no per-warp scope events"):
        read_proton_trace({"traceEvents": [{"ph": "M", "name": "process_name"}]})


def test_rocprofv3_counters_beside_the_model():
    counters = read_counters(FIXTURES / "rocprofv3_counter_collection.csv")
    assert set(counters["kernel"]) == {"banks_s4", "banks_s256", "__amd_rocclr_fillBufferAligned"}
    table = compare_counters(counters, catalogue()).set_index(["probe", "counter"])
    assert len(table) == 6  # the fill kernel is no probe
    # banks_s4: LLVM pairs the 4 ds_load_b32 into 2 ds_load_2addr_b32 (offsets 0/32, 64/96
    # dwords); a pass touches dwords l and l + 32: 64 distinct banks, 1 cycle, no conflict
    assert table.loc[("banks_s4", "SQ_INSTS_LDS"), "simulated"] == 2
    assert table.loc[("banks_s4", "SQ_LDS_IDX_ACTIVE"), "simulated"] == 2
    no_conflict = table.loc[("banks_s4", "SQ_LDS_BANK_CONFLICT")]
    assert no_conflict["simulated"] == no_conflict["measured"] == 0
    # banks_s256: every lane's two dwords (256 l and 256 l + 8192 bytes) fall in bank 0: 64
    # distinct dwords, 64 cycles per instruction, 63 of them conflicts: 128 and 126
    assert table.loc[("banks_s256", "SQ_LDS_IDX_ACTIVE"), "simulated"] == 128
    assert table.loc[("banks_s256", "SQ_LDS_BANK_CONFLICT"), "simulated"] == 126
    # measured: the median of the two dispatches, (130 + 134) / 2
    assert table.loc[("banks_s256", "SQ_LDS_IDX_ACTIVE"), "measured"] == 132
    assert table.loc[("banks_s256", "SQ_LDS_IDX_ACTIVE"), "ratio"] == pytest.approx(128 / 132)


def test_rocprof_compute_wide_counters():
    counters = read_counters(FIXTURES / "rocprof_compute_pmc_perf.csv")
    assert "GRBM_GUI_ACTIVE" in set(counters["counter"]) and "GPU_ID" not in set(
        counters["counter"]
    )
    table = compare_counters(counters, catalogue()).set_index(["probe", "counter"])
    # 8 ds_load_b128 of 2 passes; lanes_0_15 conflict-free (16 cycles), lane_bit_2 2-way under
    # the seed grouping (lanes 0-3 and 4-7 share banks): 32 cycles, 16 of them conflicts
    assert table.loc[("lane_groups_lanes_0_15", "SQ_LDS_IDX_ACTIVE"), "simulated"] == 16
    assert table.loc[("lane_groups_lane_bit_2", "SQ_LDS_BANK_CONFLICT"), "simulated"] == 16
    assert (table["ratio"].dropna() == 1.0).all()


def test_counter_csv_bad_input(tmp_path):
    (tmp_path / "c.csv").write_text("Kernel_Name,Counter_Name,Counter_Value\nk,SQ_INSTS_LDS,x\n")
    with pytest.raises(ModuleError, match="'x' is not a number"):
        read_counters(tmp_path / "c.csv")
    (tmp_path / "d.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ModuleError, match="no Kernel_Name column"):
        read_counters(tmp_path / "d.csv")


def test_cli_compare_reads_proton_and_counters(tmp_path, capsys):
    write_manifest(catalogue(), tmp_path / "manifest.json")
    code = main(
        [
            "compare",
            str(FIXTURES / "proton_intra_kernel.json"),
            "--manifest",
            str(tmp_path / "manifest.json"),
            "--counters",
            str(FIXTURES / "rocprofv3_counter_collection.csv"),
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    probes = {p["probe"]: p for p in out["probes"]}
    # round trip: measured median of 45 and 46, the model 4 + 1 + 56 = 61
    assert probes["round_trip_b64_x1"]["measured"] == 45.5
    assert probes["round_trip_b64_x1"]["simulated"] == 61
    # barrier: 4 + 7 = 11 simulated; measured median over warps 18.5
    assert probes["barrier_w4_x1"]["simulated"] == 11
    assert len(out["counters"]) == 6
