"""Small pieces of MLIR's textual syntax, as Triton prints it: balanced brackets, the trailing
``loc(...)`` of an op, location definitions, and the types the kernel model needs.

>>> split_top("2x128x64xf16, #ttg.swizzled_shared<{vec = 8, order = [1, 0]}>, #smem, mutable")
['2x128x64xf16', '#ttg.swizzled_shared<{vec = 8, order = [1, 0]}>', '#smem', 'mutable']
>>> strip_loc('%0 = ttg.local_load %a : !ttg.memdesc<8xf16, #s, #smem> -> tensor<8xf16, #b> loc(#loc3)')
('%0 = ttg.local_load %a : !ttg.memdesc<8xf16, #s, #smem> -> tensor<8xf16, #b>', '#loc3')
>>> shape_dtype("2x64x128xf16"), shape_dtype("f32")
(((2, 64, 128), 'f16'), ((), 'f32'))
"""

from __future__ import annotations

import re

_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSE = {v: k for k, v in _OPEN.items()}


def scan_brackets(text: str, start: int = 0) -> tuple[int, list[tuple[str, int]]]:
    """Walk ``text`` from ``start`` and return (position where the brackets first balance back to
    depth 0 after opening, or -1; the stack still open at the end). Strings are skipped; ``->``
    is not a bracket."""
    stack: list[tuple[str, int]] = []
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == ">" and i > 0 and text[i - 1] == "-":
            i += 1
            continue
        if c in _OPEN:
            stack.append((c, i))
        elif c in _CLOSE:
            if not stack or stack[-1][0] != _CLOSE[c]:
                return -2 - i, stack  # mismatched close at i
            stack.pop()
            if not stack:
                return i, stack
        i += 1
    return -1, stack


def matching(text: str, start: int) -> int:
    """Index of the bracket closing the one at ``text[start]`` (-1 if it never closes).

    >>> matching("a<b<c>>d", 1)
    6
    """
    end, _ = scan_brackets(text, start)
    return end if end >= 0 else -1


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside brackets and strings; parts stripped."""
    parts, depth, cur, in_str = [], 0, [], False
    prev = ""
    for c in text:
        if in_str:
            cur.append(c)
            in_str = c != '"'
        elif c == '"':
            in_str = True
            cur.append(c)
        elif c in _OPEN:
            depth += 1
            cur.append(c)
        elif c in _CLOSE and not (c == ">" and prev == "-"):
            depth -= 1
            cur.append(c)
        elif c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        prev = c
    tail = "".join(cur).strip()
    if tail or parts:
        parts.append(tail)
    return parts


def strip_loc(line: str) -> tuple[str, str | None]:
    """``(op text, location expression)``: the op without its trailing ``loc(...)``."""
    text = line.rstrip()
    if not text.endswith(")"):
        return text, None
    i = text.rfind(" loc(")
    while i >= 0:
        end = matching(text, i + 4)
        if end == len(text) - 1:
            return text[:i].rstrip(), text[i + 5 : end]
        i = text.rfind(" loc(", 0, i)
    return text, None


#: A call site whose callee lies here (Triton's own language functions, inlined: ``tl.sum``)
#: is reported at the caller's line, the user's.
LIBRARY_PATHS = ("site-packages/triton/", "triton/language/", "triton/experimental/")

_LOC_FILE = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+):(\d+)(?:\s+to\s+.*)?$')
_LOC_NAMED = re.compile(r'^"((?:[^"\\]|\\.)*)"\((.*)\)$', re.S)


def resolve_loc(expr: str | None, table: dict[str, str], depth: int = 0):
    """``(file, line, col)`` of a location expression, following ``#locN`` references, named
    locations, call sites (the callee's location, or the caller's when the callee is Triton's
    own library) and fused locations (the first that has a file); None for ``unknown``.

    >>> table = {"loc9": '"/src/mm.py":16:13', "loc43": '"a"(#loc9)'}
    >>> resolve_loc("#loc43", table), resolve_loc("unknown", table)
    (('/src/mm.py', 16, 13), None)
    >>> resolve_loc('callsite(#loc43 at "/src/top.py":3:1)', table)
    ('/src/mm.py', 16, 13)
    >>> resolve_loc('callsite("/x/site-packages/triton/language/standard.py":314:15 at #loc43)', table)
    ('/src/mm.py', 16, 13)
    """
    if expr is None or depth > 64:
        return None
    e = expr.strip()
    if e.startswith("#"):
        return resolve_loc(table.get(e[1:]), table, depth + 1)
    if m := _LOC_FILE.match(e):
        return m.group(1), int(m.group(2)), int(m.group(3))
    if m := _LOC_NAMED.match(e):
        return resolve_loc(m.group(2), table, depth + 1)
    if e.startswith("callsite(") and e.endswith(")"):
        callee, _, caller = e[len("callsite(") : -1].partition(" at ")
        found = resolve_loc(callee, table, depth + 1)
        if found is None or any(part in found[0] for part in LIBRARY_PATHS):
            return resolve_loc(caller, table, depth + 1) or found
        return found
    if e.startswith("fused"):
        i = e.find("[")
        if i >= 0:
            for part in split_top(e[i + 1 : matching(e, i)]):
                found = resolve_loc(part, table, depth + 1)
                if found is not None:
                    return found
    return None


def loc_frames(expr: str | None, table: dict[str, str], depth: int = 0) -> list[tuple]:
    """Every ``(file, line, col)`` of a location's call-site chain, innermost (the callee)
    first, as LLVM's inlined-at chain lists them; a plain location is one frame.

    >>> table = {"loc9": '"/src/helper.py":16:13'}
    >>> loc_frames('callsite(#loc9 at callsite("/src/k.py":30:4 at "/src/k.py":52:8))', table)
    [('/src/helper.py', 16, 13), ('/src/k.py', 30, 4), ('/src/k.py', 52, 8)]
    """
    if expr is None or depth > 64:
        return []
    e = expr.strip()
    if e.startswith("#"):
        return loc_frames(table.get(e[1:]), table, depth + 1)
    if m := _LOC_NAMED.match(e):
        return loc_frames(m.group(2), table, depth + 1)
    if e.startswith("callsite(") and e.endswith(")"):
        callee, _, caller = e[len("callsite(") : -1].partition(" at ")
        return loc_frames(callee, table, depth + 1) + loc_frames(caller, table, depth + 1)
    found = resolve_loc(e, table, depth + 1)
    return [found] if found else []


def shape_dtype(text: str) -> tuple[tuple[int, ...], str]:
    """``2x64x128xf16`` -> ((2, 64, 128), 'f16'); the element type may be ``!tt.ptr<f16>``."""
    dims: list[int] = []
    rest = text.strip()
    while (m := re.match(r"(\d+)x", rest)) is not None:
        dims.append(int(m.group(1)))
        rest = rest[m.end() :]
    return tuple(dims), rest


def find_types(text: str, prefix: str) -> list[tuple[int, str]]:
    """Every ``prefix<...>`` in ``text`` as (position, the text between the angle brackets)."""
    out, i = [], text.find(prefix)
    while i >= 0:
        lt = i + len(prefix) - 1
        end = matching(text, lt)
        if end < 0:
            break
        out.append((i, text[lt + 1 : end]))
        i = text.find(prefix, end)
    return out


SSA = re.compile(r"%[A-Za-z0-9_$.\-]+(?:#\d+)?")
