"""The text form of a `LinearLayout`: its repr in Triton's basis notation, which `from_repr`
reads back, and its table (Triton's ``toString``: one line per basis).

The repr names each in dim with its bases, one per input bit, and the out dims with their
sizes; a user can paste it back, and nothing in it is executed on the way (literal values
only). The seed's example:

>>> from wgpsim.layout.linear_layout import LinearLayout
>>> L = LinearLayout(warp=[[2, 1], [1, 0]], out_dims={"dim0": 4, "dim1": 2})
>>> to_repr(L)
'LinearLayout(warp=[[2, 1], [1, 0]], out_dims={"dim0": 4, "dim1": 2})'
>>> from_repr(to_repr(L), LinearLayout) == L
True

The functions read the layout's ``bases`` and ``out_dims`` only (the `ll_interface.Layout`
protocol), so the class imports this module and not the other way round.
"""

from __future__ import annotations

import ast
import json
import keyword
from typing import TypeVar

from wgpsim.errors import LayoutError
from wgpsim.layout.ll_interface import Layout

L = TypeVar("L", bound=Layout)


def _is_kwarg(name: str) -> bool:
    """Can ``name`` be written as ``name=`` in the repr?"""
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and name not in ("bases", "out_dims", "require_surjective")
    )


def to_repr(layout: Layout) -> str:
    """``LinearLayout(lane=[[1], [2]], out_dims={"offset": 4})``; in dims that cannot be
    keywords are written as ``bases=[("in dim", [[1], [2]])]``.

    >>> from wgpsim.layout.linear_layout import LinearLayout
    >>> to_repr(LinearLayout([("for", [[1]])], [("o", 2)]))
    'LinearLayout(bases=[("for", [[1]])], out_dims={"o": 2})'
    """
    name = type(layout).__name__
    outs = ", ".join(f"{json.dumps(o)}: {s}" for o, s in layout.out_dims)
    if all(_is_kwarg(d) for d, _ in layout.bases):
        ins = "".join(f"{d}={[list(b) for b in bs]}, " for d, bs in layout.bases)
        return f"{name}({ins}out_dims={{{outs}}})"
    ins = ", ".join(f"({json.dumps(d)}, {[list(b) for b in bs]})" for d, bs in layout.bases)
    return f"{name}(bases=[{ins}], out_dims={{{outs}}})"


def from_repr(text: str, cls: type[L]) -> L:
    """Parse the text that :func:`to_repr` prints into a ``cls`` (literal values only; nothing
    is executed).

    >>> from wgpsim.layout.linear_layout import LinearLayout
    >>> from_repr("__import__('os')", LinearLayout)
    Traceback (most recent call last):
    ...
    wgpsim.errors.LayoutError: from_repr: cannot parse "__import__('os')": not a LinearLayout(...) call
    """
    try:
        node = ast.parse(text.strip(), mode="eval").body
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == cls.__name__):
            raise ValueError(f"not a {cls.__name__}(...) call")
        args = [ast.literal_eval(a) for a in node.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    except (SyntaxError, ValueError) as e:
        raise LayoutError(f"from_repr: cannot parse {text!r}: {e}") from None
    return cls(*args, **kwargs)


def to_table(layout: Layout) -> str:
    """One line per basis, Triton's toString style.

    >>> from wgpsim.layout.linear_layout import LinearLayout
    >>> print(to_table(LinearLayout(warp=[[2, 1], [1, 0]], out_dims={"dim0": 4, "dim1": 2})))
    warp=1 -> (2, 1)
    warp=2 -> (1, 0)
    where out dims are: [dim0 (size 4), dim1 (size 2)]
    """
    lines = []
    for d, bs in layout.bases:
        if not bs:
            lines.append(f"{d} is a size 1 dimension")
        lines += [f"{d}={1 << k} -> ({', '.join(map(str, b))})" for k, b in enumerate(bs)]
    outs = ", ".join(f"{o} (size {s})" for o, s in layout.out_dims)
    lines.append(f"where out dims are: [{outs}]")
    return "\n".join(lines)


__all__ = ["from_repr", "to_repr", "to_table"]
