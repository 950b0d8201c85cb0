"""The layout search on a gfx9 target (gfx942, gfx950: wave64, ``#ttg.amd_mfma``, one LDS
partition): the target's MFMA tile and its ctaLayouts, the warpsPerCTA grids Triton's
``amd_mfma`` can express (warps walk N first, registers repeat N, then M).

The MFMA tile is the one Triton 3.9.0 picks for an fp16/bf16 dot (the corpus's compiles:
gfx942 ``version = 3, instrShape = [32, 32, 8]``, ``kWidth = 4``; gfx950 ``version = 4,
instrShape = [32, 32, 16]``, ``kWidth = 8``; both ``isTransposed = true``).

>>> from wgpsim.microbench.candidates import Gemm
>>> g = on_mfma(Gemm((128, 128, 64), "fp16", 4, (16, 16, 32)), "hip:gfx950")
>>> g.instr_shape, [str(c) for c in mfma_ctas(g)][1]
((32, 32, 16), 'warp=[[0, 1], [1, 0]] register=[[0, 2], [2, 0]]')
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from wgpsim.errors import ConfigError
from wgpsim.hw import HardwareConfig
from wgpsim.layout.mma.mfma import AMDMFMALayout
from wgpsim.microbench.candidates import Gemm
from wgpsim.search.space import CtaLayout

MFMA_TILES = {"hip:gfx942": (3, (32, 32, 8), 4), "hip:gfx950": (4, (32, 32, 16), 8)}
"""Triton 3.9.0's ``amd_mfma`` version, instrShape and dot-operand kWidth of an fp16/bf16 dot,
per target (the corpus's compiles, tests/corpus_others/TARGET/fixtures/*/kernel.ttgir)."""


def on_mfma(gemm: Gemm, target: str) -> Gemm:
    """``gemm`` with the target's MFMA tile and kWidth (transposed, as Triton's)."""
    if target not in MFMA_TILES:
        raise ConfigError(f"the layout search has no MFMA tile for {target}")
    if gemm.dtype not in ("fp16", "bf16"):
        raise ConfigError(f"the layout search on {target} takes fp16 or bf16, not {gemm.dtype}")
    version, shape, k_width = MFMA_TILES[target]
    return replace(gemm, mfma_version=version, instr_shape=shape, k_width=k_width, transposed=True)


def mfma_ctas(gemm: Gemm) -> list[CtaLayout]:
    """The ctaLayout of every warpsPerCTA grid ``[M warps, N warps]`` that fits the block, in
    tiles of the MFMA instruction (the bases of Triton's ``amd_mfma`` linear layout)."""
    out = []
    rows, cols = gemm.tile_shape
    for wn in range(gemm.num_warps.bit_length()):
        grid = (gemm.num_warps >> wn, 1 << wn)
        if grid[0] * rows > gemm.block[0] or grid[1] * cols > gemm.block[1]:
            continue
        ll = AMDMFMALayout(gemm.mfma_version, grid, gemm.instr_shape, gemm.transposed)
        ll = ll.to_linear_layout(list(gemm.block_mn))
        tiles = [
            (m // rows, n // cols)
            for m, n in ll.get_bases("register")
            if m % rows == 0 and n % cols == 0
        ]
        warp = tuple((m // rows, n // cols) for m, n in ll.get_bases("warp"))
        out.append(CtaLayout(warp, tuple(tiles)))
    return out


def on_gfx9(problem: Any, hw: HardwareConfig) -> Any:
    """``problem`` on a gfx9 target: the MFMA tile, transposed loads only where the target has
    them (gfx950's ds_read_b64_tr_b16), no partitioned layouts on a chip of one partition."""
    has_tr = hw.has_transposed_loads
    return replace(
        problem,
        gemm=on_mfma(problem.gemm, hw.target),
        b_transposed_loads=tuple(t for t in problem.b_transposed_loads if has_tr or not t)
        or (False,),
        partitioned=hw.partitions.count > 1,
        references=(),  # hand-made WMMA ctaLayouts (warp and register bases) of wave32 MI450
    )


def gfx9_note(problem: Any, hw: HardwareConfig, references: int = 0) -> str:
    """The one line a gfx9 search prints first (empty on MI450): what its space leaves out
    (``references``: how many of the config's hand-made candidates `on_gfx9` left out)."""
    if not problem.gemm.mfma_version:
        return ""
    tr = (
        "with and without transposed loads"
        if True in problem.b_transposed_loads
        else "no transposed loads"
    )
    parts = (
        ""
        if problem.partitioned
        else f"; partitioned layouts: none ({hw.name} has one LDS partition)"
    )
    return (
        f"{hw.describe()}: wave64, amd_mfma warpsPerCTA grids only, B {tr}{parts}; "
        "'TDM' counts the tensor copies MI450 would issue (gfx9 has none)"
        + (
            f"; the config's {references} reference candidates are MI450 WMMA ctaLayouts: left out"
            if references
            else ""
        )
    )


__all__ = ["MFMA_TILES", "gfx9_note", "mfma_ctas", "on_gfx9", "on_mfma"]
