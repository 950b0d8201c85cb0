"""What is left of the analysis layer while issue 26 moves it into the jobs' packages
(docs/DESIGN.md, "The map"); the steady-state fit and the metrics are in ``wgpsim.measures``.
"""
