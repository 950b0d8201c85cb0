"""Fuzz the YAML a user writes: hardware files (``--hw``), hardware ``--set`` overrides,
experiment configs and their ``--set`` overrides, each through the CLI verb that reads it."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from cli_runner import fuzz
from conftest import examples
from hypothesis import example, given
from hypothesis import strategies as st
from strategies_fuzz import SCALARS, VALUES, edited, edited_text, leaf_paths

from wgpsim.packaged import hardware_path

HW_TEXT = hardware_path().read_text()
HW = yaml.safe_load(HW_TEXT)
HW_KEYS = [".".join(map(str, p)) for p in leaf_paths(HW)]
SHARED = "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0, 1]}>"
DST = (
    "#ttg.linear<{register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], "
    "[16, 0]], warp = [], block = []}>"
)
LOWER = ["lower", "--shared", SHARED, "--dst", DST, "--shape", "32x8", "--dtype", "bf16"]
"""The README's toy local_load: reads the hardware (the LDS size) and costs a millisecond."""

LDS = {  # the microbenchmark at its smallest: two bursts, one candidate (a run takes ~1 s)
    "kind": "lds_bandwidth",
    "hardware": str(hardware_path()),
    "warps": 4,
    "dtype": "fp16",
    "instruction": "ds_load_b128",
    "burst_lengths": [1, 2],
    "report_burst": 2,
    "distributed": "#ttg.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], "
    "warpsPerCTA = [4, 1], order = [1, 0]}>",
    "layouts": {"plain": "#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, "
                         "order = [1, 0]}>"},
    "engine": "fast",
    "seed": 0,
}  # fmt: skip
GEMM = yaml.safe_load((Path(__file__).parents[2] / "configs" / "gemm_128x128.yaml").read_text())
GEMM["hardware"] = str(hardware_path())


@pytest.fixture(scope="module")
def workdir():
    path = Path(tempfile.mkdtemp(prefix="wgpsim-fuzz-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _dump(doc) -> str:
    try:
        return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
    except (yaml.YAMLError, ValueError):
        return str(doc)


HW_FILES = st.one_of(
    edited(HW).map(_dump),
    edited_text(HW_TEXT),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.sampled_from(["", "[]", "name: x", "a: &a [*a]", "- " * 300, "{" * 100]),
)


@examples(300)
@given(HW_FILES)
@example("timing:\n  lds_latency: 1000000000\n")
@example(HW_TEXT.replace("queue_depth: 4", "queue_depth: 999999999"))
@example(HW_TEXT.replace("lds_latency: 56", "lds_latency: " + "9" * 5000))
def test_hardware_files(workdir, text):
    path = workdir / "hw.yaml"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    fuzz(*LOWER, "--hw", path, "--json")


SET_KEYS = st.sampled_from(HW_KEYS) | st.text(alphabet="abcdefgilmnorstuy._", max_size=20)
SET_VALUES = st.one_of(
    VALUES.map(lambda v: yaml.safe_dump(v, default_flow_style=True).strip()),
    st.text(max_size=20),
    st.sampled_from(["#ttg.blocked<{}>", "# a comment", "[1, 2", "9" * 5000, "1e9", "-0"]),
)


@examples(400)
@given(st.lists(st.tuples(SET_KEYS, SET_VALUES), min_size=1, max_size=3))
@example([("timing.lds_latency", "1000000000")])
@example([("timing.queue_depth", "1000000000")])
def test_hardware_overrides(items):
    sets = [arg for key, value in items for arg in ("--set", f"{key}={value}")]
    fuzz(*LOWER, *sets, "--json")


def _experiment(doc) -> st.SearchStrategy[str]:
    return st.one_of(edited(doc).map(_dump), edited_text(_dump(doc)))


@examples(25)
@given(_experiment(LDS) | _experiment(GEMM))
@example(_dump({**LDS, "kind": ["a"]}))  # a list where a name is expected
@example(_dump({**LDS, "execution": {"scheduler": "tcp://127.0.0.1:8786"}}))
@example(_dump({**LDS, "dtype": "fp32", "burst_lengths": [1, 2]}))  # a fit fails after the sweep
def test_experiment_configs(workdir, text):
    config, out = workdir / "experiment.yaml", workdir / "out"
    config.write_bytes(text.encode("utf-8", "surrogateescape"))
    fuzz("run", config, "--out", out, "--workers", "1", "--json", out=out)


EXPERIMENT_KEYS = st.sampled_from(
    [".".join(map(str, p)) for p in leaf_paths(LDS)]
    + ["timing.lds_latency", "hardware_overrides.timing.queue_depth", "drift", "drift.seeds",
       "execution.workers", "layouts.a/b", "kind"]
) | st.text(alphabet="abdeghilnorstuwy._", max_size=16)  # fmt: skip


@examples(100)
@given(st.lists(st.tuples(EXPERIMENT_KEYS, SET_VALUES | SCALARS.map(str)), min_size=1,
                max_size=3))  # fmt: skip
@example([("distributed", LDS["distributed"])])  # '#' begins a value, not a comment
def test_experiment_overrides(workdir, items):
    config, out = workdir / "lds.yaml", workdir / "out-set"
    config.write_text(_dump(LDS))
    sets = [arg for key, value in items for arg in ("--set", f"{key}={value}")]
    fuzz("run", config, *sets, "--out", out, "--workers", "1", "--json", out=out)
