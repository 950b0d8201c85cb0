"""Layout-search throughput on the AMD blog's Part II tile (128x128x64 fp16, 4 warps, B
N-contiguous, two stages): candidates scored per second and the share the static bounds prune.

    python benchmarks/search.py            # the first 40 ctaLayouts of the space (18,000 points)
    python benchmarks/search.py --ctas 0   # the whole space (750 ctaLayouts, 337,500 points)

A candidate is one (ctaLayout, A layout, B layout, B transposed loads) point; "scored" counts
every point (those that cannot be built included), "pruned" those the bound ruled out before
any simulation. The fast engine's compile is warmed first and not timed.
"""

import argparse
import time

from wgpsim.hw import load_hardware
from wgpsim.microbench.candidates import Gemm
from wgpsim.search.search import SearchProblem, search


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ctas", type=int, default=40, help="ctaLayouts searched (0: all)")
    args = parser.parse_args()
    hw = load_hardware()
    gemm = Gemm((128, 128, 64), "fp16", 4, (16, 16, 32))
    full = SearchProblem(gemm)
    ctas = full.ctas() if args.ctas == 0 else full.ctas()[: args.ctas]
    search(SearchProblem(gemm, cta=ctas[0]), hw)  # warm the engine and imports
    start = time.perf_counter()
    result = search(SearchProblem(gemm, cta_list=tuple(ctas)), hw)
    seconds = time.perf_counter() - start
    best = result.ranked[0]
    print(
        f"{result.scored} candidates ({len(ctas)} ctaLayouts) in {seconds:.1f} s: "
        f"{result.scored / seconds:,.0f} candidates/s"
    )
    print(
        f"cannot be built {result.invalid / result.scored:.1%}, pruned by the static bounds "
        f"{result.pruned / result.scored:.1%}, simulated {result.simulated} "
        f"({result.simulations} distinct simulations)"
    )
    print(f"best: {best.cycles} cycles, {best.allocation.size} B: {best.name}")


if __name__ == "__main__":
    main()
