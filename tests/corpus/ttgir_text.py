"""A line reader for TTGIR text, just enough to build and index the corpus (no triton needed).

It finds the module's aliases, locations and ops, and splits ``!ttg.memdesc<...>`` and
``tensor<...>`` types. It is not wgpsim's kernel frontend (that lives in ``wgpsim.frontend``);
the corpus uses it to list the LDS ops of a module and to build the one-op probe kernels.

>>> text = '''#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
... #loc3 = loc("k.py":7:9)
... #loc4 = loc("y"(#loc3))
... module {
...     %y = ttg.local_load %smem : !ttg.memdesc<64x64xf16, #shared, #smem, mutable> -> tensor<64x64xf16, #blocked> loc(#loc4)
... }'''
>>> op = ops(text)[0]
>>> op.op, op.result, op.operands, op.loc
('ttg.local_load', '%y', ['%smem'], 'k.py:7')
>>> memdesc(op.types[0])
MemDesc(shape=(64, 64), elem='f16', encoding='#shared', space='#smem', mutable=True, alloc_shape=None)
>>> tensor(op.types[1])
Tensor(shape=(64, 64), elem='f16', encoding='#blocked')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ALIAS = re.compile(r"^(#[\w$.-]+) = (#(?:ttg|amdg|ttng)\..*)$")
_LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)$")
_LOC_FILE = re.compile(r'^"([^"]*)":(\d+):(\d+)')
_LOC_NAMED = re.compile(r'^"[^"]*"\((#loc\d*)\)$')
_LOC_REF = re.compile(r"^(#loc\d*)$")
_OP = re.compile(
    r"^\s*(?:(?P<result>%[\w$.-]+(?::\d+)?(?:, %[\w$.-]+)*) = )?"
    r'"?(?P<op>(?:ttg|amdg|tt|scf|arith|gpu|math|llvm|cf|ttng|rocdl)\.[\w.]+)"?(?P<rest>.*)$'
)
_TRAILING_LOC = re.compile(r"\s*loc\((#loc\d*|unknown)\)\s*$")


@dataclass(frozen=True)
class Op:
    """One op line: its position among the module's op lines, result, name, operands (SSA
    names before the first ``:``), types (after the last top-level `` : ``) and location."""

    index: int
    line: int
    result: str | None
    op: str
    operands: list[str]
    attrs: str
    types: list[str]
    loc: str | None
    text: str


@dataclass(frozen=True)
class MemDesc:
    shape: tuple[int, ...]
    elem: str
    encoding: str
    space: str
    mutable: bool
    alloc_shape: tuple[int, ...] | None

    def text(self, *, shape=None, mutable=None, alloc_shape=...) -> str:
        """The type as Triton prints it, with fields replaced."""
        shape = self.shape if shape is None else tuple(shape)
        mutable = self.mutable if mutable is None else mutable
        alloc = self.alloc_shape if alloc_shape is ... else alloc_shape
        parts = [_dims(shape, self.elem), self.encoding, self.space]
        if mutable:
            parts.append("mutable")
        if alloc is not None and tuple(alloc) != shape:
            parts.append("x".join(map(str, alloc)))
        return f"!ttg.memdesc<{', '.join(parts)}>"


@dataclass(frozen=True)
class Tensor:
    shape: tuple[int, ...]
    elem: str
    encoding: str


def _dims(shape, elem: str) -> str:
    return "x".join([*map(str, shape), elem]) if shape else elem


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside <>, (), [], {} and strings."""
    out, depth, start, i, quoted = [], 0, 0, 0, False
    while i < len(text):
        ch = text[i]
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "<([{":
            depth += 1
        elif not quoted and ch in ">)]}" and not (ch == ">" and text[i - 1] == "-"):
            depth -= 1
        elif not quoted and depth == 0 and text.startswith(sep, i):
            out.append(text[start:i].strip())
            start = i + len(sep)
            i += len(sep)
            continue
        i += 1
    out.append(text[start:].strip())
    return out


