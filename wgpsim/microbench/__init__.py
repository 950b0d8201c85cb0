"""The AMD blog's two experiments: Part I's LDS bandwidth microbenchmark and Part II's GEMM
layout candidates (the tile, its candidates, the pieces each warp reads, the measured kernels).

See docs/DESIGN.md ("The map") for what this job holds and may import.
"""
