"""Matrices over GF(2), stored the way Triton stores them: one Python int per row, bit c = column c.

A linear layout is such a matrix (rows = output bits, columns = input bits). Triton reduces it
with f2reduce to the reduced row echelon form whose pivot in each row is its *lowest* set column;
every choice Triton makes between equivalent inputs follows from that convention.

>>> rows = [0b011, 0b110]            # columns 0,1,2; column 2 = column 0 ^ column 1
>>> rref(rows, 3)
([5, 6], [0, 1])
>>> rank(rows, 3)
2
>>> lstsq([0b01, 0b10], [0b11, 0b10], 2, 2)   # A = identity: the solution is B itself
[1, 3]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from wgpsim.errors import LayoutError


def rref(rows: Sequence[int], num_cols: int) -> tuple[list[int], list[int]]:
    """Reduced row echelon form, pivots at the lowest column: returns (rows, pivot columns).

    Nonzero rows come first, ordered by pivot; zero rows follow. Column c is a pivot iff it is
    not in the span of the columns before it.

    >>> rref([0b10, 0b11], 2)
    ([1, 2], [0, 1])
    """
    m = list(rows)
    pivots: list[int] = []
    r = 0
    for c in range(num_cols):
        bit = 1 << c
        i = next((i for i in range(r, len(m)) if m[i] & bit), None)
        if i is None:
            continue
        m[r], m[i] = m[i], m[r]
        for j in range(len(m)):
            if j != r and m[j] & bit:
                m[j] ^= m[r]
        pivots.append(c)
        r += 1
    return m, pivots


def rank(rows: Sequence[int], num_cols: int) -> int:
    """Number of linearly independent rows (= columns).

    >>> rank([0b11, 0b11], 2)
    1
    """
    return len(rref(rows, num_cols)[1])


def lstsq(a_rows: Sequence[int], b_rows: Sequence[int], cols_a: int, cols_b: int) -> list[int]:
    """Solve A X = B over GF(2) with every free (non-pivot) variable 0, as Triton's lstsq does.

    Rows of A and B are aligned (same output bit); a missing B row is 0. Returns X by columns:
    entry j is a bitmask over A's columns whose XOR of A-columns equals B's column j. Because
    free columns are 0, each B column is written with the *earliest* columns of A that span it.

    >>> lstsq([0b011], [0b1], 2, 1)   # A = [1 1]: column 0 already reaches B, column 1 is free
    [1]
    """
    n = max(len(a_rows), len(b_rows))
    a = list(a_rows) + [0] * (n - len(a_rows))
    b = list(b_rows) + [0] * (n - len(b_rows))
    m, pivots = rref([ai | (bi << cols_a) for ai, bi in zip(a, b, strict=True)], cols_a + cols_b)
    if pivots and pivots[-1] >= cols_a:
        raise LayoutError(
            f"lstsq: B column {pivots[-1] - cols_a} is not in the span of A's columns; "
            "the outer layout must reach every output of this layout"
        )
    x_rows = [0] * cols_a  # row c of X (bits = B columns)
    for r, c in enumerate(pivots):
        x_rows[c] = m[r] >> cols_a
    return [sum(((x_rows[c] >> j) & 1) << c for c in range(cols_a)) for j in range(cols_b)]


def to_numpy(rows: Sequence[int], num_cols: int) -> np.ndarray:
    """The matrix as a dense uint8 array of shape (len(rows), num_cols).

    >>> to_numpy([0b01, 0b11], 2).tolist()
    [[1, 0], [1, 1]]
    """
    cols = np.arange(num_cols, dtype=np.uint64)
    arr = np.array(list(rows), dtype=np.uint64).reshape(-1, 1)
    return ((arr >> cols) & np.uint64(1)).astype(np.uint8).reshape(len(rows), num_cols)
