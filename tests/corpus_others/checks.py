"""Issue 23's checks of `wgpsim kernel` on the corpus of kernels other people wrote.

Each fixture (``fixtures/NAME/``: the cache TTGIR, the assembly, what Triton's compile says in
``expected.json``) is read as a user hands a cache entry to ``wgpsim kernel``: from
``kernel.ttgir`` (its ``kernel.amdgcn`` beside it), so the allocation is wgpsim's own. Five checks:

- ``clean``: the report (of the cache TTGIR and of the post-allocation module), the loop
  program of every assembly loop (or of the whole kernel) and the timing of the main loop all
  run without an exception;
- ``local_load``: every ``ttg.local_load`` lowers to the instructions its probe's assembly holds;
- ``lds_bytes``: wgpsim's LDS total equals Triton's ``ttg.shared``;
- ``offsets``: every buffer Triton placed (explicit and scratch) is at Triton's offset;
- ``ds``: per assembly loop, the ``ds_*`` instructions wgpsim times per iteration (those it
  matched to an LDS op of the kernel model, and the lane permutes ``ds_bpermute_b32`` ..., which
  access no LDS memory and are listed in ``not_modelled``) equal the loop body's; a kernel
  without a loop: the whole kernel's.

A check is ``Check(passed, cause)``; ``passed`` is None where it does not apply (no local_load).
Every function takes the ``target`` whose compiles it checks: ``gfx1250`` (``fixtures/``) or
``gfx950`` / ``gfx942`` (issue 27: ``gfx950/fixtures/``, the same kernels compiled for wave64).

>>> c = check_kernel("flaggems_mm_bf16")
>>> c["ds"].detail, c["offsets"].detail, c["local_load"].passed
('1 of 1 loops', '2 of 2 buffers', True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from wgpsim.frontend.ssa_scopes import original_name

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
#: the targets the corpus is compiled for (``regenerate.py --target``)
TARGETS = ("gfx1250", "gfx950", "gfx942")
CHECKS = ("clean", "local_load", "lds_bytes", "offsets", "ds")
LOAD_OPS = ("ttg.local_load", "amdg.local_load_packed_transposed")
#: iterations timed for the ``clean`` check (enough to run the loop's every step)
TIMED_ITERATIONS = 2


@dataclass(frozen=True)
class Check:
    """One check of one kernel: ``passed`` (None: does not apply), ``cause`` (why it failed),
    ``detail`` (the count behind it, e.g. ``"3 of 4 loops"``), ``ok`` of ``of`` the things
    checked (loops, buffers, local_loads; 1 of 1 for a yes/no check)."""

    passed: bool | None
    cause: str = ""
    detail: str = ""
    ok: int = 0
    of: int = 0


def root(target: str = "gfx1250") -> Path:
    """The folder of ``target``'s compiles (``index.json``, ``fixtures/``, ``probes/``)."""
    if target not in TARGETS:
        raise ValueError(f"no corpus compiled for {target!r} (valid: {', '.join(TARGETS)})")
    return HERE if target == "gfx1250" else HERE / target


@cache
def index(target: str = "gfx1250") -> dict[str, Any]:
    return json.loads((root(target) / "index.json").read_text())


def compiled(target: str = "gfx1250") -> list[str]:
    """The kernels Triton compiled (those with fixtures), in table order of the index."""
    return [n for n, v in index(target)["kernels"].items() if "error" not in v]


def not_compiled(target: str = "gfx1250") -> dict[str, str]:
    """Kernel -> Triton's error, for the kernels it could not compile."""
    return {n: v["error"] for n, v in index(target)["kernels"].items() if "error" in v}


@cache
def expected(name: str, target: str = "gfx1250") -> dict[str, Any]:
    return json.loads((root(target) / "fixtures" / name / "expected.json").read_text())


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:200]


@cache
def check_kernel(name: str, target: str = "gfx1250") -> dict[str, Check]:
    """The five checks of kernel ``name`` compiled for ``target`` (see the module docstring)."""
    from wgpsim.frontend.sources import read_kernel
    from wgpsim.kernel.report import kernel_report

    exp = expected(name, target)
    path = root(target) / "fixtures" / name / "kernel.ttgir"
    try:
        rep = kernel_report(path)
        model = read_kernel(path)
    except Exception as exc:  # noqa: BLE001 - the report must not raise; say what it raised
        why = f"kernel report raises {_error(exc)}"
        return {c: Check(False, why, of=1) for c in CHECKS}
    out = {
        "local_load": _local_loads(rep, exp),
        "lds_bytes": _lds_bytes(rep, exp),
        "offsets": _offsets(rep, exp),
    }
    ds, clean = _loops(model, exp)
    raised = [clean.cause] if clean.cause else []
    try:
        kernel_report(path.with_name("kernel.alloc.mlir"))
    except Exception as exc:  # noqa: BLE001
        raised.append(f"the report of kernel.alloc.mlir raises {_error(exc)}")
    out["ds"] = ds
    out["clean"] = Check(not raised, "; ".join(raised[:2]), ok=int(not raised), of=1)
    return {c: out[c] for c in CHECKS}


