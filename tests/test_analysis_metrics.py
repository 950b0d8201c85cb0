"""rocprof-compute's LDS metrics from wgpsim runs: names, definitions, hand-counted cases."""

from pathlib import Path

import numpy as np
import pytest

from wgpsim.engine import simulate
from wgpsim.measures.metrics import NAMES, instruction_metrics, lds_metrics
from wgpsim.trace import TraceBuilder
from wgpsim.trace.io import read_trace

TRACES = Path(__file__).resolve().parents[1] / "examples" / "traces"


def _one_load(op: str, addr) -> TraceBuilder:
    b = TraceBuilder(1)
    b.load(0, op, np.asarray(addr))
    b.wait_ds(0, 0)
    return b


def test_metric_names_are_rocprof_computes():
    assert list(NAMES.values()) == [
        "LDS Instructions",
        "SQ_LDS_IDX_ACTIVE",
        "SQ_LDS_BANK_CONFLICT",
        "Bank Conflict Rate (%)",
        "Bank Conflicts/Access",
        "Utilization (%)",
        "Partition Conflict Cycles",
    ]


@pytest.mark.parametrize("engine", ["des", "fast"])
def test_two_way_conflict_hand_count(engine):
    # ds_load_b64 is one pass of 32 lanes; lanes 16-31 read the dwords 512 B above lanes 0-15:
    # same 64 banks, other dwords, so every bank serves 2 dwords: 2 cycles, 1 of them a conflict.
    lane = np.arange(32)
    b = _one_load("ds_load_b64", 8 * (lane % 16) + 512 * (lane // 16))
    m = lds_metrics(simulate(b.build(), engine=engine))
    assert (m.lds_instructions, m.idx_active, m.bank_conflict) == (1, 2, 1)
    # rocprof-compute: conflict cycles over the cycles the same data needs uncontended (1)
    assert m.bank_conflict_rate == pytest.approx(100.0)
    assert m.conflicts_per_access == pytest.approx(1.0)
    assert m.partition_conflict_cycles == 0


def test_broadcast_is_not_a_conflict():
    b = _one_load("ds_load_b32", np.zeros(32, dtype=np.int64))
    m = lds_metrics(simulate(b.build(), engine="fast"))
    assert (m.idx_active, m.bank_conflict, m.bank_conflict_rate) == (1, 0, 0.0)


def test_partition_conflicts_are_the_column_no_profiler_has():
    shared = lds_metrics(simulate(read_trace(TRACES / "two_pairs_conflict.jsonl"), engine="fast"))
    apart = lds_metrics(simulate(read_trace(TRACES / "two_pairs_separate.jsonl"), engine="fast"))
    assert shared.bank_conflict == apart.bank_conflict == 0
    assert shared.partition_conflict_cycles > 0 and apart.partition_conflict_cycles == 0
    # apart, both ports work at once: higher utilisation of the two ports
    assert apart.utilization > shared.utilization
    assert set(shared.to_dict()) == set(NAMES.values())


def test_instruction_table_rows_per_instruction():
    lane = np.arange(32)
    b = TraceBuilder(1)
    b.load(0, "ds_load_b128", 16 * lane)  # 2 passes, no conflict
    b.load(0, "ds_load_b32", 256 * lane)  # 32 dwords in bank 0: 32 cycles
    b.load(0, "ds_load_b32", 256 * lane)
    table = instruction_metrics(b.build()).set_index("instruction")
    assert table.loc["ds_load_b128", "SQ_LDS_IDX_ACTIVE"] == 2
    assert table.loc["ds_load_b32", "LDS Instructions"] == 2
    assert table.loc["ds_load_b32", "SQ_LDS_BANK_CONFLICT"] == 62
    assert table.loc["ds_load_b32", "Bank Conflicts/Access"] == pytest.approx(31.0)
