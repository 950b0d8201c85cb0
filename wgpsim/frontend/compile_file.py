"""Compile ``FILE.py:FUNCTION`` on the CPU for a packaged target (gfx1250 unless the request's
``target`` names another: ``gfx950``, ``gfx942``) into a Triton cache entry (``wgpsim compile``,
and ``wgpsim kernel FILE.py:FUNCTION``).

The compile runs in a child process (Triton can abort, and the user's file runs there, not in
wgpsim): the child imports the file, takes the ``@triton.jit`` / ``@gluon.jit`` function, runs
`wgpsim.frontend.compile.compile_for` with ``TRITON_CACHE_DIR`` pointing at the cache
root, so that Triton writes its own cache entry (a hash folder with ``NAME.ttgir``,
``NAME.amdgcn``, ``NAME.json``, ...), and adds ``NAME.post.mlir`` (the module after Triton's
``allocate-shared-memory``: the buffers' offsets) beside them. ``wgpsim kernel FOLDER`` reads it.

The command line's forms of the arguments::

    >>> parse_target("my_gemm.py:matmul")
    (PosixPath('my_gemm.py'), 'matmul')
    >>> parse_signature("a_ptr=*fp16, b_ptr=*fp16, M=i32")
    {'a_ptr': '*fp16', 'b_ptr': '*fp16', 'M': 'i32'}
    >>> parse_constexprs(["BLOCK_M=128", "EVEN_K=true", "ACC=fp32"])
    {'BLOCK_M': 128, 'EVEN_K': True, 'ACC': 'fp32'}
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from wgpsim.errors import ModuleError

__all__ = [
    "CompileRequest",
    "compile_file",
    "default_cache_dir",
    "parse_constexprs",
    "parse_signature",
    "parse_target",
]

#: How long a compile may take before it is stopped (seconds; a large Gluon GEMM takes ~30 s).
TIMEOUT = 900
#: The line on which the child reports a problem the user can fix (one line, no traceback).
_ERROR = "wgpsim-compile-error: "
#: The argument types most kernels use, as Triton names them (its ``str_to_ty``).
TRITON_TYPES = (
    "*fp16, *bf16, *fp32, *fp8e4nv, i1, i8, i16, i32, i64, u32, u64, fp16, bf16, fp32, ..."
)
_TARGET = re.compile(r"^(?P<file>.+\.py):(?P<fn>[A-Za-z_]\w*)$")
_NAME = re.compile(r"^[A-Za-z_]\w*$")
_EXTRA = "compiling needs the triton extra: python -m pip install -e '.[triton]' (Triton 3.9.0)"


@dataclass(frozen=True)
class CompileRequest:
    """One compile: the function ``function`` of ``source``, its argument types and constexpr
    values, the launch options, the cache root the entry goes to, and the target (a packaged
    hardware file's name, `wgpsim.frontend.compile.resolve_target`)."""

    source: Path
    function: str
    signature: dict[str, str] = field(default_factory=dict)
    constexprs: dict[str, Any] = field(default_factory=dict)
    num_warps: int = 4
    num_stages: int | None = None
    cache_dir: Path = Path(".")
    target: str = "mi450"


def is_target(text: str) -> bool:
    """Whether ``text`` is ``FILE.py:FUNCTION``."""
    return _TARGET.match(text) is not None


def parse_target(text: str) -> tuple[Path, str]:
    """``FILE.py:FUNCTION`` as (file, function)."""
    match = _TARGET.match(text)
    if match is None:
        raise ModuleError(f"{text!r}: expected FILE.py:FUNCTION (e.g. my_gemm.py:matmul)")
    return Path(match["file"]), match["fn"]


def parse_signature(text: str | None) -> dict[str, str]:
    """``"a_ptr=*fp16,M=i32"`` as a dict, in order (Triton's type names: ``*fp16``, ``i32``)."""
    out: dict[str, str] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, eq, kind = (s.strip() for s in item.partition("="))
        if not eq or not _NAME.match(name) or not kind:
            raise ModuleError(
                f"--signature: {item.strip()!r} is not NAME=TYPE (e.g. a_ptr=*fp16,M=i32)"
            )
        out[name] = kind
    return out


def parse_constexprs(items: list[str] | None) -> dict[str, Any]:
    """``["BLOCK_M=128", ...]`` as a dict; each value is read as YAML (128, true, 0.5, fp32)."""
    import yaml

    out: dict[str, Any] = {}
    for item in items or ():
        name, eq, text = (s.strip() for s in item.partition("="))
        if not eq or not _NAME.match(name) or not text:
            raise ModuleError(f"--constexpr: {item!r} is not NAME=VALUE (e.g. BLOCK_M=128)")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            value = text
        out[name] = value if isinstance(value, int | float | bool | str) else text
    return out


def default_cache_dir() -> Path:
    """Where Triton itself caches: ``$TRITON_CACHE_DIR``, else ``$TRITON_HOME/.triton/cache``
    (``TRITON_HOME`` defaults to the home directory)."""
    if os.environ.get("TRITON_CACHE_DIR"):
        return Path(os.environ["TRITON_CACHE_DIR"])
    return Path(os.environ.get("TRITON_HOME") or Path.home()) / ".triton" / "cache"


def compile_file(request: CompileRequest, timeout: float = TIMEOUT) -> tuple[str, Path]:
    """Compile in a child process; returns (kernel name, its cache entry's folder)."""
    if importlib.util.find_spec("triton") is None:
        raise ModuleError(_EXTRA)
    if not request.source.is_file():
        raise FileNotFoundError(2, "no such file", str(request.source))
    payload = asdict(request) | {
        "source": str(request.source.resolve()),
        "cache_dir": str(request.cache_dir.resolve()),
    }
    env = dict(os.environ, TRITON_CACHE_DIR=payload["cache_dir"])
    try:
        proc = subprocess.run(
            [sys.executable, "-m", __name__, json.dumps(payload)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise ModuleError(f"{_where(request)}: the compile took over {timeout:.0f} s") from None
    mine = [ln for ln in proc.stderr.splitlines() if ln.startswith(_ERROR)]
    if mine:
        raise ModuleError(f"{_where(request)}: {mine[-1][len(_ERROR) :]}")
    if proc.returncode != 0:
        raise ModuleError(f"{_where(request)}: {_crash(proc)}")
    done = json.loads(proc.stdout.strip().splitlines()[-1])
    return done["name"], Path(done["folder"])


def _where(request: CompileRequest) -> str:
    return f"{request.source}:{request.function}"


def _crash(proc: subprocess.CompletedProcess) -> str:
    """One line for a child that died: the signal or exit code and its last line of output."""
    lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
    last = f" ({lines[-1][:300]})" if lines else ""
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        return f"Triton aborted the compile ({name}){last}"
    return f"the compile failed (exit code {proc.returncode}){last}"


def _function(request: CompileRequest) -> Any:
    """Import ``request.source`` (its folder first on ``sys.path``) and take the function."""
    path = Path(request.source)
    sys.path.insert(0, str(path.parent))
    module_name = re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    fn = getattr(module, request.function, None)
    if fn is None:
        found = sorted(k for k, v in vars(module).items() if hasattr(v, "arg_names"))
        raise ModuleError(
            f"no function {request.function!r} in {path.name} "
            f"(its jit functions: {', '.join(found) or 'none'})"
        )
    if not hasattr(fn, "arg_names") or not hasattr(fn, "params"):
        raise ModuleError(f"{request.function} is not a @triton.jit or @gluon.jit function")
    return fn


def _arguments(fn: Any, request: CompileRequest) -> tuple[dict[str, str], dict[str, Any]]:
    """The signature in argument order and the constexprs (defaults filled in); arguments the
    command line leaves without a type or value are one error naming them all."""
    signature, constexprs = dict(request.signature), dict(request.constexprs)
    unknown = [k for k in (*signature, *constexprs) if k not in fn.arg_names]
    if unknown:
        raise ModuleError(
            f"{fn.__name__} has no argument {', '.join(unknown)} "
            f"(its arguments: {', '.join(fn.arg_names)})"
        )
    untyped, unset = [], []
    for p in fn.params:
        if p.is_constexpr and p.name not in constexprs:
            if p.has_default:
                constexprs[p.name] = p.default
            else:
                unset.append(p.name)
        elif not p.is_constexpr and p.name not in signature and p.name not in constexprs:
            untyped.append(p.name)
    problems = [
        f"unknown type {kind!r} for {name} (Triton's types: {TRITON_TYPES})"
        for name, kind in signature.items()
        if not _known_type(kind)
    ]
    if untyped:
        types = ",".join(f"{n}=TYPE" for n in untyped)
        problems.append(f"no type for {', '.join(untyped)} (--signature '{types}'; "
                        f"Triton's types: {TRITON_TYPES})")  # fmt: skip
    if unset:
        flags = " ".join(f"--constexpr {n}=VALUE" for n in unset)
        problems.append(f"no value for constexpr {', '.join(unset)} ({flags})")
    if problems:
        raise ModuleError("; ".join(problems))
    order = {name: i for i, name in enumerate(fn.arg_names)}
    return dict(sorted(signature.items(), key=lambda kv: order[kv[0]])), constexprs


def _known_type(kind: str) -> bool:
    """Whether Triton reads ``kind`` as an argument type (``*fp16``, ``i32``; not ``*f16``)."""
    import triton.language as tl

    try:
        tl.str_to_ty(kind, None)
    except (KeyError, IndexError, ValueError):
        return False
    return True


def _child(payload: dict[str, Any]) -> dict[str, str]:
    """The child's work: compile, find Triton's cache entry, add the post-allocation module."""
    from wgpsim.frontend.compile import compile_for

    request = CompileRequest(**payload)
    fn = _function(request)
    signature, constexprs = _arguments(fn, request)
    try:
        compiled = compile_for(
            fn,
            signature,
            constexprs,
            num_warps=request.num_warps,
            num_stages=request.num_stages,
            target=request.target,
        )
    except ModuleError:
        raise
    except Exception as err:  # Triton's own compile errors: the first line says where,
        lines = str(err).strip().splitlines() or [""]  # a CompilationError's last line why
        why = lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1].strip()}"
        raise ModuleError(f"triton.compile failed: {type(err).__name__}: {why}") from None
    folder = _entry_folder(Path(request.cache_dir), compiled.name, compiled.ttgir)
    if compiled.post_alloc is not None:
        (folder / f"{compiled.name}.post.mlir").write_text(compiled.post_alloc)
    return {"name": compiled.name, "folder": str(folder)}


def _entry_folder(cache_dir: Path, name: str, ttgir: str) -> Path:
    """The hash folder Triton wrote this compile to: the newest holding the same TTGIR."""
    same = [p for p in cache_dir.glob(f"*/{name}.ttgir") if p.read_text(errors="replace") == ttgir]
    if not same:
        raise ModuleError(f"Triton wrote no cache entry for {name} under {cache_dir}")
    return max(same, key=lambda p: p.stat().st_mtime).parent


def main(argv: list[str]) -> int:
    """``python -m wgpsim.frontend.compile_file JSON``: print ``{"name", "folder"}``."""
    try:
        done = _child(json.loads(argv[0]))
    except ModuleError as err:
        print(_ERROR + str(err).replace("\n", " "), file=sys.stderr)
        return 3
    except SyntaxError as err:
        print(f"{_ERROR}{err.filename}:{err.lineno}: {err.msg}", file=sys.stderr)
        return 3
    print(json.dumps(done))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
