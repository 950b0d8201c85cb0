"""Fuzz the surfaces of issue 24: calibration CSVs (measurements and counters), manifests, proton
traces, the numbers of a TTGIR module and of its assembly, ``search`` flags and Parquet traces
with extreme warps and delays.

Every input ends in exit 0 or in one line per problem and exit 2 (``cli_runner.fuzz``), within
bounded memory: each runs under ``tracemalloc`` (which counts numpy's buffers too) and may peak
at :data:`PEAK_BYTES`. The ``slow`` campaign at the end runs generated inputs in child processes
under ``RLIMIT_AS``, as a user's shell would.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from cli_runner import fuzz, run_child
from conftest import examples
from hypothesis import given
from hypothesis import strategies as st
from strategies_fuzz import SCALARS, edited

from wgpsim.calibration.probes import catalogue, write_manifest

ROOT = Path(__file__).resolve().parents[2]
PLAIN = ROOT / "tests" / "corpus" / "fixtures" / "lds_bandwidth_plain"
PEAK_BYTES = 1 << 30
"""Most memory (Python objects and numpy buffers) one input may hold at once."""

PROBES = [p.name for p in catalogue()]
NUMBERS = st.one_of(
    st.integers(-3, 70).map(str),
    st.sampled_from(["0", "62", "2.0", "6.5", "-0", "+7", "1e3", "1e30", "inf", "-inf", "nan",
                     "NaN", str(2**48), str(2**48 + 1), str(2**63), str(2**64), "9" * 400,
                     "0x10", "", " ", "x", "1,5", '"3"']),
    st.text(max_size=8),
)  # fmt: skip
"""CSV cells where a whole number belongs."""


@pytest.fixture(scope="module")
def workdir():
    path = Path(tempfile.mkdtemp(prefix="wgpsim-fuzz-surfaces-"))
    write_manifest(catalogue(), path / "manifest.json")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def bounded(*argv: object, out: Path | None = None):
    """:func:`cli_runner.fuzz`, its peak memory held under :data:`PEAK_BYTES`."""
    tracemalloc.start()
    try:
        outcome = fuzz(*argv, out=out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < PEAK_BYTES, f"{peak >> 20} MiB for {argv}"
    return outcome


def _csv_cell(text: str) -> str:
    return text.replace("\n", " ").replace("\r", " ")


# -- calibration CSVs and manifests ------------------------------------------------------------
ROWS = st.lists(
    st.tuples(st.sampled_from(PROBES) | st.text(max_size=6), NUMBERS, NUMBERS), max_size=4
)


@examples(300)
@given(ROWS, st.sampled_from(["compare", "fit"]))
def test_measurements_csv(workdir, rows, verb):
    lines = ["probe,warp,cycles"] + [",".join(map(_csv_cell, row)) for row in rows]
    (workdir / "m.csv").write_text("\n".join(lines) + "\n")
    argv = ["compare"] if verb == "compare" else ["calibrate", "fit"]
    bounded(*argv, workdir / "m.csv", "--manifest", workdir / "manifest.json")


@examples(150)
@given(st.lists(st.tuples(st.sampled_from(["SQ_INSTS_LDS", "SQ_LDS_BANK_CONFLICT", ""]),
                          NUMBERS), max_size=3))  # fmt: skip
def test_counter_csv(workdir, rows):
    (workdir / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    lines = ["Dispatch_Id,Kernel_Name,Counter_Name,Counter_Value"]
    lines += [f"1,banks_s4,{name},{_csv_cell(value)}" for name, value in rows]
    (workdir / "c.csv").write_text("\n".join(lines) + "\n")
    bounded("compare", workdir / "m.csv", "--manifest", workdir / "manifest.json",
            "--counters", workdir / "c.csv")  # fmt: skip


MANIFEST = json.loads(json.dumps({"version": 1, "probes": [
    {"name": "banks_s4", "family": "banks", "warps": 1, "params": {"stride": 4, "loads": 4}}]}))  # fmt: skip


@examples(200)
@given(edited(MANIFEST) | st.sampled_from([MANIFEST, [], None, {"version": True}]))
def test_manifests(workdir, manifest):
    (workdir / "kit").mkdir(exist_ok=True)
    good = json.loads((workdir / "manifest.json").read_text())
    if isinstance(manifest, dict) and isinstance(manifest.get("probes"), list):
        manifest = {**manifest, "probes": manifest["probes"] + good["probes"][1:]}
    (workdir / "kit" / "manifest.json").write_text(json.dumps(manifest))
    (workdir / "kit" / "m.csv").write_text("probe,warp,cycles\nbanks_s4,0,60\n")
    bounded("compare", workdir / "kit" / "m.csv")


EVENT = {
    "ph": "X", "name": "banks_s4", "cat": "banks_s4", "pid": "banks_s4 Core0 CTA0",
    "tid": "warp 0 (line 0)", "ts": 0.0, "dur": 0.062,
}  # fmt: skip
DURS = st.one_of(
    SCALARS, st.sampled_from(["Infinity", "-Infinity", "NaN", "1e400", "9" * 400, "2.81e11"])
)


@examples(200)
@given(st.lists(st.tuples(edited(EVENT), DURS), min_size=1, max_size=3))
def test_proton_traces(workdir, events):
    texts = []
    for event, dur in events:
        text = json.dumps(event)
        if isinstance(dur, str) and "dur" in event:  # JSON's forbidden constants and huge numbers
            text = text.replace(f'"dur": {json.dumps(event["dur"])}', f'"dur": {dur}', 1)
        texts.append(text)
    (workdir / "p.json").write_text('{"traceEvents": [' + ", ".join(texts) + "]}")
    bounded("compare", workdir / "p.json", "--manifest", workdir / "manifest.json")


# -- kernel modules and their assembly ---------------------------------------------------------
ODD_INTS = st.sampled_from([0, 1, 2, 3, 16, 64, 65535, 65536, 2**31 - 1, 2**32, 2**63, 10**30])
TTGIR = (PLAIN / "kernel.ttgir").read_text()
TTGIR_NUMBERS = [m.span() for m in re.finditer(r"(?<![\w.#%])\d+(?![\w.])", TTGIR)]
ASM = (PLAIN / "kernel.amdgcn").read_text()
ASM_NUMBERS = [
    m.span(1) for m in re.finditer(r"(?:offset[01]?:|s_wait_\w+ )(0x[0-9a-f]+|\d+)", ASM)
]


def _replace(text: str, spans: list[tuple[int, int]], edits: list[tuple[int, str]]) -> str:
    for index, value in sorted(edits, key=lambda e: -spans[e[0] % len(spans)][0]):
        start, end = spans[index % len(spans)]
        text = text[:start] + value + text[end:]
    return text


@examples(150)
@given(st.lists(st.tuples(st.integers(0, 10**6), ODD_INTS.map(str)), min_size=1, max_size=3))
def test_ttgir_numbers(workdir, edits):
    """Any number of the module (ttg.num-warps, warpsPerCTA, shapes, kWidth, offsets) made odd."""
    path = workdir / "nums" / "kernel.ttgir"
    path.parent.mkdir(exist_ok=True)
    path.write_text(_replace(TTGIR, TTGIR_NUMBERS, edits))
    bounded("kernel", path, "--json")


@examples(150)
@given(st.lists(st.tuples(st.integers(0, 10**6), ODD_INTS.map(hex) | ODD_INTS.map(str)),
                min_size=1, max_size=3))  # fmt: skip
def test_assembly_numbers(workdir, edits):
    """A DS offset or a wait count of the assembly made odd, through ``--loop-timing``."""
    kernel = workdir / "asm"
    kernel.mkdir(exist_ok=True)
    for name in ("kernel.ttgir", "kernel.alloc.mlir"):
        (kernel / name).write_text((PLAIN / name).read_text())
    (kernel / "kernel.amdgcn").write_text(_replace(ASM, ASM_NUMBERS, edits))
    bounded("kernel", kernel / "kernel.ttgir", "--loop-timing", "--json")


# -- search flags ------------------------------------------------------------------------------
DIMS = st.sampled_from([0, 1, 3, 16, 32, 48, 2048, 4096, 5000, 2**31])


@examples(60)
@given(DIMS, DIMS, st.sampled_from([32, 64, 33, 0]), st.sampled_from([0, 1, 2, 3, 64, 2**40]))
def test_search_flags(workdir, m, n, k, warps):
    if m * n > 32 * 32 and m <= 4096 and n <= 4096 and k in (32, 64) and warps in (1, 2):
        return  # a real search of a large block: minutes, not a fuzz input (refused if huge)
    bounded("search", "--block", f"{m}x{n}x{k}", "--warps", warps, "--top", "1")


# -- Parquet traces: extreme warps and delays --------------------------------------------------
@examples(150)
@given(
    st.lists(
        st.tuples(st.sampled_from([0, 1, 31, 65535, 65536, 2**31 - 1]),
                  st.sampled_from([0, 1, 2**48, 2**48 + 1, 2**62, 2**63 - 1])),
        min_size=1, max_size=4,
    ),
    st.sampled_from([None, "1", "65536", "2147483647", "-1"]),
)  # fmt: skip
def test_parquet_delays(workdir, rows, num_warps):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({
        "warp": pa.array([w for w, _ in rows], pa.int32()),
        "op": pa.array(["delay"] * len(rows)).dictionary_encode(),
        "arg": pa.array([c for _, c in rows], pa.int64()),
        "addr": pa.array([b"\xff" * 128] * len(rows), pa.binary(128)),
    })  # fmt: skip
    meta = {} if num_warps is None else {"wgpsim.num_warps": num_warps}
    pq.write_table(table.replace_schema_metadata(meta), workdir / "d.parquet")
    bounded("replay", workdir / "d.parquet", "--json")


# -- the slow campaign: generated inputs in children under RLIMIT_AS ----------------------------
@pytest.mark.slow
@examples(40)
@given(
    st.one_of(
        st.tuples(st.just("lower"), st.sampled_from([1, 2, 64, 65536, 2**20]),
                  st.sampled_from([1, 8, 65536])),
        st.tuples(st.just("search"), DIMS, DIMS),
        st.tuples(st.just("kernel"), ODD_INTS, ODD_INTS),
    )
)  # fmt: skip
def test_children_end_in_one_line_within_bounded_memory(workdir, case):
    verb, a, b = case
    if verb == "lower":
        dst = ("#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], "
               f"warpsPerCTA = [{a}, {b}], order = [1, 0]}}>")  # fmt: skip
        shared = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
        argv = ["lower", "--shared", shared, "--dst", dst, "--shape", "128x256", "--dtype", "fp16"]
    elif verb == "search":
        if a * b > 32 * 32 and a <= 4096 and b <= 4096:
            a = 5000  # a large real search takes minutes (its refusal is pinned elsewhere)
        argv = ["search", "--block", f"{a}x{b}x32", "--warps", "1", "--top", "1"]
    else:
        text = TTGIR.replace('"ttg.num-warps" = 4', f'"ttg.num-warps" = {a}')
        (workdir / "child.ttgir").write_text(text.replace("4x8192", f"4x{b}"))
        argv = ["kernel", workdir / "child.ttgir", "--json"]
    done = run_child(*argv, cwd=workdir, timeout=120)  # RLIMIT_AS: 4 GiB
    assert done.returncode in (0, 2), done.stderr[-2000:]
    if done.returncode == 2:
        lines = done.stderr.splitlines()
        assert lines and all(line.startswith("wgpsim: error: ") for line in lines), done.stderr
