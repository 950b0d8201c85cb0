"""Dot-operand loads through a ``memdesc_subslice`` of a padded buffer (issue 23 item 4), on
Triton 3.9.0 gfx1250 compiles (tests/fixtures/views, ``regenerate.py`` there): A and B operands,
subslices along K, M and N, row- and column-major padding, two padding intervals, a
row-permuting linear component, one stage of a two-stage buffer.

Truth: the assembly. Every ``ds_load`` of the load reads from one address register per lane
plus an immediate, so each lane's addresses are its base plus the immediates; lane 0 of warp 0
has base 0 (the buffer is at 0), so its addresses are the immediates themselves."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from wgpsim.frontend.ttgir import read_ttgir_file
from wgpsim.kernel.report import kernel_report

VIEWS = sorted(p for p in (Path(__file__).parent / "fixtures" / "views").iterdir() if p.is_dir())
_LOAD = re.compile(r"^\s*(ds_load\w*) v\[?[\d:]+\]?, (v\d+)(?: offset:(\d+))?", re.M)


def test_the_fixtures_are_there():
    assert len(VIEWS) == 9


@pytest.mark.parametrize("d", VIEWS, ids=lambda d: d.name)
def test_a_padded_subslice_load_has_the_assemblys_instructions_and_addresses(d):
    report = kernel_report(d / "kernel.ttgir")
    assert report.lds_bytes == read_ttgir_file(d / "kernel.alloc.mlir").ttg_shared
    (low,) = [lw for lw in report.lowerings if lw.op.op == "ttg.local_load"]
    assert low.op.views[-1] == "ttg.memdesc_subslice"
    asm = _LOAD.findall((d / "kernel.amdgcn").read_text())
    assert dict(low.counts) == dict(Counter(name for name, _, _ in asm))
    assert len({reg for _, reg, _ in asm}) == 1  # one address register per lane
    imms = sorted(int(imm or 0) for _, _, imm in asm)
    addresses = np.asarray(low.lowering.addresses)  # [warp, instruction, lane]
    assert addresses.shape[1] == len(imms)
    assert sorted(addresses[0, :, 0].tolist()) == imms
    from_base = np.sort(addresses - addresses.min(axis=1, keepdims=True), axis=1)
    assert (from_base == (np.array(imms) - imms[0])[None, :, None]).all()
