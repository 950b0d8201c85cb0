"""Find a kernel's TTGIR (and its assembly and metadata) where Triton leaves them.

``read_kernel(path)`` takes

* a ``*.ttgir`` file (Triton's cache, ``TRITON_KERNEL_DUMP``) or an ``*.mlir`` dump (for example
  one taken after ``allocate-shared-memory``, with ``allocation.offset`` and ``ttg.shared``); a
  ``NAME.amdgcn`` and ``NAME.json`` beside it are read too;
* a directory: a Triton cache entry or dump directory holding one kernel's ``*.ttgir`` (``name``
  picks one when there are several), or a cache or dump root whose hash folders hold them
  (`wgpsim.frontend.cache_index`: ``name`` picks the kernel);
* a tritonparse trace (``*.ndjson``): the ``compilation`` events carry the files in
  ``payload.file_content``.

The metadata's ``shared`` stands in for ``ttg.shared`` when the module has none (a cache
``.ttgir`` is dumped before allocation).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from wgpsim.errors import ModuleError, shown
from wgpsim.frontend.cache_index import find_kernels, holds_kernel
from wgpsim.frontend.model import Kernel
from wgpsim.frontend.ttgir import read_ttgir
from wgpsim.frontend.vocabulary import SCRATCH_OPS
from wgpsim.inputs import MAX_TEXT_BYTES, json_value, read_text
from wgpsim.packaged import hardware_fact, target_names

__all__ = ["attach", "merge_offsets", "read_kernel"]

LDS_BYTES: int = hardware_fact("partitions", "lds_bytes")
"""The LDS's bytes (320 KiB): the most a kernel's ``ttg.shared`` or metadata ``shared`` says."""

MAX_TRACE_CHARS = 32 * MAX_TEXT_BYTES
"""Most text a tritonparse trace (each compile's IR, assembly and metadata) is read for:
256 MiB once decompressed, each line at most ``wgpsim.inputs.MAX_TEXT_BYTES``."""


def read_kernel(path: str | Path, name: str | None = None) -> Kernel:
    """The kernel model of a TTGIR file, a cache/dump directory, or a tritonparse trace."""
    path = Path(path)
    if path.is_dir():
        return _from_directory(path, name)
    if not path.exists():
        raise FileNotFoundError(2, "no such file or directory", str(path))
    if path.suffix in (".ndjson", ".jsonl") or path.name.endswith(".ndjson.gz"):
        return _from_tritonparse(path, name)
    text = read_text(path, "TTGIR module", ModuleError, lenient=True)  # at most 8 MiB
    kernel = read_ttgir(text, source=str(path))
    stem = path.name.split(".")[0]
    asm = path.with_name(f"{stem}.amdgcn")
    meta = path.with_name(f"{stem}.json")
    return attach(
        kernel,
        read_text(asm, "assembly", ModuleError, lenient=True) if asm.is_file() else None,
        _json(meta) if meta.is_file() else None,
    )


def attach(kernel: Kernel, assembly: str | None, metadata: dict[str, Any] | None) -> Kernel:
    """The kernel with its assembly and metadata (``shared`` fills a missing ``ttg.shared``)."""
    meta = dict(metadata or {})
    shared = kernel.ttg_shared
    if shared is not None:
        _check_shared(shared, f"{kernel.source}: module attribute 'ttg.shared'")
    if shared is None and isinstance(meta.get("shared"), int):
        shared = _check_shared(meta["shared"], f"{kernel.source}: metadata 'shared'")
        meta["ttg_shared_from"] = "metadata"
    elif shared is not None:
        meta["ttg_shared_from"] = "module"
    items = tuple((k, v) for k, v in meta.items() if isinstance(v, (int, str, float, bool)))
    return replace(kernel, assembly=assembly, ttg_shared=shared, metadata=items)


def _check_shared(value: int, what: str) -> int:
    """``value``, the LDS bytes a kernel allocates, if within 0..the LDS's bytes."""
    if isinstance(value, bool) or not 0 <= value <= LDS_BYTES:
        raise ModuleError(f"{what} {shown(value)} is out of range (valid: 0..{LDS_BYTES}, the LDS)")
    return value


def merge_offsets(kernel: Kernel, allocated: Kernel) -> Kernel:
    """``kernel`` (read before allocation) with the offsets and ``ttg.shared`` of the same
    kernel read after Triton's ``allocate-shared-memory`` (its explicit buffers, in order)."""
    mine = [b for b in kernel.buffers if b.kind == "explicit"]
    theirs = [b for b in allocated.buffers if b.kind == "explicit"]
    same = len(mine) == len(theirs) and all(
        a.memdesc == b.memdesc for a, b in zip(mine, theirs, strict=True)
    )
    if not same:
        raise ModuleError(
            f"{allocated.source}: its local_allocs ({len(theirs)}) do not match those of "
            f"{kernel.source} ({len(mine)}): not the same kernel"
        )
    offsets = {a.name: b.offsets for a, b in zip(mine, theirs, strict=True)}
    explicit = tuple(replace(b, offsets=offsets[b.name]) for b in mine)
    # scratch: the ops Triton gave a buffer, matched to this module's ops by op and location
    candidates = [b for b in kernel.buffers if b.kind == "scratch"]
    scratch = []
    for b in (b for b in allocated.buffers if b.kind == "scratch"):
        match = next((c for c in candidates if (c.op, c.loc) == (b.op, b.loc)), None)
        if match is None:
            raise ModuleError(
                f"{allocated.source}:{b.line}: {b.op} has a scratch buffer, but "
                f"{kernel.source} has no such op at {b.loc}: not the same kernel"
            )
        candidates.remove(match)
        scratch.append(replace(match, offsets=b.offsets, size=b.size))
    meta = dict(kernel.metadata) | {"ttg_shared_from": "module"}
    not_modelled = tuple(n for n in kernel.not_modelled if n.op not in SCRATCH_OPS)
    not_modelled += tuple(n for n in allocated.not_modelled if n.op in SCRATCH_OPS)
    return replace(
        kernel,
        buffers=explicit + tuple(scratch),
        not_modelled=not_modelled,
        ttg_shared=allocated.ttg_shared,
        metadata=tuple(meta.items()),
        allocated=True,
    )


def _json(path: Path) -> dict[str, Any]:
    data = json_value(read_text(path, "kernel metadata file", ModuleError), str(path), ModuleError)
    return data if isinstance(data, dict) else {}


def _from_directory(path: Path, name: str | None) -> Kernel:
    files = sorted(p for p in path.iterdir() if p.suffix in (".ttgir",))
    files += sorted(p for p in path.iterdir() if p.name.endswith((".post.mlir", ".alloc.mlir")))
    if name is not None:
        files = [p for p in files if p.name.split(".")[0] == name]
    ttgir = [p for p in files if p.suffix == ".ttgir"]
    post = [p for p in files if p.name.endswith((".post.mlir", ".alloc.mlir"))]
    stems = sorted({p.name.split(".")[0] for p in ttgir + post})
    if not stems and not holds_kernel(path):  # a cache or dump root: its hash folders
        entry = find_kernels(path).one(name)
        return read_kernel(entry.folder, entry.name)
    if not stems:
        what = f" named {name!r}" if name else ""
        raise ModuleError(
            f"{path}: no *.ttgir{what} in this directory (a Triton cache entry or "
            "TRITON_KERNEL_DUMP directory holds one per kernel)"
        )
    if len(stems) > 1:
        raise ModuleError(
            f"{path}: {len(stems)} kernels ({', '.join(stems)}): pick one with --name"
        )
    if ttgir:
        kernel = read_kernel(ttgir[0])
        if post:
            kernel = merge_offsets(kernel, read_kernel(post[0]))
        return kernel
    return read_kernel(post[0])


def _compilation(event: Any, found: list, path: Path, no: int) -> None:
    """Add ``(kernel name, payload)`` of a compilation event to ``found``; other events are
    skipped, a compilation whose payload, metadata or file_content is not a mapping is an
    error naming its line."""
    if not isinstance(event, dict) or event.get("event_type") != "compilation":
        return
    payload = event.get("payload") or {}
    parts = {"payload": payload}
    if isinstance(payload, dict):
        parts |= {k: payload.get(k) or {} for k in ("metadata", "file_content")}
    for part, value in parts.items():
        if not isinstance(value, dict):
            raise ModuleError(f"{path}:{no}: the compilation's {part} is not a mapping")
    found.append((str(parts["metadata"].get("name", "?")), payload))


def _from_tritonparse(path: Path, name: str | None) -> Kernel:
    import gzip

    opener = gzip.open if path.name.endswith(".gz") else open
    found: list[tuple[str, dict[str, Any]]] = []
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            read = 0
            for no, line in enumerate(iter(lambda: fh.readline(MAX_TEXT_BYTES + 1), ""), 1):
                read += len(line)
                if len(line) > MAX_TEXT_BYTES or read > MAX_TRACE_CHARS:
                    raise ModuleError(
                        f"{path}:{no}: a line over {MAX_TEXT_BYTES >> 20} MiB or a trace over "
                        f"{MAX_TRACE_CHARS >> 20} MiB: too big for a tritonparse trace"
                    )
                if line.strip():
                    _compilation(json_value(line, f"{path}:{no}", ModuleError), found, path, no)
    except UnicodeDecodeError:
        raise ModuleError(f"{path}: not UTF-8 text (a tritonparse trace is JSON lines)") from None
    except (gzip.BadGzipFile, EOFError) as err:  # a damaged .gz
        raise ModuleError(f"{path}: not a readable gzip file ({err})") from None
    if name is not None:
        found = [f for f in found if f[0] == name]
    if not found:
        raise ModuleError(
            f"{path}: no compilation event{f' of {name!r}' if name else ''} in "
            "this tritonparse trace"
        )
    names = sorted({n for n, _ in found})
    if len(names) > 1:
        raise ModuleError(f"{path}: compilations of {', '.join(names)}: pick one with --name")
    kname, payload = found[-1]
    files = payload.get("file_content") or {}
    text = {str(k): v for k, v in files.items() if isinstance(v, str)}
    ttgir = next((v for k, v in text.items() if k.endswith(".ttgir")), None)
    if ttgir is None:
        raise ModuleError(f"{path}: the compilation of {kname} carries no .ttgir in file_content")
    asm = next((v for k, v in text.items() if k.endswith(".amdgcn")), None)
    meta = payload.get("metadata") or {}
    target = meta.get("target") or {}
    if isinstance(target, dict) and target.get("backend") not in (None, "hip"):
        raise ModuleError(
            f"{path}: {kname} was compiled for {target.get('backend')}; wgpsim models "
            f"{target_names()}"
        )
    return attach(read_ttgir(ttgir, source=f"{path}:{kname}.ttgir"), asm, meta)