def aliases(text: str) -> dict[str, str]:
    """``#name = #ttg.…`` definitions, in module order."""
    return {m[1]: m[2] for line in text.splitlines() if (m := _ALIAS.match(line))}


_ALIAS_REF = re.compile(r"#(?!ttg\.|amdg\.|loc)[\w$-]+")


def resolve(text: str, aliases: dict[str, str]) -> str:
    """``text`` with every ``#alias`` replaced by its definition (recursively).

    >>> resolve("#ttg.dot_op<{opIdx = 0, parent = #mma}>", {"#mma": "#ttg.amd_wmma<{x}>"})
    '#ttg.dot_op<{opIdx = 0, parent = #ttg.amd_wmma<{x}>}>'
    """
    for _ in range(20):
        new = _ALIAS_REF.sub(lambda m: aliases.get(m[0], m[0]), text)
        if new == text:
            return text
        text = new
    raise ValueError(f"alias cycle in {text!r}")


def piece_shape_differs(encoding: str, shape: tuple[int, ...]) -> bool:
    """A ``#ttg.partitioned_shared`` (resolved text) whose padded inner layout carries a shape
    other than the piece's (``shape`` cut along the partition dim into all its pieces).

    >>> piece_shape_differs("#ttg.partitioned_shared<{numPartitions = 2, numGroups = 1, "
    ...     "partitionDim = 0, partitionLayout = #ttg.padded_shared<[512:+16] {order = [1, 0], "
    ...     "shape = [128, 64]}>}>", (128, 64))
    True
    """
    m = re.search(
        r"numPartitions = (\d+), numGroups = (\d+), partitionDim = (\d+), partitionLayout = "
        r"#ttg\.padded_shared<[^>]*shape = \[([\d, ]+)\]",
        encoding,
    )
    if not m:
        return False
    piece = list(shape)
    piece[int(m[3])] //= int(m[1]) * int(m[2])
    return [int(v) for v in m[4].split(",")] != piece


def alias_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if _ALIAS.match(line)]


def locations(text: str) -> dict[str, str]:
    """``#locN`` -> ``file:line`` (named and nested locations resolved; unknown ones dropped)."""
    raw = {m[1]: m[2] for line in text.splitlines() if (m := _LOC_DEF.match(line))}
    resolved: dict[str, str] = {}

    def resolve(name: str, depth: int = 0) -> str | None:
        if name in resolved or depth > 50 or name not in raw:
            return resolved.get(name)
        body = raw[name]
        if m := _LOC_FILE.match(body):
            resolved[name] = f"{m[1]}:{m[2]}"
        elif ((m := _LOC_NAMED.match(body)) or (m := _LOC_REF.match(body))) and (
            inner := resolve(m[1], depth + 1)
        ) is not None:
            resolved[name] = inner
        return resolved.get(name)

    for name in raw:
        resolve(name)
    return resolved


def ops(text: str) -> list[Op]:
    """Every op line of the module (``module``/``tt.func`` headers excluded), in order."""
    locs = locations(text)
    out: list[Op] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith("#") or not (m := _OP.match(line)):
            continue
        rest = m["rest"]
        loc = None
        if lm := _TRAILING_LOC.search(rest):
            loc = locs.get(lm[1])
            rest = rest[: lm.start()]
        head, types = _split_types(rest)
        operands = re.findall(r"%[\w$.-]+(?:#\d+)?", head.split("{")[0])
        out.append(
            Op(
                len(out),
                lineno,
                m["result"],
                m["op"],
                operands,
                head,
                types,
                loc,
                line.strip(),
            )
        )
    return out


def _split_types(rest: str) -> tuple[str, list[str]]:
    parts = split_top(rest, " : ")
    if len(parts) < 2:
        return rest, []
    types: list[str] = []
    for part in split_top(parts[-1], " -> "):
        part = part.strip()
        if part.startswith("(") and part.endswith(")"):
            part = part[1:-1]
        types.extend(t for t in split_top(part, ",") if t)
    return " : ".join(parts[:-1]), types


