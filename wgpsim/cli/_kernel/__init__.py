"""The parts of the `kernel` verb that `diff` and `compile` share (the `--all` and loop
sections, reading a set of kernels and a kernel source, the compile arguments). The leading `_`
keeps this package out of the verb discovery of `wgpsim.cli`.
"""
