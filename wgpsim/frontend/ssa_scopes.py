"""Give every SSA value of a printed MLIR module a name of its own.

MLIR's printer scopes value names per region: a name is unique along the chain of regions
that enclose it, but two sibling regions (the ``then`` and ``else`` of an ``scf.if``, two
loops, two functions) may each define ``%3``. Triton 3.9.0 does print such modules (its
persistent matmul tutorial with tensor descriptors defines ``%3`` in four regions). The TTGIR
reader keys values by name, so `unshadow` first renames each definition of a name that was
defined before in a region no longer in scope to ``%name$k`` (k = 2, 3, ...), and every use
of it in its scope. ``%3$2`` is no MLIR name (a name that starts with a digit is all digits;
a ``$k`` already in the text is skipped), so it cannot collide with one.

Regions open with a trailing ``{`` and close with a leading ``}``, as the reader assumes (so
``} else {`` closes one region and opens its sibling). A definition is an op's result
(``%x = ``, ``%x:2 = ``, ``%a, %b = ``), an argument of the region a line opens (``scf.for``'s
induction variable and ``iter_args``, ``scf.while``'s ``(%a = %init)``, ``tt.func``'s
``%arg0: type``) or a block argument (``^bb0(%a: f32, %b: f32):``, as ``tt.reduce`` and
``tt.scan`` bodies and ``cf`` blocks have). Lines keep their number; a renamed line's columns
after the name move by the suffix.

>>> text = '''module {
...   scf.if %c {
...     %3 = ttg.local_alloc %x : (tensor<8xf16, #b>) -> !ttg.memdesc<8xf16, #s, #smem>
...     ttg.local_dealloc %3 : !ttg.memdesc<8xf16, #s, #smem>
...   } else {
...     %3 = ttg.local_alloc %y : (tensor<8xf16, #b>) -> !ttg.memdesc<8xf16, #s, #smem>
...     ttg.local_dealloc %3 : !ttg.memdesc<8xf16, #s, #smem>
...   }
... }'''
>>> print(unshadow(text))
module {
  scf.if %c {
    %3 = ttg.local_alloc %x : (tensor<8xf16, #b>) -> !ttg.memdesc<8xf16, #s, #smem>
    ttg.local_dealloc %3 : !ttg.memdesc<8xf16, #s, #smem>
  } else {
    %3$2 = ttg.local_alloc %y : (tensor<8xf16, #b>) -> !ttg.memdesc<8xf16, #s, #smem>
    ttg.local_dealloc %3$2 : !ttg.memdesc<8xf16, #s, #smem>
  }
}
"""

from __future__ import annotations

import re

__all__ = ["original_name", "unshadow"]

_NAME = re.compile(r"%[A-Za-z0-9_$.\-]+")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
#: the results of an op: ``%x = ``, ``%x:2 = ``, ``%a, %b = `` at the start of its line
_RESULTS = re.compile(r"^(?:%[\w$.\-]+(?::\d+)?)(?:\s*,\s*%[\w$.\-]+(?::\d+)?)*\s*=(?!=)")
#: an argument: ``%a = %init`` (iter_args, the induction variable) or ``%a: type``
_ARGUMENT = re.compile(r"\s*=(?!=)|:\s")


def unshadow(text: str) -> str:
    """``text`` with each redefinition of a name out of its earlier scope renamed ``%name$k``."""
    renamer = _Renamer(set(_NAME.findall(text)))
    return "\n".join(renamer.line(raw) for raw in text.split("\n"))


def original_name(name: str) -> str:
    """The name the module prints for a value `unshadow` renamed.

    >>> original_name("%3$2"), original_name("scratch:%m_ij$2"), original_name("%acc#1")
    ('%3', 'scratch:%m_ij', '%acc#1')
    """
    return re.sub(r"\$\d+(?=#\d+$|$)", "", name)


class _Renamer:
    """The walk's state: the scopes open (original name -> name given) and the names taken."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken
        self.defined: set[str] = set()
        self.scopes: list[dict[str, str]] = [{}]
        self.in_resource = False

    def line(self, raw: str) -> str:
        text = raw.strip()
        if self.in_resource or text.startswith("{-#"):
            self.in_resource = "#-}" not in text
            return raw
        if not text or text.startswith(("//", "#")):
            return raw
        if text.startswith("}") and len(self.scopes) > 1:
            self.scopes.pop()
        opens = text.endswith("{")
        strings = [m.span() for m in _STRING.finditer(raw)]
        names = [m for m in _NAME.finditer(raw) if not any(a < m.start() < b for a, b in strings)]
        results = _RESULTS.match(text)
        end = len(raw) - len(raw.lstrip()) + results.end() if results else 0
        label = text.startswith("^")
        given: dict[int, str] = {}
        outer, inner = [], []
        for m in names:
            if m.start() < end or (label and _ARGUMENT.match(raw, m.end())):
                outer.append(m)
            elif opens and _ARGUMENT.match(raw, m.end()):
                inner.append(m)
            else:
                given[m.start()] = self.resolve(m.group())
        for m in outer:
            given[m.start()] = self.define(m.group())
        if opens:
            self.scopes.append({})
        for m in inner:
            given[m.start()] = self.define(m.group())
        out, at = [], 0
        for m in names:
            out += [raw[at : m.start()], given[m.start()]]
            at = m.end()
        return "".join(out) + raw[at:]

    def resolve(self, name: str) -> str:
        """The name a use of ``name`` reads: its innermost definition in scope (or itself)."""
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return name

    def define(self, name: str) -> str:
        """The name a definition of ``name`` gets in the innermost scope."""
        given = name
        in_scope = any(name in scope for scope in self.scopes)
        if name in self.defined and not in_scope:
            k = 2
            while f"{name}${k}" in self.taken:
                k += 1
            given = f"{name}${k}"
            self.taken.add(given)
        self.defined.add(name)
        self.scopes[-1][name] = given
        return given
