"""Random linear layouts for property tests (hypothesis) and Triton conformance runs (seeded).

Every generator takes ``ri(lo, hi)``, a function returning an int in [lo, hi]; `hypothesis`
strategies pass ``draw(st.integers(lo, hi))`` and the conformance test passes a seeded
``random.Random().randint``, so both explore the same space.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from hypothesis import strategies as st

from wgpsim.layout.linear_layout import LinearLayout

RandInt = Callable[[int, int], int]
IN_POOL = ("register", "lane", "warp", "block")
OUT_POOL = ("dim0", "dim1", "dim2")
MAX_BITS = 5


def subset(ri: RandInt, pool: Sequence[str], lo: int, hi: int) -> list[str]:
    """A random ordered subset of ``pool`` with lo..hi elements (pool order kept)."""
    left = list(pool)
    picked = {left.pop(ri(0, len(left) - 1)) for _ in range(ri(lo, min(hi, len(pool))))}
    return [d for d in pool if d in picked]


def shuffled(ri: RandInt, items: Sequence[str]) -> list[str]:
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = ri(0, i)
        out[i], out[j] = out[j], out[i]
    return out


def _split(flat: int, outs: Sequence[tuple[str, int]]) -> list[int]:
    vals = []
    for _, size in outs:
        vals.append(flat % size)
        flat //= size
    return vals


def _assemble(ri: RandInt, ins: Sequence[str], vecs: list[int], outs, in_bits=None):
    """Deal flat basis vectors to the in dims (random sizes summing to len(vecs))."""
    if in_bits is None:
        in_bits = [0] * len(ins)
        for _ in vecs:
            if ins:
                in_bits[ri(0, len(ins) - 1)] += 1
    it = iter(vecs)
    bases = [
        (d, [_split(next(it), outs) for _ in range(n)]) for d, n in zip(ins, in_bits, strict=True)
    ]
    return LinearLayout(bases, outs)


def layout(
    ri: RandInt,
    ins: Sequence[str] | None = None,
    outs: Sequence[tuple[str, int]] | None = None,
    max_bits: int = MAX_BITS,
    in_bits: Sequence[int] | None = None,
) -> LinearLayout:
    """Any layout: random dims (sizes up to 2**max_bits), random bases (zeros and repeats too)."""
    ins = list(ins) if ins is not None else shuffled(ri, subset(ri, IN_POOL, 0, 3))
    if outs is None:
        outs = [(o, 1 << ri(0, max_bits)) for o in shuffled(ri, subset(ri, OUT_POOL, 1, 3))]
    total = sum(s.bit_length() - 1 for _, s in outs)
    in_bits = list(in_bits) if in_bits is not None else [ri(0, max_bits) for _ in ins]
    vecs: list[int] = []
    for _ in range(sum(in_bits)):
        kind = ri(0, 5)
        if kind == 0 or total == 0:
            vecs.append(0)
        elif kind == 1 and vecs:
            vecs.append(vecs[ri(0, len(vecs) - 1)])
        elif kind == 2:
            vecs.append(1 << ri(0, total - 1))
        else:
            vecs.append(ri(0, (1 << total) - 1))
    return _assemble(ri, ins, vecs, outs, in_bits)


def surjective_layout(
    ri: RandInt,
    ins: Sequence[str] | None = None,
    outs: Sequence[tuple[str, int]] | None = None,
    max_bits: int = MAX_BITS,
    extra_bits: int | None = None,
) -> LinearLayout:
    """A surjective layout: a scrambled basis of the outputs plus some redundant bits."""
    ins = list(ins) if ins is not None else shuffled(ri, subset(ri, IN_POOL, 1, 3))
    if outs is None:
        outs = [(o, 1 << ri(0, max_bits)) for o in shuffled(ri, subset(ri, OUT_POOL, 1, 3))]
    total = sum(s.bit_length() - 1 for _, s in outs)
    vecs = [1 << k for k in range(total)]
    extra = ri(0, 3) if extra_bits is None else extra_bits
    for _ in range(extra):
        vecs.append(0 if ri(0, 2) == 0 or total == 0 else ri(0, (1 << total) - 1))
    for _ in range(2 * len(vecs)):  # span-preserving mixing
        i, j = ri(0, len(vecs) - 1), ri(0, len(vecs) - 1)
        if i != j:
            vecs[j] ^= vecs[i]
    vecs = [vecs[k] for k in shuffled(ri, list(range(len(vecs))))]  # type: ignore[misc]
    return _assemble(ri, ins, vecs, outs)


def invertible_layout(ri: RandInt, **kw) -> LinearLayout:
    return surjective_layout(ri, extra_bits=0, **kw)


def seeded(seed: int) -> RandInt:
    return random.Random(seed).randint


def _hyp(gen):
    @st.composite
    def strat(draw, **kw):
        return gen(lambda lo, hi: draw(st.integers(lo, hi)), **kw)

    return strat


layouts = _hyp(layout)
surjective_layouts = _hyp(surjective_layout)
invertible_layouts = _hyp(invertible_layout)
rand_ints = st.composite(lambda draw: lambda lo, hi: draw(st.integers(lo, hi)))
