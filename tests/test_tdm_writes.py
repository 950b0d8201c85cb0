"""What a tensor_load_to_lds writes, per warp (`wgpsim.kernel.tdm_writes`), on the corpus's
TDM GEMMs compiled by Triton 3.9.0 for gfx1250: as many instructions per warp as the assembly
holds on the copy's line, every byte of the block written once, and a partitioned
destination's warps each inside one partition piece (TDMUtility.cpp's rule)."""

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from wgpsim.frontend.amdgcn import counts_by_line
from wgpsim.frontend.sources import read_kernel
from wgpsim.hw import load_hardware
from wgpsim.kernel.lowering import allocate_kernel, shared_view
from wgpsim.kernel.tdm_writes import GRANULE_BYTES, block_rows, partitioned_distribution

ROOT = Path(__file__).resolve().parents[1]
TDM = sorted(
    d
    for d in (ROOT / "tests" / "corpus" / "fixtures").iterdir()
    if "tensor_load_to_lds" in (d / "kernel.amdgcn").read_text()
)


def _rows(kernel, alloc, op):
    view, _ = shared_view(kernel, op, 0)
    bases = alloc.offsets[op.buffer]
    bases = list(bases) if len(bases) > 1 else bases[0]
    md = op.memdesc
    return block_rows(view, md.shape, md.elem_bits // 8, bases, num_warps=kernel.num_warps)


@pytest.mark.parametrize("case", TDM, ids=lambda p: p.name)
def test_tdm_blocks_match_the_compile(case):
    kernel = read_kernel(case / "kernel.ttgir")
    alloc = allocate_kernel(kernel)
    size = load_hardware().partitions.size
    want = Counter()
    for line, counts in counts_by_line((case / "kernel.amdgcn").read_text()).items():
        want[line] += counts.get("tensor_load_to_lds", 0)
    got = Counter()
    for op in kernel.ops:
        if op.op != "amdg.async_tdm_copy_global_to_local":
            continue
        rows = _rows(kernel, alloc, op)
        assert len({len(r) for r in rows}) == 1  # every warp issues the same count
        got[op.loc.line] += len(rows[0])
        granules = np.concatenate([r.ravel() for w in rows for r in w])
        granules = granules[granules >= 0]
        md = op.memdesc
        assert len(granules) == len(set(granules.tolist()))
        assert len(granules) * GRANULE_BYTES == md.nbytes
        if "partitioned" in case.name:
            for w in rows:
                for r in w:
                    assert len(set((r[r >= 0] // size).tolist())) == 1
    assert got == +want


def test_more_pieces_than_warps_take_more_instructions():
    """The AMD blog's B operand with 8 pieces along N and 4 warps: 2 instructions a warp,
    each one piece (Triton's ``numTDMInstructions = ceil(pieces / gcd(warps, pieces))``)."""
    assert partitioned_distribution((64, 128), 4, 8, 1) == ((1, 4), 2, 4)
