"""Where each lane grouping of a hardware file comes from, as data: ``passes.sources`` gives,
per grouping and instruction, one of :data:`SOURCE_KINDS` (the comments beside the grouping cite
the source itself). The kernel report marks each instruction with it.

::

    passes:
      groupings:
        measured: {ds_read_b128: [[2, 3, 4], [5]], ds_read_u16: [5]}
      sources:
        measured: {ds_read_b128: measured, ds_read_u16: assumption}

The section is optional (a file without it reads as "unknown" everywhere); when present it must
name a kind for every entry of every grouping, and nothing else.

>>> tables = [("blog", (("ds_load_b128", ((4,),)), ("ds_load_b32", ())))]
>>> read_sources({"blog": {"ds_load_b128": "document", "ds_load_b32": "assumption"}}, tables, "x.yaml")
(('blog', (('ds_load_b128', 'document'), ('ds_load_b32', 'assumption'))),)
>>> read_sources({"blog": {"ds_load_b128": "seed", "ds_load_b32": "assumption"}}, tables, "x.yaml")
Traceback (most recent call last):
...
wgpsim.errors.ConfigError: x.yaml: passes.sources.blog.ds_load_b128: expected one of measured, document, assumption, got 'seed'
"""

from __future__ import annotations

from typing import Any

from wgpsim.errors import ConfigError

__all__ = [
    "SOURCE_KINDS",
    "SOURCE_MARKS",
    "SOURCE_WORDS",
    "grouping_source",
    "instructions_text",
    "marks_legend",
    "overridden",
    "read_sources",
]

SOURCE_KINDS = ("measured", "document", "assumption")
"""measured: timed or counted on the chip (HipKittens' and pyhip's phase measurements);
document: a vendor document or source states it (the AMD blog, rocRoller, CK docs, Triton);
assumption: some part of it (the lanes of a pass, or how many) is assumed."""

SOURCE_WORDS = {
    "measured": "measured on the chip",
    "document": "stated by a document or vendor source",
    "assumption": "assumed (in part or whole)",
    "unknown": "the hardware file gives no passes.sources",
}
"""What each kind means, for a legend."""

SOURCE_MARKS = {"measured": "[m]", "document": "[d]", "assumption": "[a]"}
"""The mark a report puts after an instruction whose grouping has that kind ("unknown": none)."""


def instructions_text(op: dict) -> str:
    """A report op's instructions per warp, each marked with its grouping's source kind
    (``op["grouping_sources"]``); "-" for none.

    >>> instructions_text({"instructions": {"ds_load_b128": 16, "ds_store_b64": 2},
    ...                    "grouping_sources": {"ds_load_b128": "document"}})
    '16 x ds_load_b128[d], 2 x ds_store_b64'
    """
    kinds = op.get("grouping_sources", {})
    marked = [
        f"{n} x {k}{SOURCE_MARKS.get(kinds.get(k), '')}" for k, n in op["instructions"].items()
    ]
    return ", ".join(marked) or "-"


def marks_legend(ops) -> str | None:
    """What the marks of ``ops``' instructions mean, one sentence; None when none is marked.

    >>> marks_legend([{"grouping_sources": {"ds_load_b128": "measured"}}])
    "instructions/warp: each instruction's lane grouping (its passes) is [m] measured on the chip (the hardware file's passes.sources; --json: grouping_sources)"
    """
    kinds = {k for op in ops for k in op.get("grouping_sources", {}).values()}
    shown = [f"{mark} {SOURCE_WORDS[k]}" for k, mark in SOURCE_MARKS.items() if k in kinds]
    if not shown:
        return None
    return (
        "instructions/warp: each instruction's lane grouping (its passes) is "
        + "; ".join(shown)
        + " (the hardware file's passes.sources; --json: grouping_sources)"
    )


Sources = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


def read_sources(data: Any, tables, source: str) -> Sources:
    """``passes.sources`` checked against the groupings ``tables`` (name, ((op, masks), ...)):
    one table per grouping, a kind of :data:`SOURCE_KINDS` for each of its instructions."""
    if data is None:
        return ()
    names = [name for name, _ in tables]

    def fail(path: str, what: str, value: Any) -> ConfigError:
        return ConfigError(f"{source}: passes.sources{path}: expected {what}, got {value!r}")

    if not isinstance(data, dict) or sorted(map(str, data)) != sorted(names):
        keys = sorted(data) if isinstance(data, dict) else data
        raise fail("", f"a table per grouping ({', '.join(names)})", keys)
    out = []
    for name, table in tables:
        kinds = data[name]
        ops = [op for op, _ in table]
        if not isinstance(kinds, dict) or sorted(kinds) != sorted(ops):
            missing = sorted(set(ops) - set(kinds)) if isinstance(kinds, dict) else ops
            extra = sorted(set(kinds) - set(ops)) if isinstance(kinds, dict) else []
            raise fail(f".{name}", "a kind for each of its instructions", (missing or extra)[0])
        for op in ops:
            if kinds[op] not in SOURCE_KINDS:
                raise fail(f".{name}.{op}", f"one of {', '.join(SOURCE_KINDS)}", kinds[op])
        out.append((name, tuple((op, kinds[op]) for op in ops)))
    return tuple(out)


def grouping_source(sources: Sources, chosen: str, first: str, op: str) -> str:
    """The kind of ``op``'s grouping: the chosen grouping's entry, else the first grouping's
    (as the lane masks are looked up), else "unknown".

    >>> s = (("blog", (("ds_load_b128", "document"),)), ("triton", (("ds_load_b128", "document"),)))
    >>> grouping_source(s, "triton", "blog", "ds_load_b128"), grouping_source((), "blog", "blog", "x")
    ('document', 'unknown')
    """
    tables = dict(sources)
    for name in (chosen, first):
        kind = dict(tables.get(name, ())).get(op)
        if kind is not None:
            return kind
    return "unknown"


def overridden(passes: dict, before: dict) -> dict:
    """``passes`` (the YAML's section, after overrides) with its ``sources`` following the
    groupings: an entry an override added or changed (its masks differ from ``before``, the
    section's groupings before) is an assumption, a removed one loses its kind.

    >>> before = {"blog": {"ds_load_b128": [4]}}
    >>> after = {"groupings": {"blog": {"ds_load_b128": [2]}, "mine": {"ds_load_b128": [4]}},
    ...          "sources": {"blog": {"ds_load_b128": "document"}}}
    >>> overridden(after, before)["sources"]
    {'blog': {'ds_load_b128': 'assumption'}, 'mine': {'ds_load_b128': 'assumption'}}
    """
    if not isinstance(passes, dict):  # the schema names what is wrong with the section
        return passes
    old = passes.get("sources")
    groupings = passes.get("groupings")
    if not isinstance(old, dict) or not isinstance(groupings, dict):
        return passes
    sources = {}
    for name, table in groupings.items():
        if not isinstance(table, dict):
            return passes
        kept, was = old.get(name) or {}, before.get(name) or {}
        sources[name] = {
            op: kept[op] if op in kept and was.get(op) == masks else "assumption"
            for op, masks in table.items()
        }
    return {**passes, "sources": sources}
