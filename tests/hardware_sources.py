"""The comment that gives each value of a hardware file its source (shared by the tests of
every target's file).

A value line's source is its inline comment, or else the nearest comment block above it (a
table's rows share the comment above the table); ``name:`` and ``target:`` need none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

VALUE = re.compile(r"^\s*[A-Za-z_0-9]+:\s*([^#\s][^#]*)?(#.*)?$")


def value_sources(path: Path) -> Iterator[tuple[int, str, str]]:
    """``(line number, value line, its source comment)`` for every value line of ``path``."""
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        m = VALUE.match(line)
        if not m or m.group(1) is None or line.startswith(("name:", "target:")):
            continue
        j = i
        while j >= 0 and "#" not in lines[j] and lines[j].strip():
            j -= 1
        block = []
        while j >= 0 and "#" in lines[j]:
            block.append(lines[j])
            if not lines[j].strip().startswith("#"):  # an inline comment: stop at that line
                break
            j -= 1
        yield i + 1, line, " ".join(block)