def _local_loads(rep, exp) -> Check:
    mine = [op for op in rep.ops if op["op"] in LOAD_OPS]
    theirs = [o for o in exp["ops"] if o["op"] in LOAD_OPS]
    if not theirs:
        return Check(None, detail="no local_load")
    if len(mine) != len(theirs):
        why = f"{len(mine)} local_load ops in the report, {len(theirs)} in the TTGIR"
        return Check(False, why, of=len(theirs))
    bad = [
        f"{o['name']} ({o['loc']}): {m['instructions']} vs the assembly's {o['instructions']}"
        for m, o in zip(mine, theirs, strict=True)
        if o.get("instructions") is not None and m["instructions"] != o["instructions"]
    ]
    ok = len(theirs) - len(bad)
    return Check(not bad, "; ".join(bad[:2]), f"{ok} of {len(theirs)}", ok, len(theirs))


def _lds_bytes(rep, exp) -> Check:
    want = exp["ttg_shared"]
    ok = rep.lds_bytes == want
    why = "" if ok else f"wgpsim {rep.lds_bytes} B, ttg.shared {want} B"
    return Check(ok, why, str(want), int(ok), 1)


def _offsets(rep, exp) -> Check:
    """Triton's buffers matched to the report's by the name the module prints (the reader
    calls a name repeated in sibling regions ``%3$2``, ``%3$3``): the k-th of a name and kind
    (explicit or scratch) is the k-th there."""
    mine: dict[tuple[str, bool], list] = {}
    for b in rep.buffers:
        key = (original_name(b["name"]).removeprefix("scratch:"), b["kind"] == "explicit")
        mine.setdefault(key, []).append(b["wgpsim_offsets"])
    bad = []
    for b in exp["buffers"]:
        same = mine.get((b["name"], b["op"] == "ttg.local_alloc"))
        got = same.pop(0) if same else "absent"
        if got != b["offsets"]:
            what = "scratch of " if b["op"] != "ttg.local_alloc" else ""
            where = "not placed" if got in ("absent", None) else f"at {got}"
            bad.append(f"{what}{b['op']} {b['name']} {where}, Triton's {b['offsets']}")
    ok, of = len(exp["buffers"]) - len(bad), len(exp["buffers"])
    return Check(not bad, "; ".join(bad[:2]), f"{ok} of {of} buffers", ok, of)


def _lds_rows(program) -> int:
    """The body's ds_* the program accounts for: LDS rows matched to an op, and lane permutes
    (``ds_bpermute_b32`` ...: no LDS memory access; issue rows, listed in the report's
    ``not_modelled``)."""
    return sum(s.what in ("lds", "permute") for s in program.steps)


def _loops(model, exp) -> tuple[Check, Check]:
    """The ``ds`` check and the ``clean`` check (the loop programs and the timing run here)."""
    from wgpsim.kernel.loop.program import loop_program
    from wgpsim.kernel.loop.timing import time_kernel_loop
    from wgpsim.kernel.loop.traces import loop_trace

    loops = exp["assembly"]["loops"]
    targets = [(lp["label"], sum(lp["ds"].values())) for lp in loops] or [
        (None, sum(exp["assembly"]["ds"].values()))
    ]
    bad, raised = [], []
    for label, want in targets:
        try:
            program = loop_program(model, loop=label)
        except Exception as exc:  # noqa: BLE001
            raised.append(f"loop program of {label or 'the kernel'} raises {_error(exc)}")
            bad.append(f"{label or 'kernel'}: raises")
            continue
        got = _lds_rows(program)
        if got != want:
            first = str(program.unmatched[0]).split(": ", 1)[-1] if program.unmatched else ""
            bad.append(f"{label or 'kernel'}: {got} vs {want}" + (f" ({first})" if first else ""))
    if loops:
        detail = f"{len(loops) - len(bad)} of {len(loops)} loops"
    else:
        detail = "kernel: " + ("equal" if not bad else bad[0].split(": ", 1)[1].split(" (")[0])
    try:
        lt = loop_trace(loop_program(model), TIMED_ITERATIONS)
        time_kernel_loop(lt)
    except Exception as exc:  # noqa: BLE001
        raised.append(f"loop timing raises {_error(exc)}")
    ds = Check(not bad, "; ".join(bad[:2]), detail, len(targets) - len(bad), len(targets))
    clean = Check(not raised, "; ".join(raised[:2]), ok=int(not raised), of=1)
    return ds, clean
