"""Compile the kernels of ``kernels.py`` for gfx1250 on the CPU and write their dumps here.

    python examples/kernels/regenerate.py

Each kernel gets a directory as Triton's cache or ``TRITON_KERNEL_DUMP`` leaves it (``NAME.ttgir``,
``NAME.amdgcn``, ``NAME.json``) plus ``NAME.post.mlir``, the module after Triton's
``allocate-shared-memory`` pass (``allocation.offset``, ``ttg.shared``). Needs the triton extra
(Triton 3.9.0); no GPU.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import triton  # noqa: E402
from kernels import ATTENTION, CASES, STAGES, gemm_case  # noqa: E402

from wgpsim.frontend.compile import compile_for_gfx1250  # noqa: E402

#: Triton's package directory, written as "triton" in the dumps (no machine paths).
TRITON = str(Path(triton.__file__).resolve().parent)


def main() -> None:
    cases = dict(CASES)
    cases["gemm_tdm_standard"] = gemm_case(False)
    cases["gemm_tdm_partitioned"] = gemm_case(True)
    cases["attention"] = ATTENTION
    for label, (fn, sig, consts, warps) in cases.items():
        compiled = compile_for_gfx1250(
            fn, sig, consts, num_warps=warps, num_stages=STAGES.get(label)
        )
        out = compiled.write(HERE / label, paths={str(HERE): "examples/kernels", TRITON: "triton"})
        print(
            f"{label}: {compiled.name}, ttg.shared {compiled.metadata.get('shared')} -> {out.name}"
        )


if __name__ == "__main__":
    main()
