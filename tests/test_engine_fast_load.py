"""Loading the fast engine on numba's JIT skips numba's SciPy BLAS probe
(``_fast_backend._skip_scipy_blas_probe``): scipy.linalg stays unimported, and numba code of
the same process still finds BLAS for ``np.dot``. (A built engine imports no numba at all:
``tests/test_engine_fast_backend.py``.)"""

import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")
pytest.importorskip("scipy")

PROBE = """
import sys
import numpy as np
from wgpsim.engine import simulate
from wgpsim.hw.config import load_hardware
from wgpsim.trace.trace import TraceBuilder
b = TraceBuilder(1)
b.load(0, "ds_load_b64", 8 * np.arange(32))
r = simulate(b.build(), load_hardware(), engine="fast")
print(r.engine, r.total_cycles, "scipy.linalg" in sys.modules)
import numba
@numba.njit
def dot(a, b):
    return np.dot(a, b)
print(dot(np.arange(3.0), np.arange(3.0)), "scipy.linalg" in sys.modules)
"""


def test_fast_engine_loads_without_scipy_linalg_and_numba_keeps_blas():
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**os.environ, "WGPSIM_FAST_KERNELS": "jit"},
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout.split("\n")
    engine, cycles, linalg_after_run = out[0].split()
    assert (engine, int(cycles) > 0) == ("fast", True)
    assert linalg_after_run == "False"
    assert out[1] == "5.0 True"  # np.dot compiled through SciPy's BLAS, imported when asked
