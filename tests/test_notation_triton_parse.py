"""Every ``#ttg`` text wgpsim prints parses in Triton 3.9.0, and means what we meant.

Each text is embedded in a tiny TTGIR module (the type of a function argument: ``tensor<...>``
for a distributed layout, ``!ttg.memdesc<...>`` for a shared one) that a child process parses
with Triton's own MLIR parser (``triton._C.libtriton.ir.parse_mlir_module``; each parse in a
forked grandchild, since an invalid attribute may abort it) and prints back. Our ``to_text``
must be Triton's printed form (except two fields of amd_wmma that Triton's printer drops and
its parser then needs: ``warp = []`` and a batched layout's ``rank = 3``), and Triton's text
must read back to the same encoding.
The texts: ``to_text`` of the conformance sample (every encoding kind), and every ``#ttg``
attribute in the README, docs, notebooks, the CLI's help texts and the example configs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from forked import run_forked
from test_layout_gluon_conformance import sample_cases

from wgpsim.layout.notation import parse, to_text
from wgpsim.layout.shared import (
    SHARED_TYPES,
    PaddedSharedLayout,
    PartitionedSharedLayout,
    SharedLinearLayout,
)

pytest.importorskip("triton")
pytestmark = pytest.mark.triton

ROOT = Path(__file__).resolve().parents[1]

WORK = r"""
from triton._C.libtriton import ir, amd

def work(module_text):
    ctx = ir.context()
    ir.load_dialects(ctx)
    amd.load_dialects(ctx)
    path = f"/tmp/wgpsim_parse_{os.getpid()}.mlir"
    with open(path, "w") as f:
        f.write(module_text)
    try:
        return {"module": str(ir.parse_mlir_module(path, ctx))}
    finally:
        os.unlink(path)
"""


def _shape_for(layout, shape=None) -> list[int]:
    if shape is not None:
        return list(shape)
    if isinstance(layout, SharedLinearLayout | PaddedSharedLayout):
        return list(layout.shape)
    if isinstance(layout, PartitionedSharedLayout):
        inner = layout.partition_layout
        base = list(getattr(inner, "shape", None) or [64] * inner.rank)
        base[layout.partition_dim] *= layout.num_logical_pieces
        return base
    return [64] * (layout.rank or 2)


def _module(text: str, layout, shape) -> str:
    dims = "x".join(map(str, _shape_for(layout, shape)))
    if isinstance(layout, SHARED_TYPES):
        ty = f"!ttg.memdesc<{dims}xf16, {text}, #ttg.shared_memory, mutable>"
    else:
        ty = f"tensor<{dims}xf16, {text}>"
    warps = getattr(layout, "num_warps", 4)
    return (
        f'module attributes {{"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = {warps} : i32, '
        f'"ttg.threads-per-warp" = 32 : i32}} {{\n  tt.func @f(%arg0: {ty}) {{\n'
        "    tt.return\n  }\n}\n"
    )


def _printed_encoding(module: str) -> str:
    """The encoding of %arg0 in Triton's printed module, aliases resolved."""
    aliases = dict(re.findall(r"^(#[\w.]+) = (.*)$", module, re.M))
    rest = re.search(r"%arg0: (?:tensor|!ttg\.memdesc)<[0-9x]+xf16, (.*)", module).group(1)
    if rest.startswith("#ttg."):
        text = _attributes(rest)[0]
    else:
        text = aliases[re.match(r"#[\w.]+", rest).group()]
    # Nested aliases (a dot_op's parent, a partitioned layout's inner one) are inlined.
    for name in sorted(aliases, key=len, reverse=True):
        text = re.sub(re.escape(name) + r"(?![\w.<])", lambda _m, n=name: aliases[n], text)
    return text


def _as_triton_prints(text: str) -> str:
    return text.replace("rank = 3, ", "").replace(", warp = []", "").replace("{warp = []}", "{}")


def _attributes(text: str) -> list[str]:
    """Every balanced ``#ttg.name<...>`` in ``text`` (outermost only)."""
    found, i = [], 0
    while (i := text.find("#ttg.", i)) >= 0:
        j = text.find("<", i)
        if j < 0 or not re.fullmatch(r"#ttg\.\w+", text[i:j]):
            i += 5
            continue
        depth, k = 0, j
        while k < len(text):
            depth += {"<": 1, ">": -1}.get(text[k], 0)
            if depth == 0:
                break
            k += 1
        found.append(text[i : k + 1])
        i = k + 1
    return found


def _doc_texts() -> list[str]:
    files = [ROOT / "README.md", *sorted((ROOT / "wgpsim" / "cli").glob("*.py"))]
    files += sorted((ROOT / "configs").glob("*.yaml")) + sorted((ROOT / "docs").glob("*.md"))
    files += sorted((ROOT / "notebooks").glob("*.ipynb"))
    texts = []
    for path in files:
        body = path.read_text()
        if path.suffix == ".ipynb":  # the cells' sources, string literals joined
            cells = json.loads(body)["cells"]
            body = "\n".join("".join(c["source"]) for c in cells)
            body = re.sub(r'"\s*\n\s*"', "", body)
        body = body.replace("\\\n", " ").replace("\n", " ")
        texts += [re.sub(r"\s+", " ", t) for t in _attributes(body)]
    # Aside: placeholders (<{...}>), f-string templates ({{) and prose shorthand without a dict.
    return sorted({t for t in texts if "..." not in t and "{{" not in t and "{" in t})


@pytest.fixture(scope="module")
def parsed():
    printed = [(to_text(lay), lay, shape) for lay, shape in sample_cases()]
    documented = [(t, parse(t), None) for t in _doc_texts()]
    cases = printed + documented
    results = run_forked(WORK, [_module(text, lay, shape) for text, lay, shape in cases])
    results = [r or {"error": "aborted"} for r in results]
    return printed, documented, results


def test_every_printed_and_documented_text_parses_in_triton(parsed):
    printed, documented, results = parsed
    kinds = {type(lay).__name__ for _, lay, _ in printed}
    assert len(kinds) == 8 and len(documented) >= 3
    failures = [
        f"{text}: {res['error']}"
        for (text, _, _), res in zip(printed + documented, results, strict=True)
        if "error" in res
    ]
    assert not failures, "\n".join(failures[:5])


def test_triton_prints_what_we_print(parsed):
    printed, documented, results = parsed
    mismatches = []
    for (text, lay, _), res in zip(printed + documented, results, strict=True):
        theirs = _printed_encoding(res["module"])
        if parse(theirs) != lay:
            mismatches.append(f"ours {text}\n  means {lay}\n  triton {theirs}")
        elif (text, lay, None) not in documented and theirs != _as_triton_prints(text):
            mismatches.append(f"ours {text}\n  triton prints {theirs}")
    assert not mismatches, "\n".join(mismatches[:5])
