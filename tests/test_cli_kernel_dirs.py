"""``wgpsim kernel DIR`` on a Triton cache root or dump root (hash folders each holding one
compile), as a user runs it: the listing, ``--name``, one kernel reported directly, the walk's
caps and symlink loops, and the one-line answers (a ``.py``, compile flags without a target).

The fake roots are built from the shipped gfx1250 compiles (``examples/kernels/``), copied into
hash folders as Triton lays its cache out."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wgpsim.cli import main
from wgpsim.errors import ModuleError
from wgpsim.frontend.cache_index import find_kernels
from wgpsim.frontend.sources import read_kernel

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "kernels"


def _entry(root: Path, example: str, folder: str, *, files=(".ttgir", ".json", ".amdgcn")) -> Path:
    """Copy one shipped compile into ``root/folder`` (only the files of ``files``)."""
    target = root / folder
    target.mkdir(parents=True)
    for p in (EXAMPLES / example).iterdir():
        if p.name.endswith(files):
            shutil.copy(p, target / p.name)
    return target


@pytest.fixture
def cache(tmp_path):
    """A cache root: matmul, transpose, and the GEMM compiled twice (standard, partitioned)."""
    root = tmp_path / "cache"
    _entry(root, "matmul", "JZ4QX7")
    _entry(root, "transpose", "AB12CD")
    _entry(root, "gemm_tdm_standard", "STD001")
    _entry(root, "gemm_tdm_partitioned", "PRT002")
    (root / "LAUNCHER").mkdir()  # Triton's launcher folders hold no module
    (root / "LAUNCHER" / "hip_utils.so").write_bytes(b"\0")
    return root


def _wgpsim(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cache_root_lists_its_kernels_and_how_to_pick(cache, capsys):
    code, out, err = _wgpsim(capsys, "kernel", cache)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"{cache}: 4 kernels"
    head = ["name", "folder", "warps", "stages", "LDS", "bytes", "target", "hash"]
    assert lines[1].split() == head
    rows = [line.split()[:6] for line in lines[2:6]]
    # warps, stages and LDS bytes as Triton 3.9.0 wrote them in each compile's NAME.json
    assert ["matmul", "JZ4QX7", "4", "2", "71632", "hip:gfx1250"] in rows
    assert ["gemm_tdm", "STD001", "4", "2", "73680", "hip:gfx1250"] in rows
    assert ["gemm_tdm", "PRT002", "4", "2", "102384", "hip:gfx1250"] in rows
    assert ["transpose", "AB12CD", "4", "2", "8192", "hip:gfx1250"] in rows
    assert lines[-1].startswith("pick one:") and "--name NAME" in lines[-1]


def test_two_compiles_of_one_kernel_differ_in_stages_and_hash(tmp_path, capsys):
    """Issue 25: two compiles of one name (other num_stages, other constexprs) were two rows
    alike but for the folder; the listing shows NAME.json's num_stages and hash."""
    root = tmp_path / "cache"
    for folder, stages, digest in (
        ("AAAA", 2, "d7522963912227bb"),
        ("BBBB", 3, "5ab5bdc094853088"),
    ):
        meta_path = _entry(root, "matmul", folder) / "matmul.json"
        meta = json.loads(meta_path.read_text())
        meta_path.write_text(json.dumps({**meta, "num_stages": stages, "hash": digest}))
    code, out, _ = _wgpsim(capsys, "kernel", root)
    assert code == 0
    rows = {line.split()[1]: line.split() for line in out.splitlines()[2:4]}
    assert rows["AAAA"][3] == "2" and rows["AAAA"][-1] == "d752296391"
    assert rows["BBBB"][3] == "3" and rows["BBBB"][-1] == "5ab5bdc094"


def test_cache_root_listing_as_json(cache, capsys):
    code, out, _ = _wgpsim(capsys, "kernel", cache, "--json")
    payload = json.loads(out)
    assert code == 0 and payload["truncated"] is False
    assert {(k["name"], k["folder"]) for k in payload["kernels"]} == {
        ("matmul", "JZ4QX7"), ("transpose", "AB12CD"), ("gemm_tdm", "STD001"),
        ("gemm_tdm", "PRT002"),
    }  # fmt: skip


def test_name_picks_the_kernel_and_reports_it(cache, capsys):
    code, out, _ = _wgpsim(capsys, "kernel", cache, "--name", "matmul")
    assert code == 0
    first, second = out.splitlines()[:2]
    assert first.startswith(f"matmul in {cache / 'JZ4QX7'}")
    assert second.startswith("kernel matmul: 4 warps") and "ttg.shared 71632 B" in second
    # the report of the entry itself, the same kernel reached the usual way
    assert main(["kernel", str(cache / "JZ4QX7")]) == 0
    assert capsys.readouterr().out.splitlines()[0] == second


def test_name_held_by_several_folders_lists_them(cache, capsys):
    code, out, _ = _wgpsim(capsys, "kernel", cache, "--name", "gemm_tdm")
    assert code == 0
    assert out.splitlines()[0] == f"{cache}: 2 kernels named gemm_tdm"
    assert "STD001" in out and "PRT002" in out and "matmul" not in out
    assert out.splitlines()[-1] == f"pick one by its folder: wgpsim kernel {cache}/FOLDER"


