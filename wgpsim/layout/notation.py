"""The ``#ttg.*`` attribute text and YAML dicts <-> encodings.

``parse`` reads what users paste from TTGIR (with or without the ``#ttg.`` prefix or a
``#name = `` alias prefix; several alias lines may precede the one returned, so ``#mma`` can be
referred to); ``to_text`` prints it back. ``from_dict``/``to_dict`` are the YAML forms
(``kind:`` plus snake_case field names; the attribute's own camelCase names are accepted too), and
``parse_any`` takes any of text, dict or encoding.

>>> lay = parse("#shared = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>")
>>> lay
SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=(0, 1))
>>> to_text(lay)
'#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>'
>>> to_dict(lay)
{'kind': 'swizzled_shared', 'vec': 1, 'per_phase': 1, 'max_phase': 1, 'order': [0, 1]}
>>> parse("swizzled_shared<{vec = 1, perPhase = 3, maxPhase = 1, order = [0, 1]}>")
Traceback (most recent call last):
...
wgpsim.errors.LayoutError: swizzled_shared: field 'perPhase' must be a positive power of two, got 3
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from wgpsim.errors import LayoutError
from wgpsim.inputs import MAX_DEPTH, MAX_INT_DIGITS
from wgpsim.layout.distributed import BlockedLayout, DistributedLinearLayout, SliceLayout
from wgpsim.layout.gluon import from_gluon, is_gluon
from wgpsim.layout.mma.mfma import AMDMFMALayout
from wgpsim.layout.mma.wmma import AMDWMMALayout, DotOperandLayout
from wgpsim.layout.rotating import AMDRotatingSharedLayout
from wgpsim.layout.shared import (
    PaddedSharedLayout,
    PartitionedSharedLayout,
    SharedLinearLayout,
    SwizzledSharedLayout,
)

# kind -> (class, [(field, attribute name, other accepted names)]), in printing order.
_SPECS: dict[str, tuple[type, list[tuple[str, str, tuple[str, ...]]]]] = {
    "blocked": (
        BlockedLayout,
        [
            ("size_per_thread", "sizePerThread", ()),
            ("threads_per_warp", "threadsPerWarp", ()),
            ("warps_per_cta", "warpsPerCTA", ()),
            ("order", "order", ()),
        ],
    ),
    "linear": (
        DistributedLinearLayout,
        [
            ("register", "register", ("reg", "reg_bases")),
            ("lane", "lane", ("lane_bases",)),
            ("warp", "warp", ("warp_bases",)),
            ("block", "block", ("block_bases",)),
        ],
    ),
    "amd_wmma": (
        AMDWMMALayout,
        [
            ("version", "version", ()),
            ("transposed", "isTranspose", ("is_transpose",)),
            ("reg_bases", "register", ("reg",)),
            ("warp_bases", "warp", ()),
            ("instr_shape", "instrShape", ()),
        ],
    ),
    "amd_mfma": (
        AMDMFMALayout,
        [
            ("version", "version", ()),
            ("warps_per_cta", "warpsPerCTA", ()),
            ("instr_shape", "instrShape", ()),
            ("transposed", "isTransposed", ("is_transposed",)),
        ],
    ),
    "dot_op": (
        DotOperandLayout,
        [("op_idx", "opIdx", ()), ("parent", "parent", ()), ("k_width", "kWidth", ())],
    ),
    "slice": (SliceLayout, [("dim", "dim", ()), ("parent", "parent", ())]),
    "swizzled_shared": (
        SwizzledSharedLayout,
        [
            ("vec", "vec", ()),
            ("per_phase", "perPhase", ()),
            ("max_phase", "maxPhase", ()),
            ("order", "order", ()),
        ],
    ),
    "amd_rotating_shared": (
        AMDRotatingSharedLayout,
        [
            ("vec", "vec", ()),
            ("per_phase", "perPhase", ()),
            ("max_phase", "maxPhase", ()),
            ("order", "order", ()),
        ],
    ),
    "padded_shared": (
        PaddedSharedLayout,
        [
            ("interval_padding_pairs", "intervals", ("interval_padding",)),
            ("order", "order", ()),
            ("shape", "shape", ()),
            ("offset_bases", "offset", ()),
        ],
    ),
    "partitioned_shared": (
        PartitionedSharedLayout,
        [
            ("num_partitions", "numPartitions", ()),
            ("num_groups", "numGroups", ()),
            ("partition_dim", "partitionDim", ()),
            ("partition_layout", "partitionLayout", ()),
        ],
    ),
    "shared_linear": (
        SharedLinearLayout,
        [("offset_bases", "offset", ()), ("alignment", "alignment", ())],
    ),
}
_KIND_OF = {cls: kind for kind, (cls, _) in _SPECS.items()}
# Fields that describe the CTA grid (CGA): accepted when they describe one CTA.
_CGA_FIELDS = {"CTAsPerCGA", "CTASplitNum", "CTAOrder", "CGALayout", "cgaLayout", "cga_layout"}

Encoding = Any  # one of the classes in _SPECS


# ------------------------------------------------------------------ building from fields
def _build(kind: str, given: Mapping[str, Any], aliases: Mapping[str, Encoding]) -> Encoding:
    """The encoding of ``kind`` from fields named by field, attribute or alias name."""
    if kind not in _SPECS:
        raise LayoutError(f"unknown layout kind {kind!r}; valid: {', '.join(_SPECS)}")
    cls, spec = _SPECS[kind]
    lookup = {n: f for f, mlir, extra in spec for n in (f, mlir, *extra)}
    given = dict(given)
    if kind == "amd_wmma":
        given = _wmma_fields(given)
    if kind in ("padded_shared", "shared_linear") and given.pop("block", []) not in ([], ()):
        raise LayoutError(f"{kind}: field 'block' must be empty (one CTA is modelled)")
    fields: dict[str, Any] = {}
    for name, value in given.items():
        if name in _CGA_FIELDS:
            _check_one_cta(kind, name, value)
            continue
        if name not in lookup:
            valid = ", ".join(mlir for _, mlir, _ in spec)
            raise LayoutError(f"{kind}: unknown field {name!r}; valid fields: {valid}")
        fields[lookup[name]] = value
    for nested in ("parent", "partition_layout"):
        if nested in fields:
            fields[nested] = parse_any(fields[nested], aliases)
    if kind == "padded_shared" and "interval_padding_pairs" in fields:
        fields["interval_padding_pairs"] = _pairs(fields["interval_padding_pairs"])
    required = {f for f, _, _ in spec} - {
        f.name for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING
    }
    missing = [mlir for f, mlir, _ in spec if f in required and f not in fields]
    if missing:
        raise LayoutError(f"{kind}: missing field(s) {', '.join(missing)}")
    try:
        return cls(**fields)
    except (TypeError, ValueError) as err:
        if isinstance(err, LayoutError):
            raise
        raise LayoutError(f"{kind}: bad field value ({err})") from None


def _wmma_fields(given: dict[str, Any]) -> dict[str, Any]:
    """Flatten ``ctaLayout = {register, warp}`` and expand ``warpsPerCTA``."""
    cta = given.pop("ctaLayout", given.pop("cta_layout", None))
    if cta is not None:
        if not isinstance(cta, Mapping) or set(cta) - {"register", "warp"}:
            raise LayoutError(
                f"amd_wmma: field 'ctaLayout' must be {{register = ..., warp = ...}}, got {cta!r}"
            )
        given.update(
            {("reg_bases" if k == "register" else "warp_bases"): v for k, v in cta.items()}
        )
    rank = given.pop("rank", None)
    bases = [*given.get("warp_bases", given.get("warp", [])), *given.get("reg_bases", [])]
    if rank is not None and (rank not in (2, 3) or any(len(b) != rank for b in bases)):
        raise LayoutError(
            f"amd_wmma: field 'rank' {rank} must be 2 or 3, the length of every basis"
        )
    wpc = given.pop("warpsPerCTA", given.pop("warps_per_cta", None))
    if wpc is not None:
        if "warp_bases" in given or "warp" in given:
            raise LayoutError("amd_wmma: give either 'ctaLayout' or 'warpsPerCTA', not both")
        given["warp_bases"] = AMDWMMALayout.from_warps_per_cta(wpc).warp_bases
    return given


def _check_one_cta(kind: str, name: str, value: Any) -> None:
    flat = value if isinstance(value, list | tuple) else [value]
    if name in ("CTAsPerCGA", "CTASplitNum") and any(v != 1 for v in flat):
        raise LayoutError(f"{kind}: field {name!r} {value}: only one CTA is modelled (all 1)")
    if name in ("CGALayout", "cgaLayout", "cga_layout") and any(v not in ([], ()) for v in flat):
        raise LayoutError(f"{kind}: field {name!r} {value}: only one CTA is modelled (empty)")


def _pairs(value: Any) -> tuple[tuple[int, int], ...]:
    try:
        pairs = tuple((int(i), int(p)) for i, p in value)
    except (TypeError, ValueError):
        raise LayoutError(
            f"padded_shared: intervals must be [interval, padding] pairs, got {value!r}"
        ) from None
    return pairs


# ------------------------------------------------------------------ text parser
class _Reader:
    """Recursive descent over the attribute text (a small subset of MLIR's syntax)."""

    NAME = re.compile(r"[A-Za-z_][\w.]*")
    INT = re.compile(r"[-+]?\d+")
    ALIAS = re.compile(r"#([\w.]+)\s*=")

    def __init__(self, text: str, aliases: Mapping[str, Encoding]) -> None:
        self.text, self.pos, self.aliases = text, 0, dict(aliases)
        self.depth = 0  # values being read; at most MAX_DEPTH (no RecursionError on any text)

    def fail(self, what: str) -> LayoutError:
        near = self.text[self.pos : self.pos + 20] or "end of text"
        return LayoutError(f"notation: expected {what} at column {self.pos + 1}, found {near!r}")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, s: str) -> bool:
        self.skip()
        return self.text.startswith(s, self.pos)

    def take(self, s: str) -> None:
        if not self.peek(s):
            raise self.fail(repr(s))
        self.pos += len(s)

    def match(self, pattern: re.Pattern[str], what: str) -> str:
        self.skip()
        m = pattern.match(self.text, self.pos)
        if not m:
            raise self.fail(what)
        self.pos = m.end()
        return m.group()

    def definitions(self) -> Encoding:
        """``[#name =] attribute`` repeated; aliases defined on the way; the last is returned."""
        result = None
        while True:
            self.skip()
            if self.pos == len(self.text):
                break
            alias = None
            m = self.ALIAS.match(self.text, self.pos)
            if m:
                alias, self.pos = m.group(1), m.end()
            result = self.attribute()
            if alias:
                self.aliases[alias] = result
        if result is None:
            raise LayoutError("notation: empty layout text")
        return result

    def attribute(self) -> Encoding:
        self.skip()
        if self.peek("#"):
            self.pos += 1
        name = self.match(self.NAME, "a layout name such as ttg.blocked")
        if not self.peek("<"):
            if name in self.aliases:
                return self.aliases[name]
            raise LayoutError(
                f"notation: unknown alias #{name}; known: {sorted(self.aliases) or 'none'}"
            )
        kind = name.removeprefix("ttg.")
        self.take("<")
        given: dict[str, Any] = {}
        if kind == "padded_shared":
            given["intervals"] = self.intervals()
        given.update(self.dictionary())
        while self.peek(","):  # attributes after the dict: `{...}, alignment = 16`
            self.take(",")
            key = self.match(self.NAME, "a field name")
            self.take("=")
            if key in given:
                raise LayoutError(f"notation: field {key!r} given twice")
            given[key] = self.value()
        self.take(">")
        return _build(kind, given, self.aliases)

    def intervals(self) -> list[tuple[int, int]]:
        self.take("[")
        pairs = []
        while True:
            interval = self.integer("an interval")
            self.take(":")
            self.take("+")
            pairs.append((interval, self.integer("a padding")))
            if not self.peek(","):
                break
            self.take(",")
        self.take("]")
        return pairs

    def dictionary(self) -> dict[str, Any]:
        self.take("{")
        out: dict[str, Any] = {}
        while not self.peek("}"):
            key = self.match(self.NAME, "a field name")
            self.take("=")
            if key in out:
                raise LayoutError(f"notation: field {key!r} given twice")
            out[key] = self.value()
            if not self.peek(","):
                break
            self.take(",")
        self.take("}")
        return out

    def integer(self, what: str) -> int:
        start = self.pos
        digits = self.match(self.INT, what)
        if len(digits.lstrip("+-")) > MAX_INT_DIGITS:
            self.pos = start
            self.skip()
            raise LayoutError(
                f"notation: an integer of {len(digits.lstrip('+-'))} digits at column "
                f"{self.pos + 1} (at most {MAX_INT_DIGITS})"
            )
        return int(digits)

    def value(self) -> Any:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                self.skip()
                raise LayoutError(
                    f"notation: nested deeper than {MAX_DEPTH} levels at column {self.pos + 1}"
                )
            return self._value()
        finally:
            self.depth -= 1

    def _value(self) -> Any:
        if self.peek("["):
            self.take("[")
            items = []
            while not self.peek("]"):
                items.append(self.value())
                if not self.peek(","):
                    break
                self.take(",")
            self.take("]")
            return items
        if self.peek("{"):
            return self.dictionary()
        if self.peek("#"):
            return self.attribute()
        if self.INT.match(self.text, self.pos):
            return self.integer("an integer")
        word = self.match(self.NAME, "a value")
        if word in ("true", "false"):
            return word == "true"
        if self.peek("<"):  # an inline attribute without '#'
            self.pos -= len(word)
            return self.attribute()
        raise self.fail("a value (integer, true/false, list, dict or #attribute)")


