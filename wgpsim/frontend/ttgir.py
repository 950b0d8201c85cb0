"""Read a whole TTGIR module (Triton 3.9.0, gfx1250) into the kernel model.

The reader walks the module line by line as Triton prints it (one op a line, regions opened by a
trailing ``{`` and closed by a leading ``}``). It reads the ``#name = ...`` aliases (layouts
through `wgpsim.layout.notation`), the ``#locN`` table, the module attributes (``ttg.num-warps``,
``ttg.threads-per-warp``, ``ttg.target``, ``ttg.shared``), functions, ``scf.for``/``scf.if``
nesting (or the ``cf`` blocks of a module dumped after ``convert-scf-to-cf``), every
``ttg.local_alloc`` (with ``allocation.offset`` when the module was dumped after Triton's
``allocate-shared-memory``), the LDS ops, and the views between them and their allocation
(through ``iter_args``, loop results and block arguments). Ops are numbered as Triton's allocator
numbers them (post-order) and each buffer gets its live range from its uses.

A module it cannot read raises `wgpsim.errors.ModuleError` naming ``file:line:column`` and what
was expected: an unknown op or attribute, truncated text, a target other than gfx1250.

>>> text = '''
... #shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
... #blocked = #ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
... #smem = #ttg.shared_memory
... module attributes {"ttg.num-warps" = 4 : i32, ttg.target = "hip:gfx1250", "ttg.threads-per-warp" = 32 : i32} {
...   tt.func public @copy(%arg0: tensor<64x64xf16, #blocked>) {
...     %0 = ttg.local_alloc %arg0 : (tensor<64x64xf16, #blocked>) -> !ttg.memdesc<64x64xf16, #shared, #smem> loc(#loc1)
...     %1 = ttg.local_load %0 : !ttg.memdesc<64x64xf16, #shared, #smem> -> tensor<64x64xf16, #blocked> loc(#loc2)
...     tt.return
...   }
... }
... #loc1 = loc("/src/copy.py":7:16)
... #loc2 = loc("/src/copy.py":8:12)
... '''
>>> k = read_ttgir(text)
>>> k.name, k.num_warps, [(op.op, op.name, op.loc.short) for op in k.ops]
('copy', 4, [('ttg.local_alloc', '%0', 'copy.py:7'), ('ttg.local_load', '%1', 'copy.py:8')])
>>> k.buffers[0].memdesc.shape_text, k.buffers[0].live
('64x64xf16', (0, 2))
>>> read_ttgir(text.replace("ttg.local_load", "ttg.local_laod"), source="k.ttgir")
Traceback (most recent call last):
...
wgpsim.errors.ModuleError: k.ttgir:8:10: unknown op 'ttg.local_laod' (did you mean 'ttg.local_load'?)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from wgpsim.errors import LayoutError, LayoutRangeError, ModuleError, did_you_mean
from wgpsim.frontend.mlir_text import (
    SSA,
    loc_frames,
    matching,
    resolve_loc,
    scan_brackets,
    split_top,
    strip_loc,
)
from wgpsim.frontend.model import (
    Buffer,
    Kernel,
    LdsOp,
    Loc,
    Loop,
    NotModelled,
)
from wgpsim.frontend.ssa_scopes import unshadow
from wgpsim.frontend.ttgir_ops import ATTR_INT, OpRecord, OpSemantics
from wgpsim.frontend.vocabulary import (
    CLOSED_DIALECTS,
    KNOWN_OPS,
    MODELLED_KINDS,
    OPEN_DIALECTS,
    UNMODELLED_KINDS,
)
from wgpsim.inputs import read_text
from wgpsim.layout.addresses import check_num_warps
from wgpsim.layout.notation import parse
from wgpsim.packaged import target_names, triton_targets

__all__ = ["read_ttgir", "read_ttgir_file"]

_ALIAS = re.compile(r"^#([A-Za-z_][\w$.\-]*)\s*=\s*(.*)$")
_RESULTS = re.compile(r"^((?:%[\w$.\-]+(?::\d+)?)(?:\s*,\s*%[\w$.\-]+(?::\d+)?)*)\s*=\s*")
_OPNAME = re.compile(r'^"?([A-Za-z_][\w$]*\.[\w$.]+)"?')
_KIND = re.compile(r"^#(\w+)\.(\w+)")
_LABEL = re.compile(r"^\^([\w$.\-]+)(?:\((.*)\))?:")


def read_ttgir_file(path: str | Path) -> Kernel:
    """`read_ttgir` of a file (``*.ttgir``, or an ``*.mlir`` dump)."""
    path = Path(path)
    text = read_text(path, "TTGIR module", ModuleError, lenient=True)  # at most 8 MiB
    return read_ttgir(text, source=str(path))


def read_ttgir(text: str, source: str | None = None) -> Kernel:
    """The kernel model of a TTGIR module given as text (``source`` names it in errors)."""
    return _Reader(unshadow(text), source or "<ttgir>").read()


class _Reader(OpSemantics):
    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.lines = text.splitlines()
        self.locs: dict[str, str] = {}
        self.alias_text: dict[str, str] = {}
        self.encodings: dict[str, Any] = {}  # alias -> parsed encoding (modelled kinds)
        self.unmodelled: dict[str, str] = {}  # alias -> why not modelled
        self.inline: dict[str, Any] = {}
        self.attrs: dict[str, str] = {}
        self.functions: list[str] = []
        self.public: list[str] = []
        self.next_id = 0
        self.consts: dict[str, int] = {}
        self.producer: dict[str, str] = {}  # value -> the op that made its registers
        self.root: dict[str, str] = {}  # SSA value -> allocation name
        self.view_of: dict[str, tuple[str, str]] = {}  # value -> (source value, view op)
        self.stage_of: dict[str, int | None] = {}
        self.subslice_of: dict[str, tuple[int, ...]] = {}
        self.view_args: dict[str, Any] = {}
        self.buffers: list[dict[str, Any]] = []
        self.buffer_by_name: dict[str, dict[str, Any]] = {}
        self.ops: list[dict[str, Any]] = []
        self.loops: list[dict[str, Any]] = []
        self.not_modelled: list[dict[str, Any]] = []
        self.labels: dict[str, tuple[list[str], int, int]] = {}  # label -> (args, first id, line)
        self.pending_br: dict[str, list[list[str]]] = {}
        self.cf_loops: list[tuple[int, int]] = []
        self.uses: dict[str, list[OpRecord]] = {}
        self.loaded: dict[str, dict[str, Any]] = {}  # see OpSemantics._note_readers
        self.readers: dict[int, list[OpRecord]] = {}
        self.used: set[str] = set()  # every SSA value some op reads

    # ---------------------------------------------------------------- errors
    def fail(self, line: int, col: int, what: str) -> ModuleError:
        return ModuleError(f"{self.source}:{line}:{col}: {what}")

    # ---------------------------------------------------------------- top level
    def read(self) -> Kernel:
        self._definitions()
        self._walk()
        return self._kernel()

    def _definitions(self) -> None:
        """Aliases and locations (at column 0, before or after the module)."""
        for no, raw in enumerate(self.lines, 1):
            m = _ALIAS.match(raw)
            if m is None:
                continue
            name, value = m.group(1), m.group(2).strip()
            if value.startswith("loc("):
                end = matching(value, 3)
                if end < 0:
                    raise self.fail(no, len(raw) + 1, "truncated location: expected ')'")
                self.locs[name] = value[4:end]
            else:
                self._alias(name, value, no, raw.index(value) + 1)

    def _alias(self, name: str, value: str, line: int, col: int) -> None:
        if scan_brackets(value)[1]:
            raise self.fail(line, col + len(value), f"truncated attribute #{name}: expected '>'")
        self.alias_text[name] = value
        enc, why = self._parse_encoding(value, line, col)
        if enc is not None:
            self.encodings[name] = enc
        else:
            self.unmodelled[name] = why

    def _parse_encoding(self, text: str, line: int, col: int) -> tuple[Any, str]:
        """(encoding or None, why not modelled); unknown kinds and fields are errors."""
        m = _KIND.match(text)
        if m is None:
            return None, f"{text} is not a layout"
        dialect, kind = m.groups()
        if dialect not in ("ttg", "amdg"):
            if dialect in ("ttng", "nvws", "nvgpu"):
                raise self.fail(
                    line,
                    col,
                    f"attribute {text[:40]}: an NVIDIA layout; wgpsim "
                    'reads gfx1250 modules (ttg.target = "hip:gfx1250")',
                )
            return None, f"#{dialect}.{kind} is not a layout"
        if kind in UNMODELLED_KINDS or dialect == "amdg":
            return None, f"#{dialect}.{kind} layouts are not modelled"
        if kind not in MODELLED_KINDS:
            valid = sorted(MODELLED_KINDS | UNMODELLED_KINDS)
            raise self.fail(
                line,
                col,
                f"unknown attribute #ttg.{kind}{did_you_mean(kind, valid)}"
                f"; Triton 3.9.0 layouts: {', '.join(valid)}",
            )
        try:
            return parse(text, self.encodings), ""
        except LayoutRangeError as err:  # never valid (kWidth 2**32): not "not modelled"
            raise self.fail(line, col, str(err)) from None
        except LayoutError as err:
            msg = str(err)
            if "unknown field" in msg:
                raise self.fail(
                    line, col, f"unknown attribute field in #ttg.{kind}: {msg}"
                ) from None
            return None, msg

    def _encoding(self, text: str, line: int, col: int) -> Any:
        """The encoding of a type's layout part (an alias or inline), None if not modelled."""
        text = text.strip()
        if re.fullmatch(r"#[\w$.\-]+", text):
            name = text[1:]
            if name in self.encodings:
                return self.encodings[name]
            if name in self.unmodelled:
                return None
            raise self.fail(
                line,
                col,
                f"attribute alias {text} is not defined in the module "
                f"(defined: {', '.join('#' + a for a in self.alias_text) or 'none'})",
            )
        if text not in self.inline:
            self.inline[text] = self._parse_encoding(text, line, col)[0]
        return self.inline[text]

    # ---------------------------------------------------------------- the walk
    def _walk(self) -> None:
        stack: list[OpRecord] = []
        in_resource = False
        seen_module = False
        for no, raw in enumerate(self.lines, 1):
            line = raw.strip()
            if in_resource:
                in_resource = "#-}" not in line
                continue
            if not line or line.startswith("//") or _ALIAS.match(raw):
                continue
            if line.startswith("{-#"):
                in_resource = "#-}" not in line
                continue
            col = len(raw) - len(raw.lstrip()) + 1
            if line.startswith("}"):
                if not stack:
                    raise self.fail(no, col, "'}' closes nothing: the module is not balanced")
                op = stack.pop()
                rest, loc = strip_loc(line)
                if rest.rstrip().endswith("{"):  # } else {, } do {, }, {
                    stack.append(op)
                    continue
                if loc is not None:
                    op.loc = self._loc(loc)
                if op.extra.get("scratch_at_close"):
                    self._scratch(op, rest, no)
                self._end(op)
                continue
            if line.startswith("^"):
                self._label(line, no, col)
                continue
            parent = stack[-1] if stack else None
            if line.startswith("module"):
                self._module(line, no, col)
                seen_module = True
                op = OpRecord("builtin.module", no, parent)
                if line.endswith("{"):
                    stack.append(op)
                continue
            if not seen_module:
                raise self.fail(
                    no, col, f"expected 'module attributes {{...}} {{', got {line[:40]!r}"
                )
            op = self._op(line, no, col, parent, stack)
            if op is None:
                continue
            if op.extra.get("opens"):
                stack.append(op)
            else:
                self._end(op)
        if not seen_module:
            raise self.fail(1, 1, "no 'module' in the text: expected a TTGIR module")
        if stack:
            top = stack[-1]
            last = len(self.lines)
            raise self.fail(
                last,
                len(self.lines[-1]) + 1 if self.lines else 1,
                f"the text ends inside {top.name} opened at line {top.line}: "
                "truncated? expected '}'",
            )

    def _module(self, line: str, no: int, col: int) -> None:
        i = line.find("attributes")
        if i >= 0:
            j = line.find("{", i)
            end = matching(line, j)
            if end < 0:
                raise self.fail(no, col + j, "truncated module attributes: expected '}'")
            for part in split_top(line[j + 1 : end]):
                key, _, value = part.partition("=")
                self.attrs[key.strip().strip('"')] = value.strip()
        target = self.attrs.get("ttg.target", "").strip('"')
        if target and not target.startswith("hip:"):
            raise self.fail(
                no,
                col,
                f'ttg.target = "{target}": not an AMD target; wgpsim models {target_names()}',
            )
        if target and target not in triton_targets():
            raise self.fail(
                no,
                col,
                f'ttg.target = "{target}": wgpsim has no hardware file for it (it models '
                f"{target_names()}: wgpsim/hw/*.yaml's target)",
            )

    def _loc(self, expr: str | None) -> Loc | None:
        found = resolve_loc(expr, self.locs)
        if not found:
            return None
        chain = loc_frames(expr, self.locs)
        at = chain.index(found) + 1 if found in chain else len(chain)
        return Loc(*found, callers=tuple((f.rsplit("/", 1)[-1], n) for f, n, _ in chain[at:]))

    def _label(self, line: str, no: int, col: int) -> None:
        m = _LABEL.match(line)
        if m is None:
            raise self.fail(no, col, f"expected a block label '^bbN(...):', got {line[:40]!r}")
        args = [a.split(":", 1)[0].strip() for a in split_top(m.group(2) or "")]
        label = m.group(1)
        self.labels[label] = (args, self.next_id, no)
        for passed in self.pending_br.pop(label, []):
            self._bind(args, passed)

    def _bind(self, args: list[str], passed: list[str]) -> None:
        for a, v in zip(args, passed, strict=False):
            if v in self.root and a not in self.root:
                self.root[a] = self.root[v]
                self.view_of[a] = (v, "block argument")

    # ---------------------------------------------------------------- one op
    def _op(
        self, line: str, no: int, col: int, parent: OpRecord | None, stack: list[OpRecord]
    ) -> OpRecord | None:
        text, loc_expr = strip_loc(line)
        results: list[str] = []
        body = text
        if m := _RESULTS.match(text):
            for r in split_top(m.group(1)):
                name, _, count = r.partition(":")
                results += [f"{name}#{i}" for i in range(int(count))] if count else [name]
            body = text[m.end() :]
        m = _OPNAME.match(body)
        if m is None:
            raise self.fail(no, col, f"expected an op ('dialect.op ...'), got {line[:40]!r}")
        name = m.group(1)
        op_col = col + (len(text) - len(body))
        self._check_op(name, no, op_col)
        opens = body.endswith("{")
        check = body[:-1].rstrip() if opens else body
        if check.endswith("("):  # generic form with a region: "tt.reduce"(%x) ({
            check = check[:-1]
        end, open_stack = scan_brackets(check)
        if end <= -2 or open_stack:
            at = open_stack[0][1] if open_stack else -end - 2
            what = "truncated" if no == len(self.lines) else "unbalanced"
            raise self.fail(
                no,
                op_col + at,
                f"{what} {name}: '{check[at]}' at column {op_col + at} is not closed",
            )
        op = OpRecord(name, no, parent, results, loc=self._loc(loc_expr))
        op.extra["opens"] = opens
        op.extra["text"] = body
        op.extra["col"] = op_col
        if name == "tt.func":
            fm = re.search(r"@([\w$.\-]+)", body)
            fname = fm.group(1) if fm else "?"
            self.functions.append(fname)
            if " public " in f" {body} " or "private" not in body:
                self.public.append(fname)
        op.extra["function"] = self.functions[-1] if self.functions else ""
        op.extra["loops"] = tuple(o.loop for o in stack if o.loop is not None)
        self._semantics(op, body, no, op_col)
        operands = [t for t in SSA.findall(body) if t not in results]
        self.used.update(operands)
        for v in operands:
            if v in self.root:
                self.uses.setdefault(self.root[v], []).append(op)
        self._note_readers(op, operands, results)
        return op

    def _check_op(self, name: str, no: int, col: int) -> None:
        dialect = name.split(".", 1)[0]
        if name in KNOWN_OPS or dialect in OPEN_DIALECTS:
            return
        if dialect in CLOSED_DIALECTS:
            raise self.fail(no, col, f"unknown op '{name}'{did_you_mean(name, KNOWN_OPS)}")
        if dialect in ("ttng", "nvws", "nvgpu", "nvvm"):
            raise self.fail(no, col, f"op '{name}' is NVIDIA's; wgpsim reads gfx1250 modules")
        raise self.fail(
            no,
            col,
            f"unknown op '{name}': expected an op of the "
            f"{', '.join(sorted(CLOSED_DIALECTS | OPEN_DIALECTS))} dialects",
        )

    def _end(self, op: OpRecord) -> None:
        op.id = self.next_id
        self.next_id += 1
        if op.loop is not None:
            rec = self.loops[op.loop]
            rec["op_ids"] = (rec["first"], op.id)
            rec["loc"] = op.loc
        for b in op.extra.get("buffers", ()):
            b["op_id"] = op.id
            b["loc"] = op.loc
        for rec in op.extra.get("records", ()):
            rec["op_id"] = op.id
        if "not_modelled" in op.extra:
            op.extra["not_modelled"]["loc"] = op.loc

    # ---------------------------------------------------------------- the model
    def _live(self, buf: dict[str, Any]) -> tuple[int, int]:
        d: OpRecord = buf["def"]
        if buf["kind"] == "scratch":
            return d.id, d.id + 1
        end = d.id
        for u in self.uses.get(buf["name"], []):
            x = u
            while x.parent is not None and x.parent is not d.parent:
                x = x.parent
            uid = x.id
            for first, last in self.cf_loops:
                if first <= uid <= last and d.id < first:
                    uid = max(uid, last)
            end = max(end, uid)
        return d.id, end + 1

    def _kernel(self) -> Kernel:
        def attr_int(key: str, default: int | None) -> int | None:
            m = re.match(ATTR_INT, self.attrs.get(key, ""))
            if m and len(m.group(1)) > 20:  # range checks below; int() of 5000 digits fails
                raise ModuleError(f"{self.source}: module attribute {key!r}: out of range")
            return int(m.group(1)) if m else default

        num_warps = attr_int("ttg.num-warps", 4)
        try:  # before anything is built per warp
            check_num_warps(num_warps, "module attribute 'ttg.num-warps'")
        except LayoutError as err:
            raise ModuleError(f"{self.source}: {err}") from None

        buffers = tuple(
            Buffer(
                b["name"],
                b["kind"],
                b["memdesc"],
                b["stages"],
                b["offsets"],
                self._live(b),
                b["def"].id,
                b["def"].loc,
                b["line"],
                b["op"],
                b["size"],
            )
            for b in self.buffers
        )
        ops = tuple(LdsOp(**self._resolved(r)) for r in self.ops)
        loops = tuple(
            Loop(i, r["kind"], r["loc"], r["line"], r["parent"], r["op_ids"], r["bounds"])
            for i, r in enumerate(self.loops)
        )
        cf = tuple(
            Loop(len(loops) + i, "cf.loop", None, 0, None, span)
            for i, span in enumerate(sorted(set(self.cf_loops)))
        )
        name = (self.public or self.functions or ["?"])[0]
        return Kernel(
            name=name,
            num_warps=num_warps,
            threads_per_warp=attr_int("ttg.threads-per-warp", 32),
            target=self.attrs.get("ttg.target", "").strip('"'),
            ttg_shared=attr_int("ttg.shared", None),
            buffers=buffers,
            ops=ops,
            loops=loops + cf,
            not_modelled=tuple(
                NotModelled(r["op"], r.get("loc"), r["line"], r["name"], r["reason"])
                for r in self.not_modelled
            ),
            functions=tuple(self.functions),
            aliases=tuple(self.alias_text.items()),
            source=self.source,
            allocated="ttg.shared" in self.attrs,
        )
