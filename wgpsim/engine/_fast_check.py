"""The trace rules of ``wgpsim.trace.validate`` as one compiled sweep, for the fast engine.

``validate`` checks a trace with numpy, a temporary array per rule and per block of lanes (about
0.25 CPU-s per million rows). The fast engine, once numba is loaded, first asks
``trace_is_valid`` (in ``fast``), whose kernel is here: one compiled pass over the rows and their 32 addresses that only says whether
any rule is broken. A valid trace (the usual case) is then remembered as valid without the numpy
checks; only a trace breaking a rule goes through ``validate``, which finds the first bad row and
words the error exactly as it always has. The two statements must agree on which traces are
valid (``tests/test_trace_validate.py`` compares them on every bad trace it builds).

``wgpsim.engine.fast.trace_is_valid`` gives the kernel a trace's columns and the rules' tables.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def rows_are_valid(op, warp, arg, addr, nwarps, nlabels, lds_bytes, codes, per_op, max_delay):
    """Every rule of ``validate`` on rows (op, warp, arg, addr[32]): True if none is broken.
    ``codes``: number of ops, of LDS ops, then wait_ds, wait_tensor, tdm, delay, clock and
    barrier; ``per_op`` rows: access bytes, addresses, alignment, offset unit."""
    nops, nlds = codes[0], codes[1]
    delays = np.zeros(max(nwarps, 1), dtype=np.float64)  # summed as validate sums them
    barriers = np.zeros(max(nwarps, 1), dtype=np.int64)
    for r in range(len(op)):
        o, w, a = np.int64(op[r]), np.int64(warp[r]), arg[r]
        if o < 0 or o >= nops or w < 0 or w >= nwarps:
            return False
        if (o == codes[2] or o == codes[3]) and a < 0:  # wait_ds, wait_tensor
            return False
        if o == codes[4] and a != 0 and a != 1:  # tdm: last or not
            return False
        if o == codes[5]:  # delay
            if a < 0:
                return False
            if a > 0:
                delays[w] += np.float64(a)
                if delays[w] > max_delay:
                    return False
        if o == codes[6] and (a < 0 or a >= nlabels):  # clock
            return False
        unit = per_op[3, o]
        if ((o < nlds and unit == 0 and o != codes[4]) or o == codes[7]) and a != 0:
            return False
        if unit > 0 and (a <= 0 or a % unit != 0 or a > 255 * unit):
            return False
        if o == codes[7]:
            barriers[w] += 1
        lds = o < nlds
        width = per_op[0, o] + (a if per_op[1, o] == 2 else 0)
        align = per_op[2, o] - 1
        limit = lds_bytes - width if lds else np.int64(-1)  # control rows: no address
        bad = False
        for lane in range(addr.shape[1]):  # no branch: any bad address of the row
            x = np.int64(addr[r, lane])
            bad |= (x < -1 and lds) or (x >= 0 and ((x & align) != 0 or x > limit))
        if bad:
            return False
    for w in range(1, nwarps):  # noqa: SIM110 (compiled: no generator)
        if barriers[w] != barriers[0]:
            return False
    return True
