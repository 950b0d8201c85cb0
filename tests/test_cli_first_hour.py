"""What a newcomer meets in the first hour, as they meet it: ``print(report)`` in Python is the
readable report, a hardware file given as a config says to use ``--hw``, and the usage line a
config's own comment shows runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from wgpsim.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_print_report_is_the_short_readable_report(capsys):
    code = (
        "from wgpsim.kernel import report\n"
        "r = report('examples/kernels/gemm_tdm_standard')\n"
        "print(r)\nprint(repr(r))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text, rep = proc.stdout.rsplit("\n<KernelReport ", 1)
    assert len(proc.stdout) < 2000 and "ops=[" not in proc.stdout  # not the dataclass repr
    assert text.startswith(
        "kernel gemm_tdm: 4 warps, LDS 73,680 B (ttg.shared 73,680 B), "  # Triton's ttg.shared
    )
    assert rep.startswith("kernel gemm_tdm: 4 warps") and rep.count("\n") == 1
    # one line per op with the numbers `wgpsim kernel --json` gives
    assert main(["kernel", "examples/kernels/gemm_tdm_standard", "--json"]) == 0
    ops = json.loads(capsys.readouterr().out)["ops"]
    lines = [ln for ln in text.splitlines() if ln.startswith("  #")]
    assert len(lines) == len(ops)
    for line, op in zip(lines, ops, strict=True):
        assert line.startswith(f"  #{op['index']} {op['loc']} ")
        if op["lds_cycles"] is not None:
            assert f", {op['lds_cycles']} cycles ({op['partition_stall_cycles']} partition" in line


@pytest.mark.parametrize("path", ["configs/mi450.yaml", "wgpsim/hw/mi450.yaml"])
def test_hardware_file_as_config_says_use_hw(path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["run", path]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"wgpsim: error: {path}: this is a hardware file, not an experiment config: use --hw "
        f"(wgpsim run configs/lds_bandwidth.yaml --hw {path})"
    ]


def test_the_configs_own_usage_line_runs(tmp_path, capsys, monkeypatch):
    """configs/lds_bandwidth.yaml's comment shows `--set dtype=fp32`: it runs, and the plain
    layout's steady rate halves, 256 -> 128 B/cycle (as the README says: the bank conflicts)."""
    monkeypatch.chdir(ROOT)
    usage = next(
        line for line in Path("configs/lds_bandwidth.yaml").read_text().splitlines()
        if line.startswith("#   wgpsim run")
    )  # fmt: skip
    sets = re.findall(r"--set (\S+)", usage)
    assert sets == ["dtype=fp32"]
    argv = ["run", "configs/lds_bandwidth.yaml", "--json", "--out", str(tmp_path)]
    assert main(argv + [a for s in sets for a in ("--set", s)]) == 0
    rows = {r["layout"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["plain"]["steady_bytes_per_cycle"] == pytest.approx(128.0)


@pytest.mark.parametrize(
    ("args", "missing"),
    [(["--block", "128x128x64"], "--warps"), (["--warps", "4"], "--block"), ([], "--block")],
)
def test_search_without_a_tile_names_the_missing_flag(args, missing, capsys):
    assert main(["search", *args]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f"missing {missing}" in err[0]
    assert "wgpsim search --block 128x128x64 --warps 4" in err[0]  # an example that runs


@pytest.mark.parametrize("path", ["configs/gemm_128x128.yaml", "configs/mi450.yaml"])
def test_a_yaml_file_given_to_kernel_says_what_kernel_reads(path, capsys, monkeypatch):
    """A config or the hardware file to `wgpsim kernel` was parsed as TTGIR ("expected
    'module attributes {...} {', got '# GEMM layout ...'")."""
    monkeypatch.chdir(ROOT)
    assert main(["kernel", path]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "module attributes" not in err[0]
    assert f"{path}: a YAML file, not a compiled kernel" in err[0]
    assert "wgpsim run CONFIG" in err[0] and "--hw" in err[0]


def _kernel_text(capsys, *argv: str) -> str:
    assert main(["kernel", *map(str, argv)]) == 0
    return capsys.readouterr().out


def test_report_words_say_what_they_mean(capsys):
    """Issue 25's wording: where the offsets come from, what the ds_load_tr column's values
    mean, and why assembly lines may differ while the totals agree (matmul_fp16: Triton 3.9.0's
    assembly puts both operands' loads on the tl.dot line)."""
    text = _kernel_text(capsys, ROOT / "tests" / "corpus" / "fixtures" / "matmul_fp16")
    head = text.splitlines()[0]
    assert head.endswith("offsets are Triton's (the module's allocation.offset)")
    assert "offsets from the" not in text
    legend = next(ln for ln in text.splitlines() if ln.startswith("ds_load_tr (the transposed"))
    assert "valid: used" in legend and "invalid: not possible for this layout pair" in legend
    asm = next(ln for ln in text.splitlines() if ln.startswith("assembly:"))
    assert "on 0 of 2 source lines" in asm and "totals equal" in asm
    assert "LLVM's line table attributes some instructions to another op's source line" in asm
    amdgcn = (ROOT / "tests" / "corpus" / "fixtures" / "matmul_fp16" / "kernel.amdgcn").read_text()
    assert "ds_load_tr16_b128" in amdgcn and "ds_load_b128" in amdgcn


def test_loop_less_kernel_and_barrier_columns_are_named(capsys):
    """A kernel without a loop is "timed once", not "1 iterations"; the barrier columns are
    explained under the warp table; the what-if sentence names each saving."""
    text = _kernel_text(capsys, ROOT / "examples" / "kernels" / "transpose", "--loop-timing")
    assert "1 iterations" not in text
    assert "kernel transpose has no loop: its body timed once x 4 warps" in text
    assert "barrier, no LDS: at a barrier while the others do other work" in text
    sentence = next(ln for ln in text.splitlines() if ln.startswith("LDS is exposed"))
    assert re.fullmatch(
        r"LDS is exposed for [\d.]+ of [\d.]+ cycles per run; separating partitions would "
        r"save [\d.]+ cycles, removing bank conflicts [\d.]+ and infinitely fast LDS [\d.]+ "
        r"\(the bound\)\.",
        sentence,
    )
    one = _kernel_text(capsys, ROOT / "examples" / "kernels" / "matmul", "--iterations", "1")
    assert re.search(r"^loop \.LBB\S+ \(assembly\): 1 iteration x 4 warps", one, re.M)