def test_unknown_name_is_one_line_with_a_guess(cache, capsys):
    code, out, err = _wgpsim(capsys, "kernel", cache, "--name", "matmull")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1
    assert "no kernel named 'matmull'" in err and "did you mean 'matmul'" in err


def test_root_with_one_kernel_is_reported_directly(tmp_path, capsys):
    _entry(tmp_path / "dump", "transpose", "H" * 52)
    code, out, _ = _wgpsim(capsys, "kernel", tmp_path / "dump")
    assert code == 0
    assert out.splitlines()[1].startswith("kernel transpose: 4 warps")
    assert "ttg.shared 8192 B" in out.splitlines()[1]


def test_dump_root_without_metadata_reads_the_module_attributes(tmp_path, capsys):
    """A TRITON_DUMP_DIR folder holds the stages but no NAME.json: warps and target come from
    the module's attributes, LDS bytes from the post-allocation module when there is one."""
    _entry(tmp_path, "matmul", "D1", files=(".ttgir", ".amdgcn"))
    _entry(tmp_path, "column_sum", "D2", files=(".ttgir", ".post.mlir"))
    code, out, _ = _wgpsim(capsys, "kernel", tmp_path)
    rows = [line.split() for line in out.splitlines()[2:4]]
    assert code == 0
    assert ["matmul", "D1", "4", "-", "-", "hip:gfx1250", "-"] in rows  # stages, hash: only in json
    shared = json.loads((EXAMPLES / "column_sum" / "column_sum.json").read_text())["shared"]
    assert ["column_sum", "D2", "4", "-", str(shared), "hip:gfx1250", "-"] in rows


def test_symlink_loop_ends_and_lists_each_kernel_once(cache, capsys):
    (cache / "JZ4QX7" / "up").symlink_to(cache)
    (cache / "again").symlink_to(cache / "AB12CD")
    index = find_kernels(cache)
    assert sorted(e.name for e in index.entries) == ["gemm_tdm", "gemm_tdm", "matmul", "transpose"]
    code, out, _ = _wgpsim(capsys, "kernel", cache)
    assert code == 0 and out.splitlines()[0] == f"{cache}: 4 kernels"


def test_walk_caps_depth_and_folders(tmp_path, capsys):
    deep = tmp_path / "a" / "b" / "c" / "d" / "e"
    _entry(deep, "matmul", "H1")  # 6 folders below the root: past MAX_DEPTH
    assert find_kernels(tmp_path).entries == ()
    assert find_kernels(tmp_path / "a" / "b").entries[0].name == "matmul"
    for i in range(5):
        _entry(tmp_path / "many", "transpose", f"H{i}")
    capped = find_kernels(tmp_path / "many", max_folders=3)
    assert capped.truncated and len(capped.entries) == 2  # the root and two hash folders


def test_directory_without_kernels_is_one_line(tmp_path, capsys):
    (tmp_path / "empty" / "x").mkdir(parents=True)
    code, _, err = _wgpsim(capsys, "kernel", tmp_path / "empty")
    assert code == 2 and len(err.splitlines()) == 1
    assert "no kernel in this directory" in err and "TRITON_CACHE_DIR" in err


def test_python_api_reads_a_root_by_name(cache):
    kernel = read_kernel(cache, "transpose")
    assert kernel.name == "transpose" and kernel.ttg_shared == 8192
    with pytest.raises(ModuleError, match="4 kernels .*pick one with --name"):
        read_kernel(cache)


def test_python_file_without_function_says_which_command(tmp_path, capsys):
    source = tmp_path / "my_gemm.py"
    source.write_text("import triton\n")
    code, out, err = _wgpsim(capsys, "kernel", source)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1
    assert f"wgpsim kernel {source}:FUNCTION" in err and "wgpsim compile" in err


def test_compile_flags_need_a_function(cache, capsys):
    code, _, err = _wgpsim(capsys, "kernel", cache, "--warps", "8")
    assert code == 2 and "--warps: only with FILE.py:FUNCTION" in err


def test_listing_as_a_user_runs_it(cache):
    """The console script in a subprocess: the list on stdout, nothing on stderr, exit 0."""
    proc = subprocess.run(
        [sys.executable, "-m", "wgpsim", "kernel", str(cache)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stderr == ""
    assert "4 kernels" in proc.stdout and "pick one" in proc.stdout


def test_a_kernel_compiled_for_another_target_is_noted(tmp_path, capsys):
    """A cache filled on another GPU holds its kernels: the report says the target differs."""
    folder = _entry(tmp_path, "transpose", "H1")
    meta = json.loads((folder / "transpose.json").read_text())
    meta["target"] = {"backend": "hip", "arch": "gfx90a", "warp_size": 64}  # Triton's form
    (folder / "transpose.json").write_text(json.dumps(meta))
    code, out, err = _wgpsim(capsys, "kernel", tmp_path)
    assert code == 0 and out.splitlines()[1].startswith("kernel transpose")
    (note,) = err.splitlines()  # gfx90a (MI200) has no hardware file
    assert note.startswith("wgpsim: note: transpose was compiled for hip:gfx90a; wgpsim models ")
    assert "hip:gfx1250" in note and "hip:gfx950" in note
    assert "wgpsim compile FILE.py:FUNCTION --target NAME compiles for one of them" in note
