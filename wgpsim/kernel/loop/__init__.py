"""A compiled kernel's main loop, from its assembly: the program (the assembly's stream joined
to the ops) and its per-warp traces, the matching of ``ds_*`` to ops, the timing (exposed and
hidden LDS), the what-ifs and the Chrome trace.

See docs/DESIGN.md ("The loop, from the assembly", "Loop timing", "The map").
"""
