"""``wgpsim compile FILE.py:FUNCTION`` and ``wgpsim kernel FILE.py:FUNCTION`` as a user runs
them (the console script in a subprocess): a real Triton 3.9.0 compile for gfx1250 on the CPU
into a cache entry, then its report; the one-line answers to a missing type, a bad file, a
missing triton extra. The kernel is written here: a small ``tl.dot`` whose operands go through
LDS (Triton gives them 4,096 bytes: ``shared`` in its NAME.json)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wgpsim.cli import main

ROOT = Path(__file__).resolve().parents[1]
KERNEL = """\
import triton
import triton.language as tl


@triton.jit
def small_dot(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr = 32):
    m = tl.arange(0, BM)
    n = tl.arange(0, BN)
    k = tl.arange(0, BK)
    a = tl.load(a_ptr + m[:, None] * BK + k[None, :])
    b = tl.load(b_ptr + k[:, None] * BN + n[None, :])
    tl.store(c_ptr + m[:, None] * BN + n[None, :], tl.dot(a, b))
"""
FLAGS = ["--signature", "a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp32"]
FLAGS += ["--constexpr", "BM=64", "--constexpr", "BN=64", "--warps", "4"]


def _wgpsim(*argv, env=None, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "wgpsim", *map(str, argv)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ, **(env or {})),
        timeout=600,
    )


@pytest.fixture
def source(tmp_path) -> Path:
    path = tmp_path / "my_dot.py"
    path.write_text(KERNEL)
    return path


@pytest.mark.triton
def test_compile_writes_a_cache_entry_and_names_the_next_command(source, tmp_path):
    pytest.importorskip("triton")
    cache = tmp_path / "cache"
    done = _wgpsim("compile", f"{source}:small_dot", *FLAGS, "--out", cache)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    folder = Path(lines[0].split(": ", 1)[1])
    assert lines[0] == f"compiled small_dot for gfx1250: {folder}"
    assert folder.parent == cache
    assert lines[-1] == f"next: wgpsim kernel {folder}"
    names = {p.name for p in folder.iterdir()}
    assert {"small_dot.ttgir", "small_dot.amdgcn", "small_dot.json", "small_dot.post.mlir"} <= names
    meta = json.loads((folder / "small_dot.json").read_text())  # Triton's own metadata
    assert meta["num_warps"] == 4 and meta["target"]["arch"] == "gfx1250"
    assert "ttg.shared = 4096" in (folder / "small_dot.post.mlir").read_text()
    # the next command, and the cache root itself (one kernel: reported directly)
    for path in (folder, cache):
        report = _wgpsim("kernel", path)
        assert report.returncode == 0, report.stderr
        head = next(ln for ln in report.stdout.splitlines() if ln.startswith("kernel "))
        assert head.startswith("kernel small_dot: 4 warps, LDS 4096 B (wgpsim) vs ttg.shared 4096")
        assert "my_dot.py:10" in report.stdout and "my_dot.py:11" in report.stdout  # a, b
    # again, for a script: Triton's cache hit, the same entry; a relative --out is printed
    # absolute (issue 25: the JSON's cache_dir was relative, useless from another directory)
    again = _wgpsim(
        "compile", f"{source}:small_dot", *FLAGS, "--out", "cache", "--json", cwd=tmp_path
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == {
        "name": "small_dot",
        "folder": str(folder),
        "cache_dir": str(cache),
        "next": f"wgpsim kernel {folder}",
    }


@pytest.mark.triton
def test_kernel_compiles_and_reports_in_one_command(source, tmp_path):
    pytest.importorskip("triton")
    cache = tmp_path / "triton_cache"
    done = _wgpsim("kernel", f"{source}:small_dot", *FLAGS, "--warps", "8",
                   env={"TRITON_CACHE_DIR": str(cache)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("kernel small_dot: 8 warps")
    assert "ds_load" in done.stdout
    assert f"compiled small_dot into {cache}/" in done.stderr  # $TRITON_CACHE_DIR, no --out
    assert "next time: wgpsim kernel" in done.stderr


@pytest.mark.triton
def test_untyped_arguments_and_unset_constexprs_are_one_line(source):
    pytest.importorskip("triton")
    done = _wgpsim("compile", f"{source}:small_dot", "--signature", "a_ptr=*fp16", "--out",
                   source.parent / "c")  # fmt: skip
    assert done.returncode == 2
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("wgpsim: error:")]
    assert len(errors) == 1 and "Traceback" not in done.stderr
    assert "no type for b_ptr, c_ptr (--signature 'b_ptr=TYPE,c_ptr=TYPE'" in errors[0]
    assert "no value for constexpr BM, BN (--constexpr BM=VALUE --constexpr BN=VALUE)" in errors[0]


@pytest.mark.triton
def test_unknown_function_and_triton_errors_are_one_line(source):
    pytest.importorskip("triton")
    out = ["--out", source.parent / "c"]
    done = _wgpsim("compile", f"{source}:small", *FLAGS, *out)
    assert done.returncode == 2
    assert "no function 'small' in my_dot.py (its jit functions: small_dot)" in done.stderr
    bad = ["--signature", "a_ptr=*fp16,b_ptr=*fp16,c_ptr=*float33", *FLAGS[2:]]
    done = _wgpsim("compile", f"{source}:small_dot", *bad, *out)
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("wgpsim: error:")]
    assert done.returncode == 2 and len(errors) == 1 and "Traceback" not in done.stderr


@pytest.mark.triton
def test_triton_errors_say_why_in_their_one_line(source):
    """A type Triton does not know names it and the valid ones (Triton raised KeyError: 'f16');
    a CompilationError gives its reason, not only its first line 'at 1:8:'."""
    pytest.importorskip("triton")
    out = ["--out", source.parent / "c"]
    bad = ["--signature", "a_ptr=*f16,b_ptr=*fp16,c_ptr=*fp32", *FLAGS[2:]]
    done = _wgpsim("compile", f"{source}:small_dot", *bad, *out)
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("wgpsim: error:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr
    assert "unknown type '*f16' for a_ptr" in errors[0] and "*fp16" in errors[0]
    odd = ["--signature", FLAGS[1], "--constexpr", "BM=48", "--constexpr", "BN=64"]
    done = _wgpsim("compile", f"{source}:small_dot", *odd, *out)
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("wgpsim: error:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr
    assert "arange's range must be a power of 2" in errors[0]


def test_without_the_triton_extra_one_line_names_it(source, monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "triton" else real(name, *a)
    )
    assert main(["compile", f"{source}:small_dot", *FLAGS, "--out", str(source.parent)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (
        "wgpsim: error: compiling needs the triton extra: "
        "python -m pip install -e '.[triton]' (Triton 3.9.0)"
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--signature", "a_ptr"], "--signature: 'a_ptr' is not NAME=TYPE"),
        (["--constexpr", "BM"], "--constexpr: 'BM' is not NAME=VALUE"),
        (["--warps", "3"], "--warps 3: a power of two in 1..32"),
    ],
)
def test_bad_flags_are_one_line(source, flags, message, capsys):
    assert main(["compile", f"{source}:small_dot", *flags]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.triton
def test_usage_compile_example_gives_the_shipped_compile(tmp_path):
    """docs/USAGE.md's `wgpsim compile examples/kernels/kernels.py:matmul ...`, run as written
    (with --out), gives the LDS bytes of the shipped compile (examples/kernels/matmul, written
    by regenerate.py through the Python route) and a report that says so."""
    pytest.importorskip("triton")
    import re
    import shlex

    usage = (ROOT / "docs" / "USAGE.md").read_text()
    block = next(
        b for b in re.findall(r"```bash\n(.*?)```", usage, flags=re.S) if "wgpsim compile" in b
    )
    argv = shlex.split(block.replace("\\\n", " "))
    assert argv[:2] == ["wgpsim", "compile"]
    done = _wgpsim(*argv[1:], "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.splitlines()[0].split(": ", 1)[1])
    shipped = json.loads((ROOT / "examples/kernels/matmul/matmul.json").read_text())["shared"]
    assert json.loads((folder / "matmul.json").read_text())["shared"] == shipped == 71632
    report = _wgpsim("kernel", folder)
    assert report.stdout.startswith(
        f"kernel matmul: 4 warps, LDS {shipped} B (wgpsim) vs ttg.shared {shipped} B"
    )
