"""The CDNA lane-pair kit (gfx942, gfx950): which lanes share an LDS phase and how many banks
an instruction sees, measured on a device and fitted (docs/DESIGN.md, "The CDNA lane-pair kit").

- :mod:`.pairs`: the probes as data (one lane alone, the bank sweep, all 2016 lane pairs);
- :mod:`.gluon`: their Gluon kernels;
- :mod:`.counters`: a profiler's dispatches matched to probes;
- :mod:`.fit`: the banks and phases the measurements imply;
- :mod:`.traces`: what the model runs for each probe;
- :mod:`.compare`: measured beside simulated.
"""