def parse(text: str, aliases: Mapping[str, Encoding] | None = None) -> Encoding:
    """Encoding of ``#ttg.*`` attribute text (``aliases`` names ``#mma``-style references)."""
    if not isinstance(text, str):
        raise LayoutError(f"notation: expected layout text, got {type(text).__name__}")
    reader = _Reader(text.strip(), aliases or {})
    return reader.definitions()


# ------------------------------------------------------------------ printing and dicts
def kind_of(layout: Encoding) -> str:
    """The attribute kind of an encoding (``blocked``, ``swizzled_shared``, ...)."""
    try:
        return _KIND_OF[type(layout)]
    except KeyError:
        raise LayoutError(f"not a layout encoding: {type(layout).__name__}") from None


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k} = {_fmt(v)}" for k, v in value.items()) + "}"
    if type(value) in _KIND_OF:
        return to_text(value)
    return str(value)


def to_text(layout: Encoding) -> str:
    """``#ttg.*`` text that ``parse`` reads back to an equal encoding."""
    kind = kind_of(layout)
    _, spec = _SPECS[kind]
    fields = {mlir: getattr(layout, f) for f, mlir, _ in spec}
    prefix = ""
    if kind == "amd_wmma":
        # Triton 3.9.0's parser needs `warp` (even empty) and, for a batched layout, `rank = 3`;
        # its printer omits both (and then cannot read its own text back).
        reg, warp = fields.pop("register"), fields.pop("warp")
        cta = {"register": reg, "warp": warp} if reg else {"warp": warp}
        rank = {"rank": 3} if layout.rank == 3 else {}
        fields = {"version": fields["version"], "isTranspose": fields["isTranspose"], **rank,
                  "ctaLayout": cta, "instrShape": fields["instrShape"]}  # fmt: skip
    if kind == "padded_shared":
        prefix = "[" + ", ".join(f"{i}:+{p}" for i, p in fields.pop("intervals")) + "] "
        if layout.offset_bases is not None:
            fields = {"offset": fields["offset"], "block": []}
        else:
            del fields["offset"]
    suffix = ""
    if kind == "shared_linear":
        suffix = f", alignment = {fields.pop('alignment')}"
    body = ", ".join(f"{k} = {_fmt(v)}" for k, v in fields.items())
    return f"#ttg.{kind}<{prefix}{{{body}}}{suffix}>"


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if type(value) in _KIND_OF:
        return to_dict(value)
    return value


