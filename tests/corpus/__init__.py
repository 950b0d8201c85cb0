"""The corpus: real Triton 3.9.0 compiles for gfx1250, kept as fixtures (no triton needed).

``regenerate.py`` writes them; tests read them through this module. A case is one compile of
one kernel of ``kernels/``; its directory ``fixtures/NAME/`` holds the TTGIR, the module after
Triton's allocation pass, the assembly, and ``expected.json`` (what they say). An *access* is
one LDS load or store of a case with the instructions per warp that its assembly holds.

>>> case = cases()["lds_bandwidth_plain"]
>>> case.ttg_shared, [b["offsets"] for b in case.buffers]
(65536, [[0]])
>>> load = [a for a in case.accesses if a.kind == "load"][0]
>>> load.shape, load.dtype, load.instructions
((4, 8192), 'fp16', {'ds_load_b128': 32})
>>> load.shared
'#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>'
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from . import ttgir_text

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
PROBES = HERE / "probes"

#: Issue 11's items, by the tags ``index.json`` uses in each case's ``covers``.
ITEMS = {
    "1": "paired loads and stores (ds_*_2addr_*)",
    "2": "duplicate loads removed",
    "3": "ds_load_tr4_b64 (packed fp4)",
    "4-shared_linear": "#ttg.shared_linear source",
    "4-slice": "#ttg.slice destination",
    "4-rank3": "rank-3 #ttg.amd_wmma",
    "5": "views into a larger buffer",
    "6": "8-byte aligned accesses",
    "7": "allocator: partitioned padded inner shape",
    "7-rejected": "allocator: shapes Triton refuses are a clear error",
    "10": "stores",
}

#: MLIR element types -> wgpsim dtype names.
DTYPES = {
    "f16": "fp16",
    "bf16": "bf16",
    "f32": "fp32",
    "i8": "i8",
    "i32": "i32",
    "i16": "i16",
    "f8E4M3FN": "fp8e4m3",
    "f8E5M2": "fp8e5m2",
}
resolve = ttgir_text.resolve


@dataclass(frozen=True)
class Access:
    """One LDS load or store of a case: op, types, encodings (aliases resolved) and the
    instructions per warp of the assembly (``None`` where the probe could not compile)."""

    case: str
    index: int
    op: str
    kind: str
    name: str | None
    loc: str | None
    memdesc: str
    tensor: str
    shared: str
    dst: str
    shape: tuple[int, ...]
    alloc_shape: tuple[int, ...] | None
    dtype: str
    instructions: dict[str, int] | None
    triton_lowering: dict[str, int] | None
    probe: str
    views: tuple[dict[str, Any], ...] = ()
    root: int | None = None

    @property
    def id(self) -> str:
        return f"{self.case}[{self.index}]{self.name or ''}"

    @property
    def root_type(self) -> str | None:
        """The memdesc type of the local_alloc the access's views start from (None when the
        memdesc is a loop-carried value)."""
        if self.root is None:
            return None
        return next(b["type"] for b in cases()[self.case].buffers if b["index"] == self.root)

    @property
    def probe_path(self) -> Path:
        return PROBES / f"{self.probe}.ttgir"


@dataclass(frozen=True)
class Case:
    """One compile of the corpus and what its fixtures say."""

    name: str
    info: dict[str, Any]
    expected: dict[str, Any] = field(repr=False)

    @property
    def dir(self) -> Path:
        return FIXTURES / self.name

    def text(self, file: str) -> str:
        return (self.dir / file).read_text()

    @property
    def ttgir(self) -> str:
        return self.text("kernel.ttgir")

    @property
    def alloc_mlir(self) -> str:
        return self.text("kernel.alloc.mlir")

    @property
    def amdgcn(self) -> str:
        return self.text("kernel.amdgcn")

    @property
    def ttg_shared(self) -> int:
        return self.expected["ttg_shared"]

    @property
    def num_warps(self) -> int:
        return self.expected["num_warps"]

    @property
    def buffers(self) -> list[dict[str, Any]]:
        return self.expected["buffers"]

    @property
    def ops(self) -> list[dict[str, Any]]:
        return self.expected["ops"]

    @property
    def covers(self) -> list[str]:
        return self.info.get("covers", [])

    @property
    def aliases(self) -> dict[str, str]:
        return ttgir_text.aliases(self.ttgir)

    @property
    def accesses(self) -> list[Access]:
        return [self._access(op) for op in self.ops if op.get("kind") in ("load", "store")]

    def _access(self, op: dict[str, Any]) -> Access:
        mi, ti = (0, 1) if op["kind"] == "load" else (1, 0)
        md = ttgir_text.memdesc(op["types"][mi])
        ten = ttgir_text.tensor(op["types"][ti])
        aliases = self.aliases
        return Access(
            self.name,
            op["index"],
            op["op"],
            op["kind"],
            op["name"],
            op["loc"],
            op["types"][mi],
            op["types"][ti],
            resolve(md.encoding, aliases),
            resolve(ten.encoding, aliases),
            ten.shape,
            md.alloc_shape,
            DTYPES.get(ten.elem, ten.elem),
            op.get("instructions"),
            op.get("triton_lowering"),
            op["probe"],
            tuple(op.get("views", ())),
            op.get("root"),
        )


@cache
def index() -> dict[str, Any]:
    """``index.json``: every case with its source, files and the issue-11 items it covers."""
    return json.loads((HERE / "index.json").read_text())


@cache
def cases() -> dict[str, Case]:
    """Every case that compiled, by name, in index order."""
    out = {}
    for name, info in index()["cases"].items():
        path = FIXTURES / name / "expected.json"
        if "error" not in info and "rejected" not in info and path.exists():
            out[name] = Case(name, info, json.loads(path.read_text()))
    return out


def rejected() -> dict[str, dict[str, Any]]:
    """Cases Triton 3.9.0 refuses to compile: their error (``rejected``; ``None`` if it compiled
    after all) and the refused allocation ``alloc`` = [shape, dtype, #ttg encoding]."""
    return {n: i for n, i in index()["cases"].items() if "rejected" in i}


def accesses() -> list[Access]:
    """Every LDS load/store of every case, in case and module order."""
    return [a for case in cases().values() for a in case.accesses]


def distinct(items: list[Access]) -> list[Access]:
    """One access per probe (the same op on the same types in several kernels counts once)."""
    seen: dict[str, Access] = {}
    for a in items:
        seen.setdefault(a.probe, a)
    return list(seen.values())
