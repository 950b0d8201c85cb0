"""``wgpsim compile FILE.py:FUNCTION --target gfx950|gfx942`` (and ``wgpsim kernel ... --target``,
``report(..., target=)``): the CPU compile for the MI355X/MI300X chips, held to a direct
``triton.compile`` of the same kernel for the same ``GPUTarget`` (its TTGIR and ``shared``), and
the default compile held to Triton's gfx1250 one. The kernel is test_cli_compile's ``small_dot``:
its operands go through LDS on every target (``ds_read_*`` on gfx9, ``ds_load_*`` on gfx1250)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_compile import FLAGS, KERNEL, _wgpsim

from wgpsim.cli import main

#: A direct ``triton.compile`` of ``small_dot`` for ``GPUTarget("hip", ARCH, WARP)`` (argv: the
#: kernel file, ARCH, WARP); prints its TTGIR then, on the last line, ``shared``.
DIRECT = r"""
import importlib.util, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
spec = importlib.util.spec_from_file_location("my_dot", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32",
       "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
src = ASTSource(mod.small_dot, sig, constexprs={"BM": 64, "BN": 64, "BK": 32})
k = triton.compile(src, target=GPUTarget("hip", sys.argv[2], int(sys.argv[3])),
                   options={"num_warps": 4, "enable_fp_fusion": True})
sys.stdout.write(k.asm["ttgir"] + "\n" + str(k.metadata.shared))
"""


@pytest.fixture
def source(tmp_path) -> Path:
    path = tmp_path / "my_dot.py"
    path.write_text(KERNEL)
    return path


def _direct(source: Path, arch: str, warp: int, tmp_path: Path) -> tuple[str, int]:
    """(TTGIR, shared) of Triton's own compile, in a child with a cache of its own."""
    env = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / f"direct_{arch}"))
    done = subprocess.run(
        [sys.executable, "-c", DIRECT, str(source), arch, str(warp)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    ttgir, _, shared = done.stdout.rpartition("\n")
    return ttgir, int(shared)


@pytest.mark.triton
@pytest.mark.parametrize(
    ("flags", "arch", "warp", "reads"),
    [
        (["--target", "gfx950"], "gfx950", 64, "ds_read_"),
        (["--target", "gfx942"], "gfx942", 64, "ds_read_"),
        ([], "gfx1250", 32, "ds_load_"),  # the default: MI450's compile, unchanged
    ],
)
def test_compile_for_a_target_is_tritons_own_compile(source, tmp_path, flags, arch, warp, reads):
    pytest.importorskip("triton")
    cache = tmp_path / "cache"
    done = _wgpsim("compile", f"{source}:small_dot", *FLAGS, *flags, "--out", cache)
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    folder = Path(first.split(": ", 1)[1])
    assert first == f"compiled small_dot for {arch}: {folder}"
    assert f"compiling {source}:small_dot for {arch} on the CPU" in done.stderr
    ttgir = (folder / "small_dot.ttgir").read_text()
    assert f'ttg.target = "hip:{arch}"' in ttgir
    assert f'"ttg.threads-per-warp" = {warp} : i32' in ttgir
    assert reads in (folder / "small_dot.amdgcn").read_text()
    shared = json.loads((folder / "small_dot.json").read_text())["shared"]
    assert f"ttg.shared = {shared} " in (folder / "small_dot.post.mlir").read_text()
    assert (ttgir, shared) == _direct(source, arch, warp, tmp_path)
    report = _wgpsim("kernel", folder, "--json")
    assert report.returncode == 0, report.stderr
    rep = json.loads(report.stdout)
    assert rep["target"] == f"hip:{arch}"
    assert rep["lds_bytes"] == rep["ttg_shared"] == shared > 0


@pytest.mark.triton
def test_kernel_compiles_for_the_target_and_reports_with_its_file(source, tmp_path):
    pytest.importorskip("triton")
    cache = tmp_path / "cache"
    done = _wgpsim("kernel", f"{source}:small_dot", *FLAGS, "--target", "gfx942", "--out", cache)
    assert done.returncode == 0, done.stderr
    assert f"compiling {source}:small_dot for gfx942 on the CPU" in done.stderr
    (folder,) = (p for p in cache.iterdir() if (p / "small_dot.ttgir").is_file())
    shared = json.loads((folder / "small_dot.json").read_text())["shared"]
    assert done.stdout.startswith(
        f"kernel small_dot: 4 warps, LDS {shared} B (wgpsim) vs ttg.shared {shared} B"
    )
    assert " x ds_read_" in done.stdout and " x ds_load_" not in done.stdout  # gfx942's names


@pytest.mark.triton
def test_report_api_compiles_for_the_target(source):
    pytest.importorskip("triton")
    from wgpsim.kernel import report

    spec = importlib.util.spec_from_file_location("my_dot_api", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32"}
    rep = report(
        module.small_dot, sig, {"BM": 64, "BN": 64, "BK": 32}, num_warps=4, target="gfx950"
    )
    assert rep.to_json()["target"] == "hip:gfx950"
    loads = [op["instructions"] for op in rep.ops if op["op"] == "ttg.local_load"]
    assert loads and all(name.startswith("ds_read") for ins in loads for name in ins)
    assert rep.lds_bytes == rep.ttg_shared > 0


def test_an_unknown_target_is_one_line_and_exit_2(source, capsys):
    for verb in ("compile", "kernel"):
        with pytest.raises(SystemExit) as exit_:
            main([verb, f"{source}:small_dot", *FLAGS, "--target", "gfx90a"])
        assert exit_.value.code == 2
        errors = [ln for ln in capsys.readouterr().err.splitlines() if "error:" in ln]
        assert errors == [
            f"wgpsim {verb}: error: argument --target: unknown target 'gfx90a' "
            "(valid: mi450|gfx1250, gfx942, gfx950)"
        ]
