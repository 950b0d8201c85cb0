"""Powers of two: the sizes every layout dimension, partition and alignment must have.

>>> is_pow2(8), is_pow2(12), is_pow2(0), log2(8)
(True, False, False, 3)
"""

from __future__ import annotations

import numpy as np


def is_pow2(n: int) -> bool:
    """True for 1, 2, 4, ... (integers only: ``is_pow2(2.0)`` is False)."""
    return isinstance(n, int | np.integer) and n >= 1 and (n & (n - 1)) == 0


def log2(n: int) -> int:
    """log2 of a power of two (the index of its highest set bit for any positive integer)."""
    return int(n).bit_length() - 1