def to_dict(layout: Encoding) -> dict[str, Any]:
    """YAML-friendly dict: ``kind`` plus the dataclass fields (lists, nested dicts)."""
    out: dict[str, Any] = {"kind": kind_of(layout)}
    for f in dataclasses.fields(layout):
        value = getattr(layout, f.name)
        if value is not None:
            out[f.name] = _plain(value)
    return out


def from_dict(d: Mapping[str, Any], aliases: Mapping[str, Encoding] | None = None) -> Encoding:
    """Encoding of a dict with ``kind`` and fields (snake_case or the attribute's names)."""
    if not isinstance(d, Mapping) or "kind" not in d:
        raise LayoutError(
            f"layout dict needs a 'kind' field (one of {', '.join(_SPECS)}), got {d!r}"
        )
    fields = {k: v for k, v in d.items() if k != "kind"}
    return _build(str(d["kind"]).removeprefix("ttg."), fields, aliases or {})


def parse_any(x: Any, aliases: Mapping[str, Encoding] | None = None) -> Encoding:
    """An encoding from text, a dict, a Gluon layout object, or an encoding (unchanged)."""
    if type(x) in _KIND_OF:
        return x
    if is_gluon(x):
        return from_gluon(x)
    if isinstance(x, str):
        return parse(x, aliases)
    if isinstance(x, Mapping):
        return from_dict(x, aliases)
    raise LayoutError(f"cannot read a layout from {type(x).__name__}: {x!r}")
