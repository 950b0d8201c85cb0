"""``wgpsim diff`` on the AMD blog's Part II GEMM (real Triton 3.9.0 gfx1250 compiles of
examples/kernels/: the standard layouts and the partitioned ones): the partition stalls move,
the LDS bytes change by what Triton's ``ttg.shared`` says, ``--fail-on`` exits 1 in the
regression direction (partitioned -> standard) and 0 the other way, bad input is one line and
exit 2, and two cache roots are matched by kernel name."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wgpsim.cli import main
from wgpsim.kernel.figures import TOTALS

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kernels"
STD, PART = str(EXAMPLES / "gemm_tdm_standard"), str(EXAMPLES / "gemm_tdm_partitioned")
RULES = ["--fail-on", "partition_stalls>+0", "--fail-on", "exposed>+5%"]


def _shared(folder: str) -> int:
    """Triton's own LDS bytes of a compile (its metadata)."""
    return json.loads((Path(folder) / "gemm_tdm.json").read_text())["shared"]


@pytest.fixture(scope="module")
def regression():
    """partitioned -> standard, JSON, with the thresholds (exit code, payload)."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["diff", PART, STD, "--json", *RULES])
    return code, json.loads(out.getvalue())


def test_partition_stalls_move_and_thresholds_fail_in_the_regression_direction(regression):
    code, doc = regression
    assert code == 1
    (k,) = doc["kernels"]
    stalls = k["totals"]["partition_stalls"]
    assert stalls["old"] == 0 < stalls["new"]  # the partitioned layouts remove them (the blog)
    assert k["totals"]["lds_bytes"]["change"] == _shared(STD) - _shared(PART)
    loads = [r for r in k["ops"] if r["key"].endswith("local_load")]
    assert len(loads) == 4 and all(r["status"] == "changed" for r in loads)
    for r in loads:
        assert (
            r["figures"]["partition_stalls"]["old"] == 0 < r["figures"]["partition_stalls"]["new"]
        )
        assert r["figures"]["cycles"]["change"] > 0
    assert k["totals"]["exposed"]["new"] > 1.05 * k["totals"]["exposed"]["old"]
    assert [line.split(" crosses ")[1] for line in doc["regressions"]] == [
        "partition_stalls>+0",
        "exposed>+5%",
    ]


def test_the_improvement_direction_exits_0(capsys):
    assert main(["diff", STD, PART, "--no-loop", "--fail-on", "partition_stalls>+0"]) == 0
    out = capsys.readouterr().out
    assert "no regression under partition_stalls>+0" in out
    assert "REGRESSION" not in out
    row = re.search(r"^partition_stalls\s+(\d+)\s+0\s+-(\d+)\s", out, re.M)  # old, new, change
    assert row and int(row[1]) == int(row[2]) > 0


@pytest.mark.parametrize(
    "rule", ["exposed>>5", "exposed>5%%", "exposd>+5%", "exposed=5", "exposed>+five"]
)
def test_a_bad_fail_on_is_one_line_and_exit_2(rule, capsys):
    assert main(["diff", STD, PART, "--fail-on", rule]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--fail-on" in err


def test_a_kernel_against_a_root_is_exit_2(capsys):
    assert main(["diff", STD, str(EXAMPLES)]) == 2
    assert "compare like with like" in capsys.readouterr().err


def test_a_missing_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert main(["diff", STD, str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nowhere: no such file or directory" in err[0]


def test_an_unreadable_kernel_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "broken.ttgir"
    bad.write_text("module {\n")
    assert main(["diff", STD, str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "broken.ttgir" in err[0]


def test_two_cache_roots_are_matched_by_kernel_name(tmp_path, capsys):
    for side, names in (("a", ("matmul", "transpose", "gemm_tdm_standard")),
                        ("b", ("matmul", "column_sum", "gemm_tdm_partitioned"))):  # fmt: skip
        for n in names:
            shutil.copytree(EXAMPLES / n, tmp_path / side / f"HASH_{n}")
    (tmp_path / "b" / "HASH_bad").mkdir()
    (tmp_path / "b" / "HASH_bad" / "transpose.ttgir").write_text("not mlir")
    args = ["diff", str(tmp_path / "a"), str(tmp_path / "b"), "--no-loop", "--json"]
    assert main([*args, "--fail-on", "lds_bytes>+0"]) == 1  # gemm_tdm grew (partitioned)
    doc = json.loads(capsys.readouterr().out)
    assert sorted(k["kernel"] for k in doc["kernels"]) == ["gemm_tdm", "matmul"]
    assert ["column_sum", "new"] in doc["only_in"]
    assert len(doc["unreadable"]) == 1 and "HASH_bad" in doc["unreadable"][0][0]
    (mm,) = [k for k in doc["kernels"] if k["kernel"] == "matmul"]
    assert all(r["status"] == "same" for r in mm["ops"])


@given(st.text(max_size=40))
def test_any_fail_on_text_is_a_threshold_or_one_line_error(text):
    from wgpsim.errors import ConfigError
    from wgpsim.kernel.diff_thresholds import parse_threshold

    try:
        t = parse_threshold(text)
    except ConfigError as err:
        assert len(str(err).splitlines()) == 1  # the text is quoted with repr()
        return
    assert t.metric in TOTALS and t.text == text.strip()


@given(
    st.sampled_from(TOTALS),
    st.sampled_from([">", "<"]),
    st.sampled_from(["", "+", "-"]),
    st.integers(0, 10_000),
    st.booleans(),
    st.integers(0, 5_000),
    st.integers(0, 5_000),
)
def test_written_thresholds_read_as_the_grammar_says(metric, op, sign, n, pct, old, new):
    """docs/CI.md: METRIC OP NUMBER[%]; the change is new - old, or 100 * (new - old) / old."""
    from wgpsim.kernel.diff_thresholds import parse_threshold

    t = parse_threshold(f"{metric}{op}{sign}{n}{'%' if pct else ''}")
    value = -n if sign == "-" else n
    assert (t.metric, t.above, t.value, t.percent) == (metric, op == ">", value, pct)
    if pct and old == 0:
        growth = 0 if new == 0 else float("inf")
    else:
        growth = 100 * (new - old) / old if pct else new - old
    assert t.crossed(old, new) == (growth > value if op == ">" else growth < value)


def test_two_different_kernels_are_named_both_in_the_heading(capsys):
    """`wgpsim diff` of a matmul and another kernel says so; the heading named only the new one."""
    matmul = str(EXAMPLES / "matmul")
    assert main(["diff", matmul, STD, "--no-loop"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("diff matmul -> gemm_tdm (two different kernels): ")
    assert main(["diff", STD, PART, "--no-loop"]) == 0
    assert capsys.readouterr().out.startswith("diff gemm_tdm: ")  # one kernel: its name once


CORPUS = Path(__file__).resolve().parent / "corpus" / "fixtures"


def _loop_bytes(ttgir: Path) -> int:
    """Bytes of the tensors the loop's LDS ops move, read from the compile's TTGIR: the
    local_loads and async copies inside the scf.for (A 128xK and B Kx128 fp16, each copied in
    and loaded)."""
    text = ttgir.read_text()
    body = text[text.index("scf.for") : text.index("scf.yield")].splitlines()
    ops = ("ttg.local_load", "ttg.local_store", "ttg.async_copy_global_to_local")
    shapes = [re.findall(r"(\d+)x(\d+)xf16", ln)[-1] for ln in body if any(o in ln for o in ops)]
    return sum(int(m) * int(n) * 2 for m, n in shapes)


def test_a_loop_doing_other_work_per_iteration_is_flagged(capsys):
    """Issue 25: BLOCK_K 64 -> 16 (real compiles of the corpus) moves a quarter of the tiles
    per iteration, so cycles per iteration are not comparable: the diff says so and gives the
    cycles per KiB moved; two compiles of one tile (standard -> partitioned) are not flagged."""
    old, new = CORPUS / "matmul_fp16", CORPUS / "matmul_fp16_k16"
    assert main(["diff", str(old), str(new), "--json"]) == 0
    (k,) = json.loads(capsys.readouterr().out)["kernels"]
    work = k["loop"]["tensor_bytes"]
    assert (work["old"], work["new"]) == tuple(_loop_bytes(p / "kernel.ttgir") for p in (old, new))
    assert work["old"] == 4 * work["new"]  # BLOCK_K 64 vs 16
    cycles = k["loop"]["cycles_per_iteration"]
    per_kib = k["loop"]["cycles_per_KiB"]
    assert per_kib["new"] == round(1024 * cycles["new"] / work["new"], 2)
    assert k["loop_comparable"] is False and "not comparable" in k["loop_note"]
    assert main(["diff", str(old), str(new)]) == 0
    assert "note: the loop's work per iteration differs" in capsys.readouterr().out
    assert main(["diff", STD, PART]) == 0
    assert "work per iteration differs" not in capsys.readouterr().out
