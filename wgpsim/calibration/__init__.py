"""The calibration kit (``wgpsim calibrate``, ``wgpsim compare``): the probes and their Gluon
kit, the readers of what a device measured, the constants those measurements imply (the fit),
simulated against measured.

See docs/DESIGN.md ("Calibration", "The map") for what this job holds and may import.
"""
