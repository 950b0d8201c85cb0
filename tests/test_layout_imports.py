"""The layout layer has no import cycle: each module imports alone, and the graph of
module-level imports between ``wgpsim.layout`` modules (``TYPE_CHECKING`` blocks and
imports inside functions aside) is acyclic. ``ll_algebra`` in particular does not import
``linear_layout`` (the class uses the algebra, not the other way round): it names the protocol
``ll_interface.Layout``, which lists exactly the members of ``LinearLayout`` the algebra reads."""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

LAYOUT = Path(__file__).resolve().parents[1] / "wgpsim" / "layout"
MODULES = sorted(p.stem for p in LAYOUT.glob("*.py") if p.stem != "__init__")


def _module_imports(path: Path) -> set[str]:
    """wgpsim.layout modules imported at module level (not under TYPE_CHECKING)."""
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for sub in ast.walk(node) if isinstance(node, ast.Import | ast.ImportFrom) else ():
            names = [a.name for a in sub.names] if isinstance(sub, ast.Import) else []
            if isinstance(sub, ast.ImportFrom) and sub.module:
                names = [sub.module] + [f"{sub.module}.{a.name}" for a in sub.names]
            found |= {n.split(".")[2] for n in names if n.startswith("wgpsim.layout.")}
    return found & set(MODULES)


def test_layout_import_graph_is_acyclic():
    graph = {m: _module_imports(LAYOUT / f"{m}.py") for m in MODULES}
    assert "linear_layout" not in graph["ll_algebra"]
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        if state.get(m) == 1:
            raise AssertionError("import cycle: " + " -> ".join([*path, m]))
        if state.get(m) == 2:
            return
        state[m] = 1
        for n in sorted(graph[m]):
            visit(n, [*path, m])
        state[m] = 2

    for m in MODULES:
        visit(m, [])
    assert len(graph) >= 10


@pytest.mark.parametrize("module", MODULES)
def test_each_module_imports_alone(module):
    code = f"import wgpsim.layout.{module}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-1000:]


def test_the_algebra_reads_of_a_layout_exactly_what_the_protocol_lists():
    from wgpsim.layout.linear_layout import LinearLayout
    from wgpsim.layout.ll_interface import Layout

    tree = ast.parse((LAYOUT / "ll_algebra.py").read_text())
    read = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    fields = {f.name for f in dataclasses.fields(LinearLayout)}
    members = {n for n in dir(LinearLayout) if not n.startswith("_")} | fields
    listed = {n for n in vars(Layout) if not n.startswith("_")} | set(Layout.__annotations__)
    assert read & members == listed
    assert isinstance(LinearLayout(lane=[[1]], out_dims={"o": 2}), Layout)
