"""The short sweep of the packaged microbenchmark config that the CLI tests run (the steady-state
fit needs two bursts); ``conftest.bandwidth_cycles`` is what it gives through the Python API."""

BANDWIDTH_BURSTS = "burst_lengths=[8, 32]"
