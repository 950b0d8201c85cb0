"""Our `LinearLayout` against Triton 3.9.0's own (`triton._C.libtriton.linear_layout`).

Thousands of seeded random cases per operation; every result must be equal (bases, dim order,
out sizes) or, for predicates, identical. Only inputs the binding accepts are generated (it
aborts the process on invalid ones): surjective outers, matching dims, sizes that fit.
"""

from __future__ import annotations

import pytest
import strategies as S

from wgpsim.layout.linear_layout import LinearLayout

pytest.importorskip("triton")
from triton._C.libtriton import linear_layout as tll  # noqa: E402

pytestmark = pytest.mark.triton
TL = tll.LinearLayout


def to_triton(lay: LinearLayout):
    bases = [(d, [list(b) for b in bs]) for d, bs in lay.bases]
    return TL.from_bases(bases, list(lay.out_dim_names), [s for _, s in lay.out_dims], False)


def from_triton(t) -> LinearLayout:
    return LinearLayout(t.bases, t.out_dims)


def run_cases(n: int, seed: int, case) -> int:
    """Run ``case(ri)`` n times with per-case seeds; report the first mismatch with its seed."""
    for k in range(n):
        ri = S.seeded(seed * 1_000_003 + k)
        try:
            case(ri)
        except AssertionError as e:
            raise AssertionError(f"case seed {seed * 1_000_003 + k}: {e}") from None
    return n


def any_layout(ri) -> LinearLayout:
    return S.surjective_layout(ri) if ri(0, 2) == 0 else S.layout(ri)


def test_queries_apply_and_matrix():
    def case(ri):
        lay = any_layout(ri)
        t = to_triton(lay)
        assert from_triton(t) == lay
        assert lay.is_surjective() == t.is_surjective(), lay
        assert lay.is_injective() == t.is_injective(), lay
        assert lay.is_invertible() == t.is_invertible(), lay
        assert lay.get_matrix().tolist() == [list(r) for r in t.get_matrix_view()], lay
        for _ in range(4):
            x = {d: ri(0, lay.in_dim_size(d) - 1) for d in lay.in_dim_names}
            assert lay.apply(x) == dict(t.apply(x)), (lay, x)

    assert run_cases(4000, 1, case) == 4000


def test_constructors():
    """identity_1d, zeros_1d, strided_1d and from_bases with inferred out sizes."""
    n = 0
    for size in (1, 2, 4, 8, 32):
        for stride in (1, 2, 8):
            n += 1
            got = LinearLayout.strided_1d(size, stride, "i", "o")
            assert got == from_triton(TL.strided_1d(size, stride, "i", "o"))
        assert LinearLayout.identity_1d(size, "i", "o") == from_triton(
            TL.identity_1d(size, "i", "o")
        )
        for out_size in (1, 4):
            z = LinearLayout.zeros_1d(size, "i", "o", out_size)
            assert z == from_triton(TL.zeros_1d(size, "i", "o", out_size))

    def case(ri):
        lay = S.surjective_layout(ri)
        bases = [(d, [list(b) for b in bs]) for d, bs in lay.bases]
        want = from_triton(TL.from_bases(bases, list(lay.out_dim_names)))
        assert LinearLayout.from_bases(bases, lay.out_dim_names) == want, lay

    assert n + run_cases(1000, 6, case) == 1015


def test_product():
    def case(ri):
        if ri(0, 1):  # one global order: common dims agree
            ins, outs = S.shuffled(ri, S.IN_POOL), S.shuffled(ri, S.OUT_POOL)
            pick = [(ins, outs), (ins, outs)]
        else:  # each operand its own order: 3.9.0 merges the disagreeing common dims
            pick = [(S.shuffled(ri, S.IN_POOL), S.shuffled(ri, S.OUT_POOL)) for _ in range(2)]
        a, b = (
            S.layout(ri, ins=S.subset(ri, ins, 0, 3), outs=_outs(ri, S.subset(ri, outs, 1, 3)))
            for ins, outs in pick
        )
        assert a * b == from_triton(to_triton(a) * to_triton(b)), (a, b)

    assert run_cases(4000, 2, case) == 4000


def test_compose():
    def case(ri):
        inner = any_layout(ri)
        o_ins = S.shuffled(ri, inner.out_dim_names)
        bits = [inner.out_dim_bits(d) + ri(0, 1) for d in o_ins]
        outer = S.layout(ri, ins=o_ins, in_bits=bits)
        got = inner.compose(outer)
        assert got == from_triton(to_triton(inner).compose(to_triton(outer))), (inner, outer)

    assert run_cases(3000, 3, case) == 3000


def test_invert_and_compose():
    def case(ri):
        outer = S.surjective_layout(ri)
        outs = S.shuffled(ri, outer.out_dim_names)
        sizes = [
            (o, max(1, outer.out_dim_size(o) >> ri(0, 2 if ri(0, 2) == 0 else 0))) for o in outs
        ]
        this = S.layout(ri, ins=S.shuffled(ri, S.subset(ri, S.IN_POOL, 1, 3)), outs=sizes)
        if ri(0, 1):  # copy some of outer's in dims verbatim: the identity-dim rule
            keep = dict(this.bases)
            for d, bs in outer.transpose_outs(outs).bases:
                if ri(0, 1) and all(v < s for b in bs for v, (_, s) in zip(b, sizes, strict=True)):
                    keep[d] = bs
            this = LinearLayout(list(keep.items()), sizes)
        got = this.invert_and_compose(outer)
        want = from_triton(to_triton(this).invert_and_compose(to_triton(outer)))
        assert got == want, (this, outer)
        x = {d: ri(0, this.in_dim_size(d) - 1) for d in this.in_dim_names}
        assert outer.apply(got.apply(x)) == this.apply(x)

    assert run_cases(5000, 4, case) == 5000


def test_pseudoinvert_and_invert():
    def case(ri):
        outs = S.shuffled(ri, S.subset(ri, S.OUT_POOL, 1, 3))
        pool = list(S.IN_POOL) + ([outs[0]] if ri(0, 1) else [])  # an in dim named like an out
        ins = S.shuffled(ri, S.subset(ri, pool, 1, 3))
        invertible = ri(0, 2) == 0
        gen = S.invertible_layout if invertible else S.surjective_layout
        lay = gen(ri, ins=ins, outs=_outs(ri, outs))
        t = to_triton(lay)
        assert lay.pseudoinvert() == from_triton(t.pseudoinvert()), lay
        if invertible:
            assert lay.invert() == from_triton(t.invert()), lay

    assert run_cases(3000, 5, case) == 3000


def _outs(ri, names):
    return [(o, 1 << ri(0, S.MAX_BITS)) for o in names]
