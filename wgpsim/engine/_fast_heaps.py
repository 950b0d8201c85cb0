"""The fast engine's compiled state helpers, inlined into ``_fast_loop.run_loop``: borrowed views,
the warp events' and load completions' binary heaps (ordered by time, then creation order), and
the ring-buffer index.

A heap of (key, seq, a, b) rows, smallest first:

>>> heap = np.zeros((3, 4), np.int64)
>>> n = _push_heap(heap, 0, 5, 0, 0, 7)
>>> n = _push_heap(heap, n, 2, 1, 0, 8)
>>> heap[0].tolist(), pop(heap, n), heap[0].tolist()
([2, 1, 0, 8], 1, [5, 0, 0, 7])
"""

from __future__ import annotations

import numpy as np  # noqa: F401  (the doctest)
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from wgpsim.engine._fast_state import MAX_CYCLE


@intrinsic
def borrowed(typingctx, value):
    """``value`` (an array, or a tuple of arrays and scalars) with its arrays viewed without
    a reference (no meminfo): numba then skips their reference counting, which otherwise
    costs an atomic increment and decrement per array argument of every compiled call. The
    views must not outlive the arrays they borrow from, nor leave the compiled code."""

    def strip(context, builder, ty, val):
        if not isinstance(ty, types.Array):
            return val
        view = context.make_array(ty)(context, builder, value=val)
        view.meminfo = cgutils.get_null_value(view.meminfo.type)
        view.parent = cgutils.get_null_value(view.parent.type)
        return view._getvalue()

    def codegen(context, builder, signature, args):
        ty, val = signature.args[0], args[0]
        if not isinstance(ty, types.BaseTuple):
            return strip(context, builder, ty, val)
        for i, item in enumerate(ty):
            part = strip(context, builder, item, builder.extract_value(val, i))
            val = builder.insert_value(val, part, i)
        return val

    return value(value), codegen


@njit(cache=True, inline="always")
def push(st, time, kind, w):
    """Schedule a warp event; ``seq`` orders events of one cycle as simpy's event ids do."""
    c = st.counters[0]
    if time > MAX_CYCLE or time < 0:  # < 0: 2**62 + 2**62 wrapped around
        c.overflow = 1
    c.events = _push_heap(st.events, c.events, time, c.seq, kind, w)
    c.seq += 1


@njit(cache=True, inline="always")
def complete(st, w, cycle):
    """A load of warp ``w`` completes at ``cycle`` (loads of one cycle retire in creation
    order, as in des)."""
    _complete(st, w, cycle, 0)


@njit(cache=True, inline="always")
def complete_tensor(st, w, cycle):
    """A TDM instruction of warp ``w`` completes at ``cycle`` (its ``KIND`` 1 in the heap)."""
    _complete(st, w, cycle, 1)


@njit(cache=True, inline="always")
def _complete(st, w, cycle, kind):
    c = st.counters[0]
    if cycle > MAX_CYCLE or cycle < 0:
        c.overflow = 1
    c.completions = _push_heap(st.done, c.completions, cycle, c.seq, kind, w)
    c.seq += 1


@njit(cache=True, inline="always")
def _push_heap(heap, n, key, seq, a, b):
    """Add (key, seq, a, b) to the binary min-heap ``heap[:n]`` ordered by (key, seq);
    returns its new size."""
    i = n
    while i > 0:
        parent = (i - 1) // 2
        if heap[parent, 0] < key or (heap[parent, 0] == key and heap[parent, 1] < seq):
            break
        for c in range(4):
            heap[i, c] = heap[parent, c]
        i = parent
    heap[i, 0], heap[i, 1], heap[i, 2], heap[i, 3] = key, seq, a, b
    return n + 1


@njit(cache=True, inline="always")
def pop(heap, n):
    """Remove the smallest entry ``heap[0]`` of the heap ``heap[:n]``; returns its new size."""
    n -= 1
    key, seq, a, b = heap[n, 0], heap[n, 1], heap[n, 2], heap[n, 3]
    i = 0
    while 2 * i + 1 < n:
        child = 2 * i + 1
        if child + 1 < n and _before(heap, child + 1, child):
            child += 1
        if heap[child, 0] > key or (heap[child, 0] == key and heap[child, 1] > seq):
            break
        for c in range(4):
            heap[i, c] = heap[child, c]
        i = child
    heap[i, 0], heap[i, 1], heap[i, 2], heap[i, 3] = key, seq, a, b
    return n


@njit(cache=True, inline="always")
def _before(heap, i, j):
    return heap[i, 0] < heap[j, 0] or (heap[i, 0] == heap[j, 0] and heap[i, 1] < heap[j, 1])


@njit(cache=True, inline="always")
def wrap(x, n):
    """``x % n`` for ``0 <= x < 2n`` (round-robin and ring-buffer indices), without a division."""
    return x - n if x >= n else x
