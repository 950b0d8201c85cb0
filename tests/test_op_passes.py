"""The lanes-to-banks pictures' passes (`wgpsim.kernel.op_passes`) against the timing
model's own pass table (`wgpsim.measures.banks.bank_table`, `wgpsim.hw.rules.pass_table`), op
by op over the shipped compiles (real Triton 3.9.0 gfx1250 compiles): the same passes, lanes,
bank cycles and partitions for every warp, so a red column in the report is a conflict the
report's cycles count (the 2addr loads of matmul_fp8 among them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wgpsim.hw.config import load_hardware
from wgpsim.kernel.lowering import op_trace
from wgpsim.kernel.op_passes import distinct_patterns, op_passes
from wgpsim.kernel.report import kernel_report
from wgpsim.measures.banks import bank_table

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernels"


@pytest.mark.parametrize("name", ["matmul_fp8", "gemm_tdm_standard", "matmul"])
def test_passes_agree_with_the_models_pass_table(name):
    hw = load_hardware()
    rep = kernel_report(EXAMPLES / name, hw, suggest=False)
    conflicted = 0
    for low in rep.lowerings:
        if not low.modelled:
            continue
        table = bank_table(op_trace(low.lowering), hw, per_pass=True)
        for warp in range(low.lowering.num_warps):
            mine = op_passes(low, hw, warp)
            theirs = table[table["warp"] == warp]
            assert [p.bank_cycles for p in mine] == theirs["bank_cycles"].tolist()
            assert [len(p.lanes) for p in mine] == theirs["lanes"].tolist()
            masks = [sum(1 << q for q in p.partitions) for p in mine]
            assert masks == theirs["partitions"].tolist()
        passes = op_passes(low, hw)
        conflicted += sum(p.bank_cycles > 1 for p in passes)
        assert sum(len(w) for _, w in distinct_patterns(passes)) == len(passes)
    if name == "matmul_fp8":  # its ds_load_2addr_b64 loads conflict in the report
        assert conflicted > 0 and any(op["bank_conflict_cycles"] for op in rep.ops)
