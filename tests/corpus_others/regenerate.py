"""Regenerate the corpus of kernels other people wrote (issue 23): Triton 3.9.0 compiles for
``GPUTarget("hip", "gfx1250", 32)`` on the CPU, kept as fixtures; with ``--target gfx950`` /
``--target gfx942`` the same kernels compiled for ``GPUTarget("hip", "gfx950", 64)`` /
``("hip", "gfx942", 64)`` (issue 27), kept in ``gfx950/`` / ``gfx942/`` beside this file.

How to run (needs the triton extra; nothing runs on a GPU), from the repository root:

    python tests/corpus_others/regenerate.py                 # every kernel of the table
    python tests/corpus_others/regenerate.py tutorial_softmax liger_rms_norm
    python tests/corpus_others/regenerate.py --target gfx950 # into tests/corpus_others/gfx950/
    python tests/corpus_others/regenerate.py --list

The kernels and their launch parameters are ``kernels.TABLE``. Everything else is
``tests/corpus/regenerate.py``'s, imported: each compile runs in its own subprocess with a fresh
``TRITON_CACHE_DIR`` (``_run_child``), the files written are the cache TTGIR
(``kernel.ttgir``), the module right after ``allocate-shared-memory`` (``kernel.alloc.mlir``),
the assembly without its DWARF sections (``kernel.amdgcn``), and ``expected.json``
(``build_expected``: ``ttg.shared``, the buffers at their ``allocation.offset``, the LDS ops with
their probes' instructions, the ``ds_*`` counts of the whole kernel and of each loop body). The
probes of this corpus live in ``probes/`` beside this file. A kernel Triton cannot compile is
listed in ``index.json`` with its error; that is not a failure of the script (exit 0).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
sys.path.insert(0, str(TESTS))

from corpus import regenerate as base  # noqa: E402

from corpus_others.kernels import kernels  # noqa: E402

FIXTURES = HERE / "fixtures"
PROBES = HERE / "probes"
INDEX = HERE / "index.json"


def use_target(arch: str) -> None:
    """Compile for ``arch``; its fixtures, probes and index go to ``HERE`` (gfx1250) or to
    ``HERE / arch`` (every other target)."""
    global FIXTURES, PROBES, INDEX
    base.set_target(arch)
    root = HERE if arch == "gfx1250" else HERE / arch
    FIXTURES, PROBES, INDEX = root / "fixtures", root / "probes", root / "index.json"


def child_compile(name: str, out: Path) -> dict:
    """Compile kernel ``name`` of the table; write its three artefacts (in the child)."""
    triton, target = base._triton()
    k = kernels()[name]
    fn = k.function()
    if type(fn).__name__ == "GluonJITFunction":
        from triton.experimental.gluon._runtime import GluonASTSource as Source
    else:
        from triton.compiler import ASTSource as Source
    # As the JIT specializes a launch with 16-byte aligned pointers and sizes that are
    # multiples of 16 (tests/corpus does the same).
    attrs = {
        (fn.arg_names.index(arg),): [["tt.divisibility", 16]]
        for arg, ty in k.signature.items()
        if ty.startswith("*") or ty in ("i32", "i64")
    }
    src = Source(fn, k.signature, k.constexpr_values, attrs)
    options = {"num_warps": k.num_warps, "num_stages": k.num_stages, **k.options}
    compiled = triton.compile(src, target=target, options=options)
    dump = Path(os.environ["MLIR_DUMP_PATH"])
    out.mkdir(parents=True, exist_ok=True)
    (out / "kernel.ttgir").write_text(base._relative(compiled.asm["ttgir"]))
    (out / "kernel.alloc.mlir").write_text(base._relative(base._allocated_module(dump)))
    (out / "kernel.amdgcn").write_text(base._relative(base.strip_debug(compiled.asm["amdgcn"])))
    return {"shared": compiled.metadata.shared, "name": compiled.metadata.name}


def _entry(k) -> dict:
    return {
        "function": k.fn,
        "origin": k.origin,
        "regression": k.regression,
        "num_warps": k.num_warps,
        "num_stages": k.num_stages,
        "constexprs": {c: repr(v) for c, v in k.constexprs.items()},
        **({"options": k.options} if k.options else {}),
    }


def regenerate_one(k, probes: dict, reuse: bool = False) -> dict:
    """Compile ``k`` and write its fixtures; its ``index.json`` entry (with ``error`` if
    Triton could not compile it or its artefacts could not be read). ``reuse``: read the
    stored compile again (``expected.json`` rebuilt, no compile)."""
    out = FIXTURES / k.name
    entry = _entry(k)
    if reuse and (out / "expected.json").exists():  # the stored compile, read again
        old = json.loads((out / "expected.json").read_text())
        meta, err = {"shared": old["metadata_shared"], "name": old["kernel"]}, ""
    else:
        meta, err = base._run_child(["compile", k.name, str(out)], script=__file__)
        err = err.replace(str(base.ROOT) + "/", "")
    if meta is None:
        print(f"  does not compile: {err}")
        return {**entry, "error": err}
    base.PROBES = PROBES  # build_expected writes this corpus' probes beside it
    try:
        expected = base.build_expected(k.name, out, meta, probes)
    except Exception as exc:  # noqa: BLE001 - one bad kernel must not lose the run
        print(f"  reading the artefacts failed: {exc!r}")
        return {**entry, "error": f"reading the artefacts: {exc!r}"}
    base._write_json(out / "expected.json", expected)
    loops = expected["assembly"]["loops"]
    print(
        f"  ttg.shared {expected['ttg_shared']}, {len(loops)} loop(s), ds {expected['assembly']['ds']}"
    )
    return {
        **entry,
        "files": ["kernel.ttgir", "kernel.alloc.mlir", "kernel.amdgcn", "expected.json"],
    }


def _prune_probes(probes: dict) -> None:
    """Keep only the probes some fixture's ``expected.json`` uses (index and module files)."""
    used = {
        o["probe"]
        for d in FIXTURES.iterdir()
        if (d / "expected.json").exists()
        for o in json.loads((d / "expected.json").read_text())["ops"]
        if "probe" in o
    }
    base._write_json(PROBES / "index.json", {k: v for k, v in sorted(probes.items()) if k in used})
    for stale in PROBES.glob("*.ttgir"):
        if stale.name.split(".")[0] not in used:
            stale.unlink()


