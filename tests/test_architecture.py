"""The layering of docs/DESIGN.md ("Layers", "The map"), checked on the source: no import circle
between modules, and each package imports only the packages its row of :data:`ALLOWED` names.

Every import counts, wherever it stands: at module level, inside a function, under
``TYPE_CHECKING``, and the names a package offers through ``wgpsim.lazy.exports`` (a string
there is an import on first use). A dependency hidden in a function is still a dependency.
A module ``wgpsim.P.m`` (or ``wgpsim/P/__init__.py``) belongs to package ``P``; a top-level
module ``wgpsim/m.py`` is its own row (the leaf modules, the ``wgpsim.kernel`` facade); the
root ``wgpsim/__init__.py`` is the row ``wgpsim``.

On a failure the message lists every broken rule at once, each with file and line.

The sizes of "The map" are checked too: no file of the package over :data:`MAX_LINES` lines, no
function over :data:`MAX_FUNCTION_LINES`, no folder of more than :data:`MAX_MODULES` modules;
and a job package imports neither pandas nor matplotlib at module level.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "wgpsim"

LEAVES = frozenset(
    {"errors", "lazy", "files", "packaged", "inputs", "overrides", "extras", "columns"}
)
"""Leaf modules beside the floors: any package may import them; they import no floor."""

_FLOORS = ("layout", "frontend", "trace", "hw", "engine", "measures", "sweeps")
"""The shared floors, in order: each may import the ones before it."""

_JOBS = frozenset({"microbench", "search", "kernel", "calibration"})
"""The packages of the jobs a user comes for (docs/DESIGN.md, "The map")."""


def _below(floor: str) -> frozenset[str]:
    """The floors under ``floor`` in the order layout -> frontend -> trace -> ... -> sweeps,
    and every leaf module."""
    return frozenset(_FLOORS[: _FLOORS.index(floor)]) | LEAVES


_ALL_FLOORS = frozenset(_FLOORS) | LEAVES

ALLOWED: dict[str, frozenset[str]] = {
    # leaf modules: each imports only the leaves named here
    "errors": frozenset(),
    "lazy": frozenset(),
    "files": frozenset(),
    "packaged": frozenset(),
    "columns": frozenset(),
    "inputs": frozenset({"errors"}),
    "extras": frozenset({"errors"}),
    "overrides": frozenset({"errors", "inputs"}),
    # the floors, each over the ones before it
    "layout": _below("layout"),
    "frontend": frozenset({"layout"}) | LEAVES,  # readers of compiled kernels: layout only
    "trace": _below("trace"),
    "hw": _below("hw"),
    "engine": _below("engine"),
    "measures": _below("measures"),
    "sweeps": _below("sweeps"),
    # the jobs, over every floor; search builds on the GEMM candidates, kernel on both
    "microbench": _ALL_FLOORS,
    "search": _ALL_FLOORS | {"microbench"},
    "kernel": _ALL_FLOORS | {"microbench", "search"},
    "calibration": _ALL_FLOORS,
    # run a YAML file by its kind: the registry imports each job's kind module
    "experiments": _ALL_FLOORS | _JOBS,
    # the top: figures, pages, the command, and the Python entry points
    "plots": _ALL_FLOORS | _JOBS | {"experiments"},
    "html": _ALL_FLOORS | _JOBS | {"experiments", "plots"},
    "cli": _ALL_FLOORS | _JOBS | {"experiments", "plots", "html", "wgpsim"},
    "wgpsim": _ALL_FLOORS | {"experiments"},  # the root's lazy names (wgpsim.lower, ...)
    "__main__": frozenset({"cli"}),
}
"""Package -> the packages it may import (besides itself)."""


MAX_LINES = 500
"""No file of the package is longer (docs/DESIGN.md, "The map")."""

MAX_FUNCTION_LINES = 80
"""No function (or method, or nested function) is longer, from ``def`` to its last line."""

MAX_MODULES = 15
"""No folder holds more modules (``.py`` files besides ``__init__.py``; a subpackage is a folder
of its own)."""

PENDING_FILES: frozenset[str] = frozenset()
"""Files over :data:`MAX_LINES` whose split is on another branch."""

PENDING_FUNCTIONS: frozenset[str] = frozenset()
"""Functions over :data:`MAX_FUNCTION_LINES` whose split is on another branch."""

HEAVY = ("pandas", "matplotlib")
"""What a job package imports only inside the functions that draw or build a table."""


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` (both module names) at ``path``:``line``."""

    source: str
    target: str
    path: str
    line: int

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def package_of(module: str) -> str:
    """``wgpsim.trace.io`` -> ``trace``; ``wgpsim.errors`` -> ``errors``; ``wgpsim`` -> ``wgpsim``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The module ``name`` reaches: itself, or the longest known prefix (``from wgpsim.layout
    import parse`` reaches ``wgpsim.layout``; ``from wgpsim.layout import gf2``, the module)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _lazy_targets(tree: ast.Module) -> Iterator[tuple[str, int]]:
    """The module names of the dicts handed to ``exports(...)`` (literally or by a name)."""
    dicts = {
        t.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "exports":
            for arg in node.args:
                table = dicts.get(arg.id) if isinstance(arg, ast.Name) else arg
                for value in getattr(table, "values", []):
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        yield value.value, value.lineno


def imports(module: str, path: Path, known: dict[str, Path], root: Path = ROOT) -> list[Edge]:
    """Every wgpsim module that ``module`` imports, anywhere in its text (``path`` named
    relative to ``root``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    here = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: list[tuple[str, int]] = list(_lazy_targets(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = here.rsplit(".", node.level - 1)[0] if node.level > 1 else here
                base = f"{pkg}.{base}" if base else pkg
            names += [(f"{base}.{a.name}", node.lineno) for a in node.names]
    rel = str(path.relative_to(root))
    edges = {}
    for name, line in names:
        target = _resolve(name, known) if name.split(".")[0] == "wgpsim" else None
        if target is not None and target != module:
            edges.setdefault(target, Edge(module, target, rel, line))
    return sorted(edges.values(), key=lambda e: e.line)


def graph() -> dict[str, list[Edge]]:
    known = modules()
    return {m: imports(m, p, known) for m, p in known.items()}


def cycles(g: dict[str, list[Edge]]) -> list[tuple[list[Edge], set[str]]]:
    """Each group of modules that import one another (strongly connected, Tarjan), with one
    circle of imports through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for e in g[v]:
            if e.target not in index:
                visit(e.target)
                low[v] = min(low[v], low[e.target])
            elif e.target in stack:
                low[v] = min(low[v], index[e.target])
        if low[v] == index[v]:
            group = set()
            while not group or v not in group:
                group.add(stack.pop())
            if len(group) > 1:
                groups.append(group)

    for v in sorted(g):
        if v not in index:
            visit(v)
    return [(_circle(g, group), group) for group in groups]


def _circle(g: dict[str, list[Edge]], group: set[str]) -> list[Edge]:
    """The shortest circle from the group's first module back to itself (breadth first)."""
    start = min(group)
    came: dict[str, Edge] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for e in g[v]:
                if e.target in group and e.target not in came:
                    came[e.target] = e
                    nxt.append(e.target)
        if start in came:
            break
        frontier = nxt
    path, v = [], start
    while True:
        path.append(came[v])
        v = came[v].source
        if v == start:
            return path[::-1]


def violations(g: dict[str, list[Edge]]) -> list[str]:
    """Every broken rule, one line each."""
    out = []
    for circle, group in cycles(g):
        names = " -> ".join([circle[0].source, *(e.target for e in circle)])
        rest = sorted(group - {e.source for e in circle})
        also = f"; the group also holds {', '.join(rest)}" if rest else ""
        out.append(f"import circle: {names} ({', '.join(e.where() for e in circle)}){also}")
    for module in sorted(g):
        pkg = package_of(module)
        if pkg not in ALLOWED:
            out.append(f"{module}: package {pkg!r} has no row in ALLOWED (add it to the map)")
            continue
        for e in g[module]:
            target = package_of(e.target)
            if target != pkg and target not in ALLOWED[pkg]:
                out.append(
                    f"{pkg} may not import {target}: {e.where()} imports {e.target} "
                    f"({pkg} may import: {', '.join(sorted(ALLOWED[pkg])) or 'nothing'})"
                )
    return out


def test_no_import_circle_and_every_import_downward():
    found = violations(graph())
    assert not found, f"{len(found)} broken import rule(s):\n  " + "\n  ".join(found)


def test_every_package_has_a_row_and_rows_name_packages():
    packages = {package_of(m) for m in modules()}
    assert packages <= set(ALLOWED), sorted(packages - set(ALLOWED))
    assert set(ALLOWED) <= packages, sorted(set(ALLOWED) - packages)
    for row in ALLOWED.values():
        assert row <= set(ALLOWED), sorted(row - set(ALLOWED))


def test_the_checker_finds_what_it_must(tmp_path):
    """The checker itself: a circle, an upward import inside a function, an import under
    TYPE_CHECKING and a lazy export are each found (on a throwaway package, not on wgpsim)."""
    known = {
        "wgpsim.layout.a": tmp_path / "a.py",
        "wgpsim.layout.b": tmp_path / "b.py",
        "wgpsim.layout": tmp_path / "__init__.py",
        "wgpsim.experiments.x": tmp_path / "x.py",
    }
    known["wgpsim.layout.a"].write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from wgpsim.layout.b import B\n"
    )
    known["wgpsim.layout.b"].write_text(
        "def f():\n    from wgpsim.layout import a\n    from wgpsim.experiments.x import y\n"
    )
    known["wgpsim.layout"].write_text(
        "from wgpsim.lazy import exports\n_E = {'X': 'wgpsim.experiments.x'}\n"
        "__getattr__, __dir__ = exports(__name__, _E)\n"
    )
    known["wgpsim.experiments.x"].write_text("import numpy\n")
    g = {m: imports(m, p, known, tmp_path) for m, p in known.items()}
    found = violations(g)
    assert any(v.startswith("import circle: wgpsim.layout.a -> wgpsim.layout.b") for v in found)
    upward = [v for v in found if v.startswith("layout may not import experiments")]
    assert [v.split(": ")[1].split()[0] for v in upward] == ["__init__.py:2", "b.py:3"]


def long_files(root: Path = PACKAGE, limit: int = MAX_LINES) -> list[str]:
    """``path: N lines`` for every ``.py`` file under ``root`` longer than ``limit``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        n = len(path.read_text().splitlines())
        if n > limit:
            found.append(f"{path.relative_to(root.parent)}: {n} lines (at most {limit})")
    return found


def long_functions(root: Path = PACKAGE, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """``path::name`` -> lines, for every function under ``root`` longer than ``limit`` (methods
    and nested functions by their own name)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    found[f"{path.relative_to(root.parent)}::{node.name}"] = n
    return found


def crowded_folders(root: Path = PACKAGE, limit: int = MAX_MODULES) -> list[str]:
    """``folder: N modules`` for every folder under ``root`` (itself included) with more than
    ``limit`` modules."""
    found = []
    for folder in sorted({root, *(p.parent for p in root.rglob("*.py"))}):
        n = sum(1 for p in folder.glob("*.py") if p.name != "__init__.py")
        if n > limit:
            found.append(f"{folder.relative_to(root.parent)}/: {n} modules (at most {limit})")
    return found


def heavy_imports(root: Path = PACKAGE, jobs: frozenset[str] = _JOBS) -> list[str]:
    """``path:line imports X`` for each module-level import of :data:`HEAVY` in a job package
    (outside functions and ``TYPE_CHECKING`` blocks)."""
    found = []
    for job in sorted(jobs):
        for path in sorted((root / job).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in _module_level(tree.body):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                else:
                    continue
                for name in names:
                    if name.split(".")[0] in HEAVY:
                        where = f"{path.relative_to(root.parent)}:{node.lineno}"
                        found.append(f"{where} imports {name} at module level")
    return found


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run on import: ``body`` and the blocks of its ``if``/``try``
    (not a ``TYPE_CHECKING`` block), not the bodies of functions or classes' methods."""
    for node in body:
        if isinstance(node, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(node.test):
                yield from _module_level(node.body)
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _module_level(block)
        elif isinstance(node, ast.ClassDef):
            yield from _module_level([n for n in node.body if not isinstance(n, ast.FunctionDef)])
        else:
            yield node


def test_no_file_over_500_lines():
    found = [f for f in long_files() if f.split(":")[0] not in PENDING_FILES]
    assert not found, f"{len(found)} file(s) to split:\n  " + "\n  ".join(found)


def test_no_function_over_80_lines():
    found = [f"{k}: {n} lines" for k, n in long_functions().items() if k not in PENDING_FUNCTIONS]
    assert not found, (
        f"{len(found)} function(s) over {MAX_FUNCTION_LINES} lines:\n  " + "\n  ".join(found)
    )


def test_no_folder_over_15_modules():
    found = crowded_folders()
    assert not found, f"{len(found)} folder(s) to divide:\n  " + "\n  ".join(found)


def test_jobs_import_no_pandas_or_matplotlib_at_module_level():
    found = heavy_imports()
    assert not found, "\n  ".join(["import these inside the functions that use them:", *found])


def test_pending_entries_are_still_pending():
    """An entry of PENDING_* that is no longer too long is stale: remove it."""
    files = {f.split(":")[0] for f in long_files()}
    stale = sorted(PENDING_FILES - files) + sorted(PENDING_FUNCTIONS - set(long_functions()))
    assert not stale, f"no longer over the limit, remove from PENDING_*: {stale}"


def test_the_size_checks_find_what_they_must(tmp_path):
    """The size checks themselves, on a throwaway package: a long file, a long method, a
    crowded folder and a module-level pandas import in a job are each named."""
    pkg = tmp_path / "wgpsim"
    (pkg / "search").mkdir(parents=True)
    body = "\n".join(f"        x{i} = {i}" for i in range(81))
    (pkg / "search" / "big.py").write_text(
        "import pandas as pd\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    import matplotlib\n\n\nclass A:\n    def long(self):\n" + body + "\n" + "\n" * 420
    )
    for i in range(16):
        (pkg / "search" / f"m{i}.py").write_text("def f():\n    import pandas\n")
    assert long_files(pkg) == ["wgpsim/search/big.py: 509 lines (at most 500)"]
    assert long_functions(pkg) == {"wgpsim/search/big.py::long": 82}
    assert crowded_folders(pkg) == ["wgpsim/search/: 17 modules (at most 15)"]
    assert heavy_imports(pkg) == ["wgpsim/search/big.py:1 imports pandas at module level"]
