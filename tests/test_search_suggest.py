"""Kernel-report suggestions: a conflicted dot-operand load gets the shared layout that removes
its conflicts, checked here by lowering and simulating the suggested layout again."""

from pathlib import Path

from wgpsim.engine import simulate
from wgpsim.hw import load_hardware
from wgpsim.hw.alloc import allocate_on, tensor_buffers
from wgpsim.kernel.lowering import op_trace
from wgpsim.kernel.report import kernel_report
from wgpsim.layout.notation import parse
from wgpsim.trace.lowering import lower

HW = load_hardware()
KERNELS = Path(__file__).parent.parent / "examples" / "kernels"


def test_attention_load_with_partition_stalls_gets_a_layout_without_them():
    report = kernel_report(KERNELS / "attention", HW)
    (op,) = [o for o in report.ops if o["suggestion"] and o["suggestion"]["layout"]]
    assert op["partition_stall_cycles"] > 0
    sug = op["suggestion"]
    low = next(lw for lw in report.lowerings if lw.op.index == op["index"])
    shared = parse(sug["layout"])
    shape = tuple(low.op.memdesc.shape)
    alloc = allocate_on(HW, tensor_buffers("X", shared, shape, 2))
    again = lower(shared, low.op.tensor.encoding, shape, 16, bases=alloc.offsets_of("X"))
    result = simulate(op_trace(again), HW)
    assert sum(result.partition_stall_cycles.values()) == 0 and result.bank_conflict_cycles == 0
    assert int(result.measurements().max()) == sug["lds_cycles"] < op["lds_cycles"]


def test_co_located_gemm_loads_get_the_reason_instead():
    """warpsPerCTA = [2, 2]: the pairs read the same A bytes, no shared layout helps A."""
    report = kernel_report(KERNELS / "gemm_tdm_standard", HW)
    a_loads = [o for o in report.ops if o["partition_stall_cycles"] and "opIdx=0" in o["dst"]]
    assert a_loads
    for op in a_loads:
        assert op["suggestion"]["layout"] is None
        assert "ctaLayout" in op["suggestion"]["reason"]


ROWPERM = Path(__file__).parent / "corpus_others" / "fixtures" / "heldout_padded_rowperm_b"


def test_a_padded_layout_given_by_offset_bases_is_searched_in_its_own_order():
    """A B operand in a padded layout whose linear component permutes the rows (offset bases,
    no ``order``): the report (from the cache .ttgir and from the post-allocation dump) runs,
    its load lowers to the 32 ds_load_tr16_b128 the assembly holds for it, and the search
    takes the order Triton's ``getOrder`` gives those bases (N fastest), not a missing one."""
    want = next(o for o in _expected(ROWPERM)["ops"] if o["op"] == "ttg.local_load")
    for path in (ROWPERM / "kernel.ttgir", ROWPERM / "kernel.alloc.mlir"):
        report = kernel_report(path, HW)
        (load,) = [o for o in report.ops if o["op"] == "ttg.local_load"]
        assert load["instructions"] == want["instructions"] == {"ds_load_tr16_b128": 32}
        assert load["suggestion"] is not None
    shared = next(lw for lw in report.lowerings if lw.op.op == "ttg.local_load").op.memdesc
    assert shared.encoding.order is None and shared.encoding.get_order() == (1, 0)


def _expected(d: Path) -> dict:
    import json

    return json.loads((d / "expected.json").read_text())