def regenerate(names: list[str], reuse: bool = False) -> int:
    table = kernels()
    unknown = [n for n in names if n not in table]
    if unknown:
        print(f"unknown kernel(s) {unknown}; --list shows the names", file=sys.stderr)
        return 2
    probes_path = PROBES / "index.json"
    probes = json.loads(probes_path.read_text()) if probes_path.exists() else {}
    index = json.loads(INDEX.read_text()) if INDEX.exists() else {"kernels": {}}
    index["kernels"] = {n: v for n, v in index["kernels"].items() if n in table}
    for k in table.values():
        if names and k.name not in names:
            continue
        print(f"{k.name} ({k.num_warps} warps, {k.num_stages} stages)", flush=True)
        index["kernels"][k.name] = regenerate_one(k, probes, reuse)
        base._write_json(probes_path, dict(sorted(probes.items())))
        index["kernels"] = dict(sorted(index["kernels"].items()))
        base._write_json(INDEX, index)
    _prune_probes(probes)
    failed = sorted(n for n, v in index["kernels"].items() if "error" in v)
    print(f"{len(index['kernels']) - len(failed)} of {len(index['kernels'])} kernels compiled")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="kernels to regenerate (default: all)")
    parser.add_argument("--list", action="store_true", help="print the kernel names")
    parser.add_argument("--target", choices=base.WAVE_SIZES, default="gfx1250")
    parser.add_argument(
        "--reuse", action="store_true", help="rebuild expected.json from the stored compiles"
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    use_target(args.target)
    if args.child:
        print(json.dumps(child_compile(args.child[1], Path(args.child[2]))))
        return 0
    if args.list:
        print("\n".join(kernels()))
        return 0
    return regenerate(args.names, args.reuse)


if __name__ == "__main__":
    sys.exit(main())
