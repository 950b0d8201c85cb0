"""Fuzz the engines at the edges of the ranges through ``wgpsim replay``: timing constants and
drift jitter up to their range limits, delays up to trace validation's per-warp bound. Both
engines must finish within the time limit (idle time is skipped, never stepped through, and no
counter wraps) and print the same result."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from cli_runner import fuzz
from conftest import examples
from hypothesis import example, given
from hypothesis import strategies as st

from wgpsim.hw.config_schema import RANGES
from wgpsim.trace.validate import MAX_DELAY_CYCLES

LOADS = ["ds_load_b128", "ds_load_b64", "ds_load_b32", "ds_load_tr16_b128"]


@pytest.fixture(scope="module")
def workdir():
    path = Path(tempfile.mkdtemp(prefix="wgpsim-fuzz-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _edge(field: str) -> st.SearchStrategy[int]:
    low, high = RANGES[field]
    return st.one_of(st.integers(low, min(high, low + 64)), st.sampled_from([low, high]),
                     st.integers(low, high))  # fmt: skip


@st.composite
def programs(draw) -> list[str]:
    """A small trace every engine can replay: per warp, loads (aligned, inside the LDS), waits,
    delays and clocks; barriers for every warp at once."""
    warps = draw(st.integers(1, 8))
    lines = [json.dumps({"num_warps": warps})]
    budget = dict.fromkeys(range(warps), MAX_DELAY_CYCLES)
    for _ in range(draw(st.integers(1, 16))):
        kind = draw(st.sampled_from(["load", "load", "wait", "delay", "clock", "barrier"]))
        warp = draw(st.integers(0, warps - 1))
        if kind == "load":
            base = draw(st.integers(0, (320 * 1024 - 32 * 16) // 16)) * 16
            stride = draw(st.sampled_from([0, 4, 8, 16]))
            op = draw(st.sampled_from(LOADS))
            lines.append(json.dumps({"warp": warp, "op": op,
                                     "addr": {"base": base, "stride": stride}}))  # fmt: skip
        elif kind == "wait":
            lines.append(json.dumps({"warp": warp, "op": "wait_ds", "n": draw(st.integers(0, 3))}))
        elif kind == "delay":
            cycles = draw(
                st.one_of(st.integers(0, min(100, budget[warp])), st.integers(0, budget[warp]))
            )
            budget[warp] -= cycles
            lines.append(json.dumps({"warp": warp, "op": "delay", "cycles": cycles}))
        elif kind == "clock":
            lines.append(json.dumps({"warp": warp, "op": "clock", "label": "t"}))
        else:
            lines.append(json.dumps({"op": "barrier"}))
    return lines


TIMING = ("issue_interval", "queue_depth", "lds_latency", "clock_latency", "barrier_latency")


@examples(50)
@given(
    programs(),
    st.fixed_dictionaries({}, optional={f"timing.{k}": _edge(f"timing.{k}") for k in TIMING}),
    st.one_of(st.none(), _edge("drift.jitter_cycles")),
)
@example(
    [json.dumps({"warp": 0, "op": "delay", "cycles": MAX_DELAY_CYCLES - 1}),
     json.dumps({"warp": 0, "op": "ds_load_b128", "addr": {"base": 0, "stride": 16}})],
    {"timing.issue_interval": 65536, "timing.lds_latency": 65536},
    65536,
)  # fmt: skip
def test_engines_agree_at_the_edges(workdir, lines, timing, jitter):
    path = workdir / "edge.jsonl"
    path.write_text("\n".join(lines) + "\n")
    sets = [a for key, value in timing.items() for a in ("--set", f"{key}={value}")]
    if jitter is not None:
        sets += ["--set", "drift.model=uniform", "--set", f"drift.jitter_cycles={jitter}"]
    des = fuzz("replay", path, *sets, "--engine", "des", "--json")
    fast = fuzz("replay", path, *sets, "--engine", "fast", "--json")
    assert des.code == fast.code == 0, (des.err, fast.err)
    same = {k: v for k, v in json.loads(des.out).items() if k != "engine"}
    assert same == {k: v for k, v in json.loads(fast.out).items() if k != "engine"}