def test_candidates_dropped_unrun_are_the_ones_a_run_finds_bank_conflicted(monkeypatch):
    """The suggestion drops a candidate with bank conflicts before simulating it: the static
    count it uses equals the fast engine's (a separate, compiled statement of the bank rule) on
    every candidate of the attention example's three searches (37, most of them conflicted)."""
    import wgpsim.kernel.suggest as suggest
    from wgpsim.measures.banks import bank_conflict_cycles

    seen = []

    def checked(trace, hw):
        conflicted = has_bank_conflicts(trace, hw)
        static = bank_conflict_cycles(trace, hw)
        assert static == simulate(trace, hw, engine="fast").bank_conflict_cycles
        assert conflicted == (static > 0)
        seen.append(static)
        return conflicted

    has_bank_conflicts = suggest.has_bank_conflicts
    monkeypatch.setattr(suggest, "has_bank_conflicts", checked)
    monkeypatch.setattr(suggest, "pairs_read_alike", lambda *a: False)  # search all three
    monkeypatch.setattr("wgpsim.engine.auto.fast_ready", lambda: False)  # the reference rules
    kernel_report(KERNELS / "attention", HW, engine="des")
    assert len(seen) >= 30 and sum(c > 0 for c in seen) >= 25 and 0 in seen


def _dot_operand(op_idx: int, warps: str):
    mma = (
        f"#ttg.amd_wmma<{{version = 3, isTranspose = true, ctaLayout = {{warp = {warps}}}, "
        "instrShape = [16, 16, 32]}>"
    )
    return parse(f"#ttg.dot_op<{{opIdx = {op_idx}, parent = {mma}, kWidth = 8}}>")


def test_pairs_reading_alike_end_the_search_with_its_own_answer(monkeypatch):
    """When the SIMD pairs read alike (``suggest.pairs_read_alike``), no candidate is tried;
    the whole search, run anyway, rejects every candidate and answers the same."""
    from wgpsim.kernel import suggest

    shared = parse("#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]}>")
    cases = [
        (_dot_operand(1, "[[1, 0], [2, 0], [4, 0]]"), (64, 128)),  # the attention example's B
        (_dot_operand(1, "[[1, 0], [2, 0]]"), (64, 64)),  # 4 warps along M: B read alike
        (_dot_operand(0, "[[0, 1], [0, 2]]"), (64, 64)),  # 4 warps along N: A read alike
    ]
    for dst, shape in cases:
        assert suggest.pairs_read_alike(dst, shape, HW)
        quick = suggest.suggest_layout(shared, dst, shape, 16, HW)
        with monkeypatch.context() as m:
            m.setattr(suggest, "pairs_read_alike", lambda *a: False)
            searched = suggest.suggest_layout(shared, dst, shape, 16, HW)
        assert quick == searched == suggest.NO_LAYOUT


def test_pairs_reading_different_elements_are_searched():
    from wgpsim.hw.config import load_hardware as load
    from wgpsim.kernel import suggest
    from wgpsim.packaged import hardware_path

    a = _dot_operand(0, "[[1, 0], [2, 0], [4, 0]]")  # the attention example's A: warps differ
    assert not suggest.pairs_read_alike(a, (128, 64), HW)
    b = _dot_operand(1, "[[1, 0], [2, 0]]")
    assert not suggest.pairs_read_alike(b, (64, 64), load(hardware_path("gfx950")))  # 1 partition
    drift = HW.with_overrides(**{"drift.model": "uniform", "drift.jitter_cycles": 4})
    assert not suggest.pairs_read_alike(b, (64, 64), drift)  # random delays: no symmetry


def test_attention_searches_end_early_where_the_full_search_agrees(monkeypatch):
    """On the attention example's own ops (multi-buffered, read at stage 0), two of its three
    searches end at ``pairs_read_alike``; the report with the exit switched off (every
    candidate lowered and run) is the same, JSON for JSON."""
    from wgpsim.kernel import suggest

    real, alike = suggest.pairs_read_alike, []

    def counted(*args):
        alike.append(real(*args))
        return alike[-1]

    monkeypatch.setattr(suggest, "pairs_read_alike", counted)
    quick = kernel_report(KERNELS / "attention", HW).to_json()
    assert sorted(alike) == [False, True, True]
    monkeypatch.setattr(suggest, "pairs_read_alike", lambda *a: False)
    assert kernel_report(KERNELS / "attention", HW).to_json() == quick
    reasons = [o["suggestion"]["layout"] is None for o in quick["ops"] if o.get("suggestion")]
    assert reasons.count(True) >= 2
