"""What each op of a TTGIR module means for the kernel model: the part of the reader that
turns one op (its results, operands and types) into buffers, LDS ops, views, loops and
not-modelled records. `wgpsim.frontend.ttgir` walks the module and mixes this in.

A memdesc type, as an op prints it:

>>> from wgpsim.frontend.ttgir import read_ttgir
>>> k = read_ttgir('''
... #s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>
... module attributes {"ttg.num-warps" = 4 : i32} {
...   tt.func @f() {
...     %0 = ttg.local_alloc {allocation.offset = [0 : i32, 65536 : i32]} : () -> !ttg.memdesc<2x16x32xbf16, #s, #ttg.shared_memory, mutable>
...     tt.return
...   }
... }''')
>>> b = k.buffers[0]
>>> b.memdesc.shape_text, b.stages, b.offsets
('2x16x32xbf16', 2, (0, 65536))
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from wgpsim.frontend.combine import combine_deps
from wgpsim.frontend.mlir_text import SSA, find_types, matching, shape_dtype, split_top
from wgpsim.frontend.model import (
    LDS_OPS,
    SCRATCH_LDS_OPS,
    VIEW_OPS,
    Loc,
    MemDesc,
    TensorType,
    elem_bits,
)
from wgpsim.frontend.vocabulary import SCRATCH_OPS

ATTR_INT = r"(-?\d+)\s*:\s*i\d+"


@dataclass(eq=False)
class OpRecord:
    """An op while the module is read (ids are assigned when the op ends: post-order)."""

    name: str
    line: int
    parent: OpRecord | None
    results: list[str] = field(default_factory=list)
    id: int = -1
    loc: Loc | None = None
    loop: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class OpSemantics:
    """The op handlers of `wgpsim.frontend.ttgir._Reader` (state lives there)."""

    def _memdescs(self, body: str, no: int, col: int) -> list[MemDesc]:
        found = find_types(body, "!ttg.memdesc<")
        arrow = body.rfind("-> <")
        if arrow >= 0:
            found += find_types(body[arrow + 3 :], "<")[:1]
        return [self._memdesc(inner, no, col) for _, inner in found]

    def _shape_dtype(self, text: str, no: int, col: int) -> tuple[tuple[int, ...], str]:
        """``shape_dtype`` of a tensor or memdesc type, its element type one wgpsim sizes
        (``model.elem_bits``): else one error naming the line (``tensor<64x64, ...>``, an
        edit that lost the element type, read "64" as one)."""
        shape, dtype = shape_dtype(text)
        try:
            elem_bits(dtype)
        except KeyError:
            raise self.fail(
                no,
                col,
                f"element type {dtype!r} of {text!r}: not one wgpsim knows (f16, bf16, "
                "f32, f64, i1-i64, f8E4M3FN, f8E5M2 (and FNUZ), f4E2M1FN, !tt.ptr<...>)",
            ) from None
        return shape, dtype

    def _memdesc(self, inner: str, no: int, col: int) -> MemDesc:
        parts = split_top(inner)
        shape, dtype = self._shape_dtype(parts[0], no, col)
        enc_text = parts[1] if len(parts) > 1 else ""
        rest = parts[2:]
        alloc = next(
            (shape_dtype(p + "x")[0] for p in rest if re.fullmatch(r"\d+(x\d+)*", p)), None
        )
        return MemDesc(
            shape, dtype, enc_text, self._encoding(enc_text, no, col), alloc, "mutable" in rest
        )

    def _tensors(self, body: str, no: int, col: int) -> list[TensorType]:
        out = []
        for _, inner in find_types(body, "tensor<"):
            parts = split_top(inner)
            shape, dtype = self._shape_dtype(parts[0], no, col)
            enc = parts[1] if len(parts) > 1 else ""
            out.append(TensorType(shape, dtype, enc, self._encoding(enc, no, col) if enc else None))
        return out

    def _offsets(self, body: str) -> tuple[int, ...] | None:
        m = re.search(r"allocation\.offset\s*=\s*", body)
        if m is None:
            return None
        rest = body[m.end() :]
        if rest.startswith("["):
            return tuple(int(v) for v in re.findall(ATTR_INT, rest[: matching(rest, 0) + 1]))
        v = re.match(ATTR_INT, rest)
        return (int(v.group(1)),) if v else None

    def _semantics(self, op: OpRecord, body: str, no: int, col: int) -> None:
        name, res = op.name, op.results
        after = body[body.find(name) + len(name) :].lstrip('"')
        operands = [t for t in SSA.findall(after.split(" : ")[0])]
        if res:  # tt.trans relabels dims and keeps the registers: its producer is its source's
            keep = name == "tt.trans" and operands
            self.producer[res[0]] = self.producer.get(operands[0], name) if keep else name
        if name == "arith.constant" and res:
            m = re.match(r"\s*(-?\d+)\s*:", after)
            if m:
                self.consts[res[0]] = int(m.group(1))
            return
        if name in ("scf.for", "scf.if", "scf.while"):
            self._loop(op, after, operands)
            return
        if name == "scf.yield" and op.parent is not None and op.parent.name == "scf.if":
            for r, v in zip(op.parent.results, operands, strict=False):
                if v in self.root:
                    self.root[r] = self.root[v]
                    self.view_of[r] = (v, "scf.if result")
            return
        if name in ("cf.br", "cf.cond_br"):
            self._branch(op, after)
            return
        if name == "ttg.local_alloc":
            self._alloc(op, body, after, operands, no, col)
            return
        if name in VIEW_OPS and res and operands:
            src = operands[0]
            if src in self.root:
                self.root[res[0]] = self.root[src]
                self.view_of[res[0]] = (src, name)
            if name == "ttg.memdesc_index":
                idx = re.match(r"\s*%[\w$.\-#]+\[(%[\w$.\-#]+)\]", after)
                self.stage_of[res[0]] = self.consts.get(idx.group(1)) if idx else None
            if name == "ttg.memdesc_subslice":
                sl = re.match(r"\s*%[\w$.\-#]+\[([\d,\s]+)\]", after)
                if sl:
                    self.subslice_of[res[0]] = tuple(int(v) for v in sl.group(1).split(","))
            self.view_args[res[0]] = self._view_arg(name, res[0], body, after, no, col)
            return
        if name in LDS_OPS:
            self._lds(op, body, after, operands, no, col)
            return
        if name in SCRATCH_OPS and op.extra.get("opens"):
            op.extra["scratch_at_close"] = True  # its attributes follow the region: "}) {...}"
            return
        if name in SCRATCH_OPS or "allocation.offset" in body:
            self._scratch(op, body, no)
            return
        if "!ttg.memdesc<" in body and name not in (
            "ttg.local_dealloc",
            "scf.yield",
            "tt.func",
            "tt.return",
            "cf.br",
            "cf.cond_br",
        ):
            reason = "touches a memdesc; its LDS traffic is not modelled"
            if name in (
                "amdg.async_tdm_intrinsic_wait",
                "ttg.async_wait",
                "amdg.async_wait",
                "ttg.async_commit_group",
                "amdg.async_tdm_wait",
            ):
                return
            record = {"op": name, "line": no, "name": res[0] if res else None, "reason": reason}
            op.extra["not_modelled"] = record
            self.not_modelled.append(record)

    def _loop(self, op: OpRecord, after: str, operands: list[str]) -> None:
        bounds = None
        if op.name == "scf.for":
            m = re.match(
                r"\s*(%[\w$.\-#]+)\s*=\s*(%[\w$.\-#]+|-?\d+)\s+to\s+(%[\w$.\-#]+|-?\d+)"
                r"\s+step\s+(%[\w$.\-#]+|-?\d+)",
                after,
            )
            if m:
                bounds = tuple(str(self.consts.get(v, v)) for v in m.groups()[1:])
            ia = re.search(r"iter_args\((.*?)\)\s*->", after)
            if ia:
                for i, pair in enumerate(split_top(ia.group(1))):
                    arg, _, init = (s.strip() for s in pair.partition("="))
                    if init in self.root:
                        self.root[arg] = self.root[init]
                        self.view_of[arg] = (init, "iter_arg")
                        if i < len(op.results):
                            self.root[op.results[i]] = self.root[init]
                            self.view_of[op.results[i]] = (init, "scf.for result")
        op.loop = len(self.loops)
        parents = [o.loop for o in self._ancestors(op) if o.loop is not None]
        self.loops.append(
            {
                "kind": op.name,
                "line": op.line,
                "first": self.next_id,
                "parent": parents[0] if parents else None,
                "bounds": bounds,
                "op_ids": (self.next_id, self.next_id),
                "loc": None,
            }
        )

    @staticmethod
    def _ancestors(op: OpRecord):
        p = op.parent
        while p is not None:
            yield p
            p = p.parent

    def _branch(self, op: OpRecord, after: str) -> None:
        for m in re.finditer(r"\^([\w$.\-]+)(\()?", after):
            args: list[str] = []
            if m.group(2):
                inner = after[m.end() : matching(after, m.end() - 1)]
                args = SSA.findall(inner.split(" : ")[0])
            label = m.group(1)
            if label in self.labels:
                block_args, first, _ = self.labels[label]
                self._bind(block_args, args)
                self.cf_loops.append((first, self.next_id))
            else:
                self.pending_br.setdefault(label, []).append(args)

    def _alloc(self, op, body, after, operands, no, col) -> None:
        mds = self._memdescs(body, no, col)
        if not mds or not op.results:
            raise self.fail(no, col, "ttg.local_alloc: expected a result of type !ttg.memdesc<...>")
        md = mds[-1]
        name = op.results[0]
        stages = md.shape[0] if md.alloc_shape is None and len(md.shape) > 2 else 1
        buf = {
            "name": name,
            "kind": "explicit",
            "memdesc": md,
            "stages": stages,
            "offsets": self._offsets(body),
            "line": no,
            "op": op.name,
            "size": None,
            "def": op,
        }
        self.buffers.append(buf)
        self.buffer_by_name[name] = buf
        op.extra["buffers"] = [buf]
        self.root[name] = name
        if operands:  # local_alloc %value: the alloc stores the tensor
            self._lds(op, body, after, operands, no, col, store_into=name)

    def _scratch(self, op: OpRecord, body: str, no: int) -> None:
        """An op that may use a scratch buffer: a buffer of kind ``scratch`` (live over the op
        alone), with the ``allocation.offset`` and ``allocation.size`` Triton gave it. After
        allocation (``ttg.shared`` present) Triton gave one exactly to the ops that use it: the
        others do not touch the LDS."""
        offsets = self._offsets(body)
        if offsets is None and "ttg.shared" in self.attrs:
            if op.name in SCRATCH_LDS_OPS:  # Triton gave it no scratch: no buffer
                self._scratch_op(op, body, None)
            return
        size = re.search(r"allocation\.size\s*=\s*" + ATTR_INT, body)
        name = op.results[0] if op.results else f"{op.name}@{no}"
        buffer = f"scratch:{name}"
        buf = {
            "name": buffer,
            "kind": "scratch",
            "memdesc": None,
            "stages": 1,
            "offsets": offsets,
            "line": no,
            "op": op.name,
            "size": int(size.group(1)) if size else None,
            "def": op,
        }
        self.buffers.append(buf)
        op.extra["buffers"] = [buf]
        if op.name in SCRATCH_LDS_OPS:
            self._scratch_op(op, body, buf["name"])
            return
        where = (
            f"uses {buf['size'] or 'an'} B of LDS scratch at {offsets[0]}"
            if offsets
            else ("may use an LDS scratch buffer")
        )
        reason = f"{where}; its LDS instructions are not modelled"
        record = {"op": op.name, "line": no, "name": name if op.results else None, "reason": reason}
        op.extra["not_modelled"] = record
        self.not_modelled.append(record)

    def _scratch_op(self, op: OpRecord, body: str, buffer: str | None) -> None:
        """A scratch op as an LDS op: its source and result tensors and the attributes that
        size its scratch (`wgpsim.hw.scratch`); ``buffer`` None when the module was allocated and
        Triton gave the op no scratch. ``body`` holds the types (for an op with a
        region, the closing line's ``}) {...} : (...) -> ...``); the attributes before the
        region are on the opening line."""
        head = op.extra.get("text", body)
        no, col = op.line, op.extra.get("col", 1)
        types = body[body.rfind(" : ") :] if " : " in body else body
        ins, _, outs = types.partition("->")
        tensors = self._tensors(ins, no, col)
        results = self._tensors(outs, no, col)
        values = [t for t in tensors if "!tt.ptr" not in t.dtype]
        after = head[head.find(op.name) + len(op.name) :].lstrip('"')
        operands = SSA.findall(after.split(" : ")[0].split("<{")[0].split("({")[0])
        attrs: list[tuple[str, Any]] = []
        if m := re.search(r"\baxis\s*=\s*(-?\d+)", head + body):
            attrs.append(("axis", int(m.group(1))))
        if op.name in ("tt.reduce", "tt.scan"):
            if not values:
                raise self.fail(
                    no, col, f"{op.name}: expected its operand types as ': (tensor<...>) -> ...'"
                )
            attrs.append(("operands", len(operands)))
            attrs.append(("elem_types", tuple(t.dtype for t in tensors)))
        if op.name == "tt.scan":
            attrs.append(("reverse", bool(re.search(r"reverse\s*=\s*true", head))))
            attrs.append(("combine_deps", combine_deps(self._region(op.line))))
            attrs.append(("results_used", None))  # filled in when the module is read
        if op.name == "tt.gather":
            attrs.append(("indices", tensors[1] if len(tensors) > 1 else None))
            attrs.append(("efficient_layout", "efficient_layout" in body))
        if op.name == "ttg.convert_layout":
            if not tensors or not results:
                raise self.fail(
                    no, col, f"{op.name}: expected its types as ': tensor<...> -> tensor<...>'"
                )
            attrs.append(("use_padded_scratch_shmem", "amdgpu.use_padded_scratch_shmem" in body))
            attrs.append(("producer", self.producer.get(operands[0]) if operands else None))
        if "atomic" in op.name:
            pointee = re.search(r"!tt\.ptr<(\w+)>", ins)
            attrs.append(("elem_type", pointee.group(1) if pointee else None))
            attrs.append(("result_used", None))  # filled in when the module is read
        rec = {
            "index": len(self.ops),
            "op": op.name,
            "name": op.results[0] if op.results else None,
            "loc": op.loc,
            "line": op.line,
            "op_id": -1,
            "memdesc": None,
            "tensor": (values or tensors or results[:1] or [None])[0],
            "result": results[0] if results else None,
            "attrs": tuple(attrs),
            "buffer": buffer,
            "loops": op.extra.get("loops", ()),
            "function": op.extra.get("function", ""),
        }
        self.ops.append(rec)
        op.extra.setdefault("records", []).append(rec)

    def _lds(self, op, body, after, operands, no, col, store_into: str | None = None) -> None:
        name = op.name
        mds = self._memdescs(body, no, col)
        tensors = [t for t in self._tensors(body, no, col) if "!tt.ptr" not in t.dtype]
        if name == "ttg.local_alloc":
            lds_value = store_into
        elif name == "ttg.local_store":
            lds_value = operands[1] if len(operands) > 1 else None
        elif name == "amdg.async_tdm_copy_global_to_local":
            m = re.search(r"\binto\s+(%[\w$.\-#]+)", after)
            lds_value = m.group(1) if m else None
        elif name == "amdg.async_tdm_copy_local_to_global":
            m = re.search(r"\bfrom\s+(%[\w$.\-#]+)", after)
            lds_value = m.group(1) if m else None
        elif name == "ttg.async_copy_global_to_local":
            lds_value = operands[1] if len(operands) > 1 else None
        else:
            lds_value = operands[0] if operands else None
        if not mds:
            raise self.fail(no, col, f"{name}: expected a !ttg.memdesc<...> type")
        md = mds[-1] if name in ("ttg.local_store", "ttg.local_alloc") else mds[0]
        if name == "ttg.async_copy_global_to_local" or "copy_global_to_local" in name:
            md = mds[-1]
        tensor = tensors[-1] if tensors else None
        if name == "ttg.local_alloc" or name == "ttg.local_store":
            tensor = tensors[0] if tensors else None
        if name == "ttg.async_copy_global_to_local":  # registers reach LDS only as `other`
            ptrs = self._tensors(body, no, col)
            tensor = ptrs[0] if ptrs and re.search(r"\bother\s+%", after) else None
        views, chain, v = [], [], lds_value
        while v in self.view_of:
            src, how = self.view_of[v]
            views.append(how)
            if how in VIEW_OPS:
                chain.append((how, self.view_args.get(v)))
            v = src
        stage = next((self.stage_of[x] for x in self._chain(lds_value) if x in self.stage_of), None)
        sub = next(
            (self.subslice_of[x] for x in self._chain(lds_value) if x in self.subslice_of), None
        )
        rec = {
            "index": len(self.ops),
            "op": name,
            "name": op.results[0]
            if op.results and name != "ttg.local_alloc"
            else (store_into if name == "ttg.local_alloc" else None),
            "loc": op.loc,
            "line": no,
            "op_id": -1,
            "memdesc": md,
            "tensor": tensor,
            "buffer": self.root.get(lds_value),
            "views": tuple(reversed(views)),
            "view_chain": tuple(reversed(chain)),
            "stage": stage,
            "subslice": sub,
            "loops": op.extra.get("loops", ()),
            "function": op.extra.get("function", ""),
        }
        if name != "ttg.local_alloc" and op.results:
            rec["name"] = op.results[0]
        if name == "ttg.local_load" and op.results:
            self.loaded[op.results[0]] = rec
        if name in ("ttg.local_alloc", "ttg.local_store") and operands:  # what made the value
            rec["attrs"] = (("producer", self.producer.get(operands[0])),)
        self.ops.append(rec)
        op.extra.setdefault("records", []).append(rec)

    def _note_readers(self, op: OpRecord, operands: list[str], results: list[str]) -> None:
        """Record ``op`` as a reader of the local_load whose value it reads: ``loaded`` maps a
        local_load's result, and every value computed from it, to the load's record;
        ``readers`` each load's readers (`_with_readers`)."""
        for v in operands:
            if v in self.loaded:
                self.readers.setdefault(self.loaded[v]["index"], []).append(op)
                self.loaded.update((r, self.loaded[v]) for r in results)

    def _region(self, line: int) -> list[str]:
        """The lines of the one-block region an op opens on (1-based) ``line``, from its label
        to its ``*.return``."""
        out = []
        for text in self.lines[line : line + 200]:
            out.append(text)
            if text.lstrip().startswith(("tt.scan.return", "tt.reduce.return")):
                break
        return out

    def _with_readers(self, rec: dict[str, Any]) -> dict[str, Any]:
        """A local_load's record with ``user_locs``: the locations of the ops that read its
        value (directly or through what is computed from it), where LLVM may put its
        extending loads (`wgpsim.kernel.loop.matching.by_reader`)."""
        if rec["index"] not in self.readers:
            return rec
        locs = tuple(o.loc for o in self.readers[rec["index"]] if o.loc is not None)
        return rec | {"attrs": (*rec.get("attrs", ()), ("user_locs", locs))}

    def _resolved(self, rec: dict[str, Any]) -> dict[str, Any]:
        """An op's record with what only the whole module tells: whether an atomic's result
        is read (Triton's ``result.use_empty()``); where a local_load's value is read."""
        rec = self._with_readers(rec)
        if ("results_used", None) in rec.get("attrs", ()):
            head = rec["name"].split("#")[0]
            n = dict(rec["attrs"])["operands"]
            names = [f"{head}#{k}" for k in range(n)] if n > 1 else [head]
            used = tuple(v in self.used for v in names)
            attrs = tuple((k, used if k == "results_used" else v) for k, v in rec["attrs"])
            return rec | {"attrs": attrs}
        if ("result_used", None) not in rec.get("attrs", ()):
            return rec
        used = rec["name"] is not None and rec["name"].split("#")[0] in {
            u.split("#")[0] for u in self.used
        }
        attrs = tuple((k, used if k == "result_used" else v) for k, v in rec["attrs"])
        return rec | {"attrs": attrs}

    def _view_arg(self, name: str, res: str, body: str, after: str, no: int, col: int):
        """What the view does: the index (None if not a constant), the subslice offsets and
        shape, the transpose order, the reshaped shape."""
        mds = self._memdescs(body, no, col)
        shape = mds[-1].shape if mds else None
        if name == "ttg.memdesc_index":
            return self.stage_of.get(res)
        if name == "ttg.memdesc_subslice":
            return (self.subslice_of.get(res), shape)
        if name == "ttg.memdesc_trans":
            m = re.search(r"order\s*=\s*array<i32:\s*([\d,\s]+)>", after)
            return tuple(int(v) for v in m.group(1).split(",")) if m else None
        return shape

    def _chain(self, v: str | None):
        while v is not None:
            yield v
            v = self.view_of.get(v, (None, ""))[0]
