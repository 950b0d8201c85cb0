"""The static rules (no simpy): partitions, banks, passes, bank cycles, the arbiter's grant."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wgpsim.errors import TraceError
from wgpsim.hw.config import load_hardware
from wgpsim.hw.rules import (
    ArbiterState,
    Head,
    bank_cycles,
    bank_of,
    grant,
    lane_groups,
    partition_of,
    pass_bank_cycles,
    pass_table,
    split_passes,
)
from wgpsim.trace.instructions import INSTRUCTIONS, op_code

HW = load_hardware()
TRITON = HW.with_overrides(**{"passes.lane_grouping": "triton"})
XOR = HW.with_overrides(  # groupings as linear maps over GF(2): pass bits are XORs of lane bits
    **{
        "passes.groupings.blog.ds_load_b128": [[2, 3, 4]],
        "passes.groupings.blog.ds_store_b128": [[0, 4], [1, 3]],
        "passes.groupings.blog.ds_load_b32": [[1, 2]],
    }
)
LANES = np.arange(32)


def test_partition_and_bank_vectorised():
    a = np.array([0, 3, 4, 255, 256, 65535, 65536, 327679])
    assert partition_of(a, HW).tolist() == [0, 0, 0, 0, 0, 0, 1, 4]
    assert bank_of(a, HW).tolist() == [0, 0, 1, 63, 0, 63, 0, 63]
    assert partition_of(70000, HW) == 1


def test_lane_groups_cover_every_lane_once():
    for hw in (HW, TRITON):
        for op in hw.instructions:
            groups = lane_groups(op, hw)
            assert sorted(groups.ravel().tolist()) == list(range(32))
    assert lane_groups("ds_load_b128", HW).tolist() == [list(range(16)), list(range(16, 32))]
    assert lane_groups("ds_load_b64", HW).shape == (1, 32)
    assert lane_groups("ds_load_tr16_b128", HW).shape == (2, 16)
    assert lane_groups("ds_load_b96", HW).shape == (2, 16)
    t = lane_groups("ds_load_b128", TRITON)
    assert t[0].tolist() == [0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]


def test_xor_grouping_gives_the_measured_gfx9_b128_phase():
    """Issue 27's measured ds_read_b128 phase (wave64, 64 banks): one pass of lanes 0-31 holds
    lanes 0-3, 12-15, 20-27, the other 4-11, 16-19, 28-31: pass bit = lane2 ^ lane3 ^ lane4."""
    hw = HW.with_overrides(**{"passes.groupings.blog.ds_load_b128": [[2, 3, 4]]})
    first = [*range(0, 4), *range(12, 16), *range(20, 28)]
    assert lane_groups("ds_load_b128", hw).tolist() == [
        first,
        sorted(set(range(32)) - set(first)),
    ]
    # 16 B at 16*l: each measured phase reads 16 distinct 16-byte slots, one per 4 banks
    passes = split_passes("ds_load_b128", 16 * np.arange(32), hw)
    assert [(p.lanes, p.bank_cycles) for p in passes] == [
        (tuple(first), 1),
        (tuple(sorted(set(range(32)) - set(first))), 1),
    ]


def test_stores_go_through_store_count_banks():
    """gfx950 reads through 64 banks and writes through 32 (anchors §3.1): lane l at 8 * l
    touches dwords 0, 2, ..., 62. Read, they fall in 32 distinct banks of 64 (1 cycle);
    written through 32 banks, dwords d and d + 32 share a bank (2 cycles). Without
    store_count a store goes through banks.count, as before."""
    hw = HW.with_overrides(**{"banks.store_count": 32})
    addr = 8 * LANES
    assert split_passes("ds_load_b32", addr, hw)[0].bank_cycles == 1
    assert split_passes("ds_store_b32", addr, hw)[0].bank_cycles == 2
    assert split_passes("ds_store_b32", addr, HW)[0].bank_cycles == 1
    assert split_passes("ds_store_2addr_b32", addr, hw, distance=4)[0].bank_cycles == 2
    assert pass_table(np.array([op_code("ds_store_b32")]), addr[None], hw).bank_cycles.tolist() == [
        2
    ]


def test_one_partition_has_no_partition_conflicts():
    """A hardware file without partitions (partitions.count 1, the whole LDS in one): two
    heads in the one partition are both granted, one per port; with one port the second
    waits for it without a partition stall. Every address lies in partition 0."""
    one = {"partitions.size": 327680, "partitions.count": 1}
    hw = HW.with_overrides(**one, **{"partitions.lds": [0], "partitions.l0": []})
    assert partition_of(np.array([0, 65536, 327679]), hw).tolist() == [0, 0, 0]
    heads = (Head(0, issued=5, partitions=0b1), Head(1, issued=5, partitions=0b1))
    assert grant(heads, ArbiterState.idle(hw), hw).granted == ((0, 0), (1, 1))
    one_port = hw.with_overrides(**{"ports.names": ["L"]})
    decision = grant(heads, ArbiterState.idle(one_port), one_port)
    assert (len(decision.granted), decision.stalled) == (1, ())
    held = ArbiterState((0b1, 0), (False, True), 0)  # pair 0's pass holds partition 0
    assert grant((Head(1, 5, 0b1),), held, hw).granted == ((1, 1),)


def test_seed_microbenchmark_load_is_two_conflict_free_passes():
    passes = split_passes("ds_load_b128", 16 * LANES, HW)
    assert [(p.lanes, p.bytes, p.partitions, p.bank_cycles) for p in passes] == [
        (tuple(range(16)), 256, 0b1, 1),
        (tuple(range(16, 32)), 256, 0b1, 1),
    ]
    # same bytes under Triton's grouping: lanes 0-3 and 8-11 are 128 B apart -> 2-way conflict
    assert [p.bank_cycles for p in split_passes("ds_load_b128", 16 * LANES, TRITON)] == [2, 2]


@pytest.mark.parametrize(
    ("op", "addr", "expected"),
    [
        ("ds_load_b32", 4 * LANES, [1]),  # 32 consecutive dwords
        ("ds_load_b32", 256 * LANES, [32]),  # every lane in bank 0, distinct dwords
        ("ds_load_b32", np.zeros(32, int), [1]),  # broadcast
        ("ds_load_b32", 256 * (LANES % 2), [2]),  # two dwords in bank 0, each read 16 times
        ("ds_load_u8", LANES, [1]),  # 32 bytes in 8 dwords
        ("ds_load_u16", 2 * LANES, [1]),
        ("ds_load_b64", 8 * LANES, [1]),  # 256 B contiguous
        ("ds_load_b64", 16 * LANES, [2]),  # stride 16: even banks twice each
        ("ds_load_b128", 32 * LANES, [2, 2]),  # 512 B per 16 lanes -> 2 dwords per bank
        ("ds_load_b96", 12 * LANES, [1, 1]),  # 192 B per pass
        ("ds_load_tr16_b128", 16 * LANES, [1, 1]),  # banked like ds_load_b128
        ("ds_load_tr8_b64", 8 * LANES, [1]),
        ("ds_store_b128", 16 * LANES, [1, 1]),
    ],
)
def test_bank_cycles_of_patterns(op, addr, expected):
    assert [p.bank_cycles for p in split_passes(op, addr, HW)] == expected


def test_transposed_loads_bank_like_plain_loads():
    rng = np.random.default_rng(1)
    for _ in range(20):
        addr = 16 * rng.integers(0, 2048, size=32)
        tr = split_passes("ds_load_tr16_b128", addr, HW)
        plain = split_passes("ds_load_b128", addr, HW)
        assert tr == plain
        addr8 = 8 * rng.integers(0, 4096, size=32)
        assert split_passes("ds_load_tr8_b64", addr8, HW) == split_passes("ds_load_b64", addr8, HW)


def test_inactive_lanes_and_empty_passes():
    addr = 16 * LANES
    addr[16:] = -1
    passes = split_passes("ds_load_b128", addr, HW)
    assert len(passes) == 1 and passes[0].bytes == 256
    addr[3] = -1
    assert split_passes("ds_load_b128", addr, HW)[0].bytes == 240
    assert split_passes("ds_load_b128", np.full(32, -1), HW) == []


def test_pass_spanning_two_partitions():
    addr = 65536 - 128 + 16 * LANES  # lanes 0-7 in partition 0, 8-31 in partition 1
    passes = split_passes("ds_load_b128", addr, HW)
    assert [p.partitions for p in passes] == [0b11, 0b10]
    assert [p.bank_cycles for p in passes] == [1, 1]
    # one lane whose 16 bytes straddle the boundary (8-byte aligned, as the compiler emits)
    straddle = np.full(32, -1)
    straddle[17] = 65536 - 8
    assert [p.partitions for p in split_passes("ds_load_b128", straddle, HW)] == [0b11]


def test_bank_cycles_scalar_helper():
    assert bank_cycles(np.array([0, 256, 512, -1]), 4, HW) == 3
    assert bank_cycles(np.array([-1, -1]), 4, HW) == 1


def _reference_bank_cycles(addr: np.ndarray, bytes_per_lane: int, banks: int = 64) -> int:
    per_bank: dict[int, set[int]] = {}
    for a in addr:
        if a < 0:
            continue
        for d in range(a // 4, (a + bytes_per_lane - 1) // 4 + 1):
            per_bank.setdefault(d % banks, set()).add(d)
    return max([len(s) for s in per_bank.values()], default=0) or 1


@settings(max_examples=60, deadline=None)
@given(
    op=st.sampled_from(sorted(HW.instructions)),
    slots=st.lists(st.integers(-1, 300), min_size=32, max_size=32),
    grouping=st.sampled_from(["blog", "triton", "xor"]),
    base=st.sampled_from([0, 65536 - 2048]),
)
def test_pass_table_matches_a_plain_python_reference(op, slots, grouping, base):
    hw = {"blog": HW, "triton": TRITON, "xor": XOR}[grouping]
    width = INSTRUCTIONS[op].bytes_per_lane
    align = width & -width
    addr = np.array([-1 if s < 0 else base + s * align for s in slots])
    passes = split_passes(op, addr, hw)
    groups = lane_groups(op, hw)
    expected = []
    for lanes in groups:
        a = addr[lanes]
        if (a >= 0).any():
            parts = 0
            for x in a[a >= 0]:
                parts |= (1 << (x // 65536)) | (1 << ((x + width - 1) // 65536))
            expected.append(
                (
                    tuple(int(lane) for lane in lanes[a >= 0]),
                    int((a >= 0).sum()) * width,
                    parts,
                    _reference_bank_cycles(a, width),
                )
            )
    assert [(p.lanes, p.bytes, p.partitions, p.bank_cycles) for p in passes] == expected


def test_pass_table_orders_by_row_then_pass():
    ops = np.array([op_code("ds_load_b64"), op_code("ds_load_b128"), op_code("ds_load_b64")])
    addr = np.stack([8 * LANES, 16 * LANES, 65536 + 8 * LANES])
    t = pass_table(ops, addr, HW)
    assert t.row.tolist() == [0, 1, 1, 2]
    assert t.index.tolist() == [0, 0, 1, 0]
    assert t.partitions.tolist() == [1, 1, 1, 2]
    assert t.bytes.sum() == 256 + 512 + 256
    with pytest.raises(TraceError, match="unknown LDS instruction 'wait_ds'"):
        pass_table(np.array([op_code("wait_ds")]), addr[:1], HW)


# -- the arbiter ------------------------------------------------------------------------------

IDLE = ArbiterState.idle(HW)


def test_disjoint_partitions_both_granted_on_separate_ports():
    d = grant((Head(0, 3, 0b01), Head(1, 3, 0b10)), IDLE, HW)
    assert d.granted == ((0, 0), (1, 1)) and d.stalled == ()
    assert d.favor == 1  # a tie was evaluated: the other pair goes first next time
    d2 = grant(
        (Head(0, 4, 0b01), Head(1, 4, 0b10)), ArbiterState(IDLE.held, IDLE.ports_free, d.favor), HW
    )
    assert d2.granted == ((1, 0), (0, 1))


def test_shared_partition_serializes_oldest_first():
    d = grant((Head(0, 7, 0b1), Head(1, 6, 0b1)), IDLE, HW)
    assert d.granted == ((1, 0),) and d.stalled == (0,) and d.favor == IDLE.favor


def test_ties_alternate_between_pairs():
    state, winners = IDLE, []
    for _ in range(4):
        d = grant((Head(0, 0, 0b1), Head(1, 0, 0b1)), state, HW)
        winners.append(d.granted[0][0])
        state = ArbiterState(IDLE.held, IDLE.ports_free, d.favor)
    assert winners == [0, 1, 0, 1]


def test_partition_held_by_a_pass_in_service_stalls_the_other_pair():
    state = ArbiterState(held=(0, 0b100), ports_free=(False, True), favor=0)
    d = grant((Head(0, 1, 0b110),), state, HW)
    assert d.granted == () and d.stalled == (0,)
    d = grant((Head(0, 1, 0b001),), state, HW)
    assert d.granted == ((0, 1),)  # the free port is C


def test_a_single_head_never_stalls_on_an_idle_arbiter():
    d = grant((Head(1, 0, 0b11111),), IDLE, HW)
    assert d.granted == ((1, 0),) and d.stalled == ()


def test_no_free_port_waits_without_a_partition_stall():
    one_port = HW.with_overrides(**{"ports.names": ["L"]})
    d = grant((Head(0, 0, 0b01), Head(1, 0, 0b10)), ArbiterState.idle(one_port), one_port)
    assert d.granted == ((0, 0),) and d.stalled == ()


# -- the rules against plain hand-written references (the kernels are their only statement) ----


def _reference_grant(heads, state, npairs):
    """The arbiter rule of docs/DESIGN.md written plainly: oldest first, ties from ``favor``."""
    order = sorted(heads, key=lambda h: (h.issued, (h.pair - state.favor) % npairs))
    issued = [h.issued for h in heads]
    favor = (state.favor + 1) % npairs if len(set(issued)) < len(issued) else state.favor
    held = 0
    for mask in state.held:
        held |= mask
    free = [port for port, ok in enumerate(state.ports_free) if ok]
    granted, stalled = [], []
    for head in order:
        if head.partitions & held:
            stalled.append(head.pair)
        elif free:
            granted.append((head.pair, free.pop(0)))
            held |= head.partitions
    return tuple(granted), tuple(stalled), favor


@settings(max_examples=300, deadline=None)
@given(
    present=st.lists(st.booleans(), min_size=2, max_size=2),
    issued=st.lists(st.integers(0, 3), min_size=2, max_size=2),
    parts=st.lists(st.integers(1, 63), min_size=2, max_size=2),
    held=st.lists(st.sampled_from([0, 1, 2, 4, 3, 48]), min_size=2, max_size=2),
    free=st.lists(st.booleans(), min_size=2, max_size=2),
    favor=st.integers(0, 1),
)
def test_grant_matches_a_plain_python_reference(present, issued, parts, held, free, favor):
    heads = tuple(Head(p, issued[p], parts[p]) for p in range(2) if present[p] and not held[p])
    state = ArbiterState(tuple(held), tuple(free), favor)
    d = grant(heads, state, HW)
    assert (d.granted, d.stalled, d.favor) == _reference_grant(heads, state, HW.num_pairs)


@pytest.mark.parametrize(
    ("heads", "held", "free", "favor", "expected"),
    [
        # (pair, issued, partitions) ...; expected (granted (pair, port), stalled, favor)
        ((), (0, 0), (True, True), 1, ((), (), 1)),
        (((0, 2, 0b1), (1, 2, 0b1)), (0, 0), (True, True), 1, (((1, 0),), (0,), 0)),
        (((0, 2, 0b1), (1, 2, 0b10)), (0, 0), (False, True), 0, (((0, 1),), (), 1)),
        (((0, 2, 0b1), (1, 2, 0b10)), (0, 0), (False, False), 0, ((), (), 1)),
        (((1, 9, 0b11),), (0b10, 0), (True, True), 0, ((), (1,), 0)),
        (((0, 3, 0b100), (1, 1, 0b110)), (0, 0), (True, True), 0, (((1, 0),), (0,), 0)),
    ],
)
def test_grant_table_of_small_cases(heads, held, free, favor, expected):
    """oldest_first, ties alternate (the default)."""
    d = grant(tuple(Head(*h) for h in heads), ArbiterState(held, free, favor), HW)
    assert (d.granted, d.stalled, d.favor) == expected


BANKS = {n: HW.with_overrides(**{"banks.count": n}) for n in (64, 48, 128, 4096)}


@settings(max_examples=90, deadline=None)
@given(
    dwords=st.lists(st.integers(-1, 400), min_size=1, max_size=40),
    width=st.sampled_from([1, 2, 4, 8, 12, 16, 256, 520]),
    banks=st.sampled_from(sorted(BANKS)),
)
def test_bank_cycles_match_a_hand_count(dwords, width, banks):
    """Any lane count and width, lanes spanning several bank rows; 64 banks or not (4,096:
    ideal_banks' count, where the passes' runs of one bank are counted without a table of
    every bank); several passes at once as each alone."""
    addr = np.array([-1 if d < 0 else 4 * d for d in dwords])
    assert bank_cycles(addr, width, BANKS[banks]) == _reference_bank_cycles(addr, width, banks)
    passes = np.stack([addr, np.where(addr >= 0, addr * 3, -1), np.full_like(addr, -1)])
    got = pass_bank_cycles(passes, width, BANKS[banks]).tolist()
    assert got == [_reference_bank_cycles(a, width, banks) for a in passes]


@pytest.mark.parametrize(
    ("policy", "tie_break", "heads", "favor", "expected"),
    [
        # (pair, issued, partitions) ...; expected (granted (pair, port), stalled, favor)
        ("oldest_first", "lowest_pair", ((0, 2, 1), (1, 2, 1)), 1, (((0, 0),), (1,), 1)),
        ("oldest_first", "lowest_pair", ((0, 3, 1), (1, 2, 1)), 0, (((1, 0),), (0,), 0)),
        ("round_robin", "alternate", ((0, 6, 1), (1, 5, 1)), 0, (((0, 0),), (1,), 1)),
        ("round_robin", "alternate", ((0, 5, 1), (1, 6, 1)), 1, (((1, 0),), (0,), 0)),
        ("round_robin", "alternate", ((0, 5, 1), (1, 6, 2)), 1, (((1, 0), (0, 1)), (), 0)),
        ("fixed_priority", "alternate", ((0, 6, 1), (1, 5, 1)), 1, (((0, 0),), (1,), 1)),
        ("fixed_priority", "alternate", ((1, 5, 1), (0, 6, 2)), 0, (((0, 0), (1, 1)), (), 0)),
    ],
)
def test_grant_policies_of_small_cases(policy, tie_break, heads, favor, expected):
    hw = HW.with_overrides(**{"arbiter.grant_policy": policy, "arbiter.tie_break": tie_break})
    d = grant(tuple(Head(*h) for h in heads), ArbiterState((0, 0), (True, True), favor), hw)
    assert (d.granted, d.stalled, d.favor) == expected


def test_round_robin_without_a_grant_keeps_its_turn():
    hw = HW.with_overrides(**{"arbiter.grant_policy": "round_robin"})
    d = grant((Head(0, 1, 0b10),), ArbiterState((0, 0b10), (True, True), 1), hw)
    assert (d.granted, d.stalled, d.favor) == ((), (0,), 1)