def memdesc(text: str) -> MemDesc:
    """Split ``!ttg.memdesc<128x64xf16, #shared, #smem, mutable, 2x128x64>``."""
    inner = text.strip()
    if inner.startswith("!ttg.memdesc<"):
        inner = inner[len("!ttg.memdesc<") : -1]
    elif inner.startswith("<"):
        inner = inner[1:-1]
    fields = split_top(inner, ",")
    shape, elem = _shape_elem(fields[0])
    mutable = "mutable" in fields[3:]
    alloc = [f for f in fields[3:] if f != "mutable"]
    alloc_shape = tuple(int(d) for d in alloc[0].split("x")) if alloc else None
    return MemDesc(shape, elem, fields[1], fields[2], mutable, alloc_shape)


def tensor(text: str) -> Tensor:
    """Split ``tensor<128x64xf16, #ttg.dot_op<{...}>>``."""
    inner = text.strip()[len("tensor<") : -1]
    fields = split_top(inner, ",")
    shape, elem = _shape_elem(fields[0])
    return Tensor(shape, elem, fields[1] if len(fields) > 1 else "")


def _shape_elem(text: str) -> tuple[tuple[int, ...], str]:
    dims = text.split("x")
    shape = []
    while dims and dims[0].isdigit():
        shape.append(int(dims.pop(0)))
    return tuple(shape), "x".join(dims)


def module_attributes(text: str) -> str:
    """The ``{...}`` of the ``module attributes`` line."""
    for line in text.splitlines():
        if line.startswith("module attributes"):
            return line[line.index("{") : line.rindex("}") + 1]
    raise ValueError("no 'module attributes' line")


def int_attribute(text: str, name: str) -> int | None:
    m = re.search(rf'"?{re.escape(name)}"? = (\d+) : i32', module_attributes(text))
    return int(m[1]) if m else None


_VIEWS = (
    "ttg.memdesc_index",
    "ttg.memdesc_subslice",
    "ttg.memdesc_trans",
    "ttg.memdesc_reshape",
    "ttg.memdesc_reinterpret",
)


def loops(text: str) -> list[tuple[int, int]]:
    """(first, last) op index of every ``scf.for``/``scf.while`` body, from the braces."""
    stack: list[tuple[bool, int]] = []
    out: list[tuple[int, int]] = []
    index = -1
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        is_op = bool(_OP.match(line))
        if is_op:
            index += 1
        code = _TRAILING_LOC.sub("", line).rstrip()
        closes = code.lstrip().startswith("}")
        if closes and stack:
            is_loop, start = stack.pop()
            if is_loop:
                out.append((start, index))
        if code.endswith("{") and not code.lstrip().startswith("module"):
            stack.append((is_op and bool(re.search(r"scf\.(for|while)\b", code)), index))
    return sorted(out)


def live_ranges(text: str) -> dict[int, tuple[int, int]]:
    """Live range ``[start, end)`` in op indices of every ``ttg.local_alloc`` (by op index):
    from the alloc to the last use of it or of a view of it (loop-carried copies included),
    a use inside a loop that the alloc is outside of extending to that loop's end."""
    all_ops = ops(text)
    body = loops(text)
    ranges: dict[int, tuple[int, int]] = {}
    for alloc in all_ops:
        if alloc.op != "ttg.local_alloc" or not alloc.result:
            continue
        names, last = {alloc.result}, alloc.index
        for op in all_ops[alloc.index + 1 :]:
            if not names.intersection(o.split("#")[0] for o in op.operands):
                continue
            end = op.index
            for first, stop in body:
                if first < op.index <= stop and not first < alloc.index <= stop:
                    end = max(end, stop)
            last = max(last, end)
            if op.result and (op.op in _VIEWS or op.op.startswith("scf.")):
                names.update(r.split(":")[0] for r in op.result.split(", "))
            if op.op.startswith("scf."):
                names.update(re.findall(r"(%[\w$.-]+) = %", op.attrs))
        ranges[alloc.index] = (alloc.index, last + 1)
    return ranges
