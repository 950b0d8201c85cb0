"""A figure's run details (the config's name and the changes it ran with) as a small caption.

A long ``--set`` (a whole layout string) made the title two long lines; the title now names the
figure alone, and the details go in a smaller line under the axes, each item shortened in the
middle to :data:`ITEM_CHARS` characters and the whole wrapped at :data:`LINE_CHARS`.

>>> details_text(["lds", "layouts.plain=#ttg.swizzled_shared<{vec = 1, perPhase = 1, "
...               "maxPhase = 1, order = [1, 0]}>", "warps=8"])
'run: lds; layouts.plain=#ttg.swizzled_sha … maxPhase = 1, order = [1, 0]}>; warps=8'
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from matplotlib.figure import Figure

ITEM_CHARS = 64
"""An item (an override) longer than this is shortened in the middle with an ellipsis."""
LINE_CHARS = 120
"""The caption wraps at this many characters."""


def shorten(text: str, limit: int = ITEM_CHARS) -> str:
    """``text`` with its middle replaced by `` … `` when longer than ``limit``.

    >>> shorten("abcdefghij", 7), shorten("abc", 7)
    ('ab … ij', 'abc')
    """
    if len(text) <= limit:
        return text
    keep = limit - 3
    return f"{text[: (keep + 1) // 2].rstrip()} … {text[len(text) - keep // 2 :].lstrip()}"


def details_text(items: Sequence[str]) -> str:
    """``run: a; b; c``, each item shortened, wrapped at :data:`LINE_CHARS`."""
    text = "run: " + "; ".join(shorten(str(i)) for i in items)
    return "\n".join(textwrap.wrap(text, LINE_CHARS, break_long_words=True))


def add_details(fig: Figure, items: Sequence[str]) -> None:
    """The caption under the figure's axes (nothing for no items), small and grey."""
    if items:
        fig.supxlabel(details_text(items), fontsize=8, color="0.35")


__all__ = ["ITEM_CHARS", "LINE_CHARS", "add_details", "details_text", "shorten"]
