"""A wave64 trace as docs/USAGE.md documents it (review 2, #11): a header of ``{"lanes": 64}``
alone is read, and the shipped example ``wave64_bank_conflict.jsonl`` replays on gfx950 with
the bank cycles its hardware file's lane groups give (a pass of n lanes in one bank at n
distinct dwords takes n cycles; consecutive dwords one cycle a pass)."""

from __future__ import annotations

import json

import pytest

from wgpsim.cli import main
from wgpsim.hw.config import target_hardware
from wgpsim.packaged import DATA
from wgpsim.trace.io import read_trace
from wgpsim.trace.trace import TraceError

TRACE = DATA / "traces" / "wave64_bank_conflict.jsonl"


def test_a_lanes_only_header_reads_a_wave64_trace(tmp_path):
    path = tmp_path / "t.jsonl"
    row = {"warp": 0, "op": "ds_read_b32", "addr": {"base": 0, "stride": 4}}
    path.write_text(json.dumps({"lanes": 64}) + "\n" + json.dumps(row) + "\n")
    trace = read_trace(path)
    assert trace.addr.shape[1] == 64 and trace.num_warps == 1
    path.write_text(json.dumps(row) + "\n" + json.dumps({"lanes": 64}) + "\n")
    with pytest.raises(TraceError, match="may only be the first record"):
        read_trace(path)


@pytest.mark.parametrize("target", ["gfx950", "gfx942"])
def test_the_wave64_example_replays_with_its_targets_lane_groups(capsys, target):
    assert main(["replay", str(TRACE), "--target", target, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # each pass bit of the hardware file's map halves the lanes of a pass
    passes = 2 ** len(target_hardware(f"hip:{target}").lane_masks("ds_read_b32"))
    assert doc["passes"] == 2 * passes
    # stride 4: one cycle a pass; stride 256: a pass's 64 / passes lanes one cycle each
    assert doc["bank_cycles"] == passes + 64
    assert doc["bank_conflict_cycles"] == 64 - passes
