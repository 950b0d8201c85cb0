"""The fast engine's compiled rules against the plain reference ``wgpsim.hw.rules``.

The two are separate statements of the pass and grant rules (docs/DESIGN.md, "Engines"), so a
disagreement is a bug in one of them. Addresses here need not be aligned: the rules take any
byte address (the compiler emits 8-byte-aligned b128 loads).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.engine._fast_grant import grant as compiled_grant
from wgpsim.engine._fast_grant import policy_of
from wgpsim.engine._fast_passes import loop_passes, pass_list
from wgpsim.hw import load_hardware, rules
from wgpsim.hw.rules import POLICIES
from wgpsim.trace.instructions import INSTRUCTIONS, NUM_LDS_OPS, op_code

HW = load_hardware()
ONE_PARTITION = {
    "partitions.size": 327680,
    "partitions.count": 1,
    "partitions.lds": [0],
    "partitions.l0": [],
}  # a chip without partitions: the whole LDS in one
VARIANTS = {
    "default": HW,
    "triton_lanes": HW.with_overrides(**{"passes.lane_grouping": "triton"}),
    "banks_48": HW.with_overrides(**{"banks.count": 48}),
    "banks_128": HW.with_overrides(**{"banks.count": 128}),
    "one_port": HW.with_overrides(**{"ports.names": ["L"]}),
    "one_partition": HW.with_overrides(**ONE_PARTITION),
    "store_banks_32": HW.with_overrides(**{"banks.store_count": 32}),
    "store_banks_128": HW.with_overrides(**{"banks.store_count": 128, "banks.count": 32}),
    "xor_lanes": HW.with_overrides(  # pass bits as XORs of lane bits (linear maps over GF(2))
        **{
            "passes.groupings.blog.ds_load_b128": [[2, 3, 4]],
            "passes.groupings.blog.ds_store_b128": [[0, 4], [1, 3]],
            "passes.groupings.blog.ds_load_2addr_b64": [[4, 0]],
            "passes.groupings.blog.ds_load_b32": [[1, 2]],
        }
    ),
}

lane_address = st.one_of(
    st.just(-1),  # inactive
    st.integers(0, 96).map(lambda d: 4 * d),  # few dwords: broadcasts and bank conflicts
    st.integers(0, 4095),  # any byte
    st.integers(-300, 300).map(lambda d: HW.partitions.size + 4 * d),  # both partitions
    st.integers(-16, 0).map(lambda d: 2 * HW.partitions.size + d),  # a lane straddling them
)
rows = st.lists(
    st.tuples(
        st.sampled_from(sorted(load_hardware().instructions)),
        st.lists(lane_address, min_size=32, max_size=32),
        st.sampled_from([1, 2, 3, 16, 64, 255]),  # a 2addr form's distance in offset units
    ),
    min_size=1,
    max_size=6,
)


def distances(rows) -> np.ndarray:
    """Each row's byte distance to a 2addr form's second address (0 for the others)."""
    return np.array([INSTRUCTIONS[op].offset_unit_bytes * units for op, _, units in rows])


@settings(max_examples=200, deadline=None)
@given(rows=rows, variant=st.sampled_from(sorted(VARIANTS)))
def test_compiled_passes_equal_the_reference(rows, variant):
    hw = VARIANTS[variant]
    ops = np.array([op_code(op) for op, _, _ in rows])
    addr = np.array([a for _, a, _ in rows])
    want = rules.pass_table(ops, addr, hw, distances(rows))
    got = pass_list(ops, addr, hw, distances(rows))
    for name, column in got.items():
        assert column.tolist() == getattr(want, name).tolist(), name


@settings(max_examples=100, deadline=None)
@given(rows=rows, control=st.lists(st.booleans(), min_size=6, max_size=6), index=st.booleans())
def test_loop_passes_skip_control_rows(rows, control, index):
    """The loop's columns: per trace row its passes (control rows none), as the reference."""
    ops = np.array(
        [
            op_code(op) if not c else NUM_LDS_OPS
            for (op, _, _), c in zip(rows, control, strict=False)
        ]
    )
    addr = np.array([a for _, a, _ in rows])
    dist = distances(rows)
    lds = np.flatnonzero(ops < NUM_LDS_OPS)
    want = rules.pass_table(ops[lds], addr[lds], HW, dist[lds])
    got = loop_passes(ops, addr, HW, index=index, distance=dist)
    per_row = np.bincount(lds[want.row], minlength=len(ops))
    assert np.diff(got.start).tolist() == per_row.tolist()
    assert got.partitions.tolist() == want.partitions.tolist()
    assert got.bank_cycles.tolist() == want.bank_cycles.tolist()
    assert got.index.tolist() == (want.index.tolist() if index else [])
    assert got.bytes == int(want.bytes.sum())


def _compiled_decision(heads, state, hw):
    """``_fast_grant.grant`` on ``rules`` values, as a ``rules.Decision``."""
    n = max(len(heads), 1)
    columns = np.zeros((3, n), dtype=np.int64)
    for i, h in enumerate(heads):
        columns[:, i] = (h.pair, h.issued, h.partitions)
    out = np.zeros((2, 2 * n), dtype=np.int64)
    free = np.array(state.ports_free, dtype=np.bool_)
    held = np.array(state.held, dtype=np.int64)
    granted, stalled, favor = compiled_grant(
        columns, len(heads), held, free, state.favor, policy_of(hw), np.zeros(n, np.int64), out
    )
    pairs_ports = out[0, : 2 * granted].reshape(-1, 2).tolist()
    return rules.Decision(
        tuple((p, q) for p, q in pairs_ports), tuple(out[1, :stalled].tolist()), int(favor)
    )


@settings(max_examples=300, deadline=None)
@given(
    present=st.lists(st.booleans(), min_size=2, max_size=2),
    issued=st.lists(st.integers(0, 3), min_size=2, max_size=2),
    parts=st.lists(st.integers(1, 63), min_size=2, max_size=2),
    held=st.lists(st.sampled_from([0, 1, 2, 4, 3, 48]), min_size=2, max_size=2),
    free=st.lists(st.booleans(), min_size=1, max_size=3),
    favor=st.integers(0, 1),
    policy=st.sampled_from(sorted(POLICIES)),
    tie_break=st.sampled_from(["alternate", "lowest_pair"]),
    one_partition=st.booleans(),
)
def test_compiled_grant_equals_the_reference(
    present, issued, parts, held, free, favor, policy, tie_break, one_partition
):
    hw = HW.with_overrides(
        **{
            "ports.names": ["L", "C", "X"][: len(free)],
            "arbiter.grant_policy": policy,
            "arbiter.tie_break": tie_break,
            **(ONE_PARTITION if one_partition else {}),
        }
    )
    heads = tuple(
        rules.Head(p, issued[p], parts[p]) for p in range(2) if present[p] and not held[p]
    )
    state = rules.ArbiterState(tuple(held), tuple(free), favor)
    assert _compiled_decision(heads, state, hw) == rules.grant(heads, state, hw)


def test_des_runs_without_numba():
    """The reference engine and its rules import and run with no numba loaded."""
    script = (
        "import sys\n"
        "import wgpsim.engine.des as des\n"
        "from wgpsim.engine import simulate\n"
        "from wgpsim.trace.generate import streaming_trace\n"
        "t = streaming_trace(4, 4, 'ds_load_b128', lambda w: w * 16384, timed=True)\n"
        "assert simulate(t, engine='des').passes == 32\n"
        "assert 'numba' not in sys.modules, 'des loaded numba'\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
