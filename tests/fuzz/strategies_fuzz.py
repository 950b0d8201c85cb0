"""Hypothesis strategies for odd inputs: YAML-like values, edits of a nested document, text."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 70),
    st.sampled_from([0, -1, 2**31, 2**63, 10**9, 10**30, 65536, 65537, 63, 64]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(["off", "fp16", "triton", "#ttg.blocked<{}>", "", "A", "\u00e9", "a/b", ".."]),
)
"""Values a careless or hostile user puts where a number or a name belongs."""

VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                  max_size=3),
    max_leaves=8,
)  # fmt: skip
"""Nested YAML/JSON values."""


def leaf_paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path (tuple of keys) into a nested mapping, sections and leaves."""
    paths = [prefix] if prefix else []
    if isinstance(doc, dict):
        for key, value in doc.items():
            paths += leaf_paths(value, (*prefix, key))
    return paths


@st.composite
def edited(draw, doc: dict, max_edits: int = 3) -> dict:
    """``doc`` with a few fields replaced by odd values, removed, or added."""
    doc = copy.deepcopy(doc)
    paths = leaf_paths(doc)
    for _ in range(draw(st.integers(1, max_edits))):
        path = draw(st.sampled_from(paths))
        node = doc
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if not isinstance(node, dict):
            continue
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "add"]))
        if action == "replace":
            node[path[-1]] = draw(VALUES)
        elif action == "delete":
            node.pop(path[-1], None)
        else:
            node[draw(st.text(min_size=1, max_size=10))] = draw(VALUES)
    return doc


TEXT_EDITS = st.sampled_from(
    ["", "[", "]", "{", "}", ":", "- ", "\n", "  ", "#", "&a ", "*a", "!!python/object ", "\t",
     "\x00", "\xff", "9" * 5000, "[" * 200, "'", '"', "%YAML 1.1\n", "---\n", "...\n"]
)  # fmt: skip


@st.composite
def edited_text(draw, text: str) -> str:
    """``text`` with a few spans deleted or replaced by odd tokens."""
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        span = draw(st.integers(0, 20))
        text = text[:at] + draw(TEXT_EDITS) + text[at + span :]
    return text
