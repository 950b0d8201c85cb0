"""The arbiter timeline draws what the event log says: ports busy, pairs stalled."""

from __future__ import annotations

from pathlib import Path

import pytest

import wgpsim
from wgpsim.cli import main
from wgpsim.errors import WgpsimError
from wgpsim.plots.timeline import timeline_figure
from wgpsim.trace import read_trace

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "examples" / "traces"


def _events(name: str):
    result = wgpsim.simulate(read_trace(TRACES / name), record_events=True)
    return result, result.events()


def _bars(ax, row: int) -> int:
    """Number of bars drawn in row ``row`` (broken_barh collections at that y)."""
    count = 0
    for coll in ax.collections:
        for path in coll.get_paths():
            ys = path.vertices[:, 1]
            if ys.min() <= row <= ys.max():
                count += 1
    return count


def test_shared_partition_serialises_on_one_port_and_stalls_the_other_pair():
    result, events = _events("two_pairs_conflict.jsonl")
    ax = timeline_figure(events).axes[0]
    assert _bars(ax, 0) == result.passes  # every pass on port L
    assert _bars(ax, 1) == 0  # port C idle
    stalls = sum(result.partition_stall_cycles.values())
    assert stalls > 0 and _bars(ax, 2) + _bars(ax, 3) == stalls


def test_separate_partitions_fill_both_ports_without_stalls():
    result, events = _events("two_pairs_separate.jsonl")
    ax = timeline_figure(events).axes[0]
    assert _bars(ax, 0) > 0 and _bars(ax, 1) > 0
    assert _bars(ax, 0) + _bars(ax, 1) == result.passes
    assert _bars(ax, 2) + _bars(ax, 3) == 0


def test_window_and_empty_log():
    _, events = _events("two_pairs_conflict.jsonl")
    first = int(events["cycle"].min())
    ax = timeline_figure(events, window=(first, first)).axes[0]
    assert _bars(ax, 0) == 1
    with pytest.raises(WgpsimError, match="no arbiter event"):
        timeline_figure(events, window=(10**6, 10**6 + 1))
    with pytest.raises(WgpsimError, match="empty"):
        timeline_figure(events.iloc[:0])


def test_replay_draws_the_timeline(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "timeline.png"
    trace = "examples/traces/two_pairs_conflict.jsonl"
    assert main(["replay", trace, "--timeline", str(out), "--window", "0:20", "--json"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()
    assert main(["replay", trace, "--timeline", str(out), "--window", "20:5"]) == 2
    assert main(["replay", trace, "--timeline", str(tmp_path / "t.gif")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "--window 20:5" in err[0] and ".png, .svg, .pdf" in err[1]


def test_bank_conflicted_passes_are_long_and_hatched():
    result, events = _events("bank_conflict.jsonl")
    fig = timeline_figure(events)
    ax = fig.axes[0]
    assert f"{result.bank_conflict_cycles} bank-conflict cycles" in ax.get_title()
    hatched = [c for c in ax.collections if c.get_hatch()]
    widths = [p.get_extents().width for c in hatched for p in c.get_paths()]
    long = events[(events["status"] == "granted") & (events["bank_cycles"] > 1)]
    assert sorted(widths) == pytest.approx(sorted(long["bank_cycles"]))
