"""The layout search (``wgpsim search``, ``kind: layout_search``): the best ctaLayout x shared
layouts x transposed loads for a GEMM tile, its space, scores, ranking and the winner's Gluon.

The search itself is ``wgpsim.search.search.search`` (the module ``search`` of this package).
See docs/DESIGN.md ("Layout search", "The map") for what this job holds and may import.
"""
