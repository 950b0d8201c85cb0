"""One meaning of --set on an experiment: hardware fields as on every verb, overrides in titles."""

from pathlib import Path

import pytest
from bandwidth_reference import BANDWIDTH_BURSTS

from wgpsim.cli.run import figures_for
from wgpsim.errors import ConfigError
from wgpsim.experiments import run_experiment

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "lds_bandwidth.yaml"


def test_hardware_field_by_its_own_name_and_in_the_titles(bandwidth_cycles):
    short = [BANDWIDTH_BURSTS]
    base = run_experiment(CONFIG, overrides=short)
    # `timing.lds_latency` is the hardware field, as in `wgpsim replay --set`; 16 cycles less
    # latency is 16 cycles less per measurement (one un-overlapped round trip)
    faster = run_experiment(CONFIG, overrides=[*short, "timing.lds_latency=40"])
    spelled = run_experiment(CONFIG, overrides=[*short, "hardware_overrides.timing.lds_latency=40"])
    cycles = [r.table.set_index("layout")["cycles"].to_dict() for r in (base, faster, spelled)]
    assert cycles[0] == bandwidth_cycles
    assert cycles[1] == cycles[2] == {k: v - 16 for k, v in bandwidth_cycles.items()}
    assert (
        "timing.lds_latency=40" in faster.overrides and "timing.lds_latency=40" in spelled.overrides
    )
    fig = figures_for(faster)["bandwidth_vs_burst"]()
    caption = fig.get_supxlabel()  # the overrides: in the caption, the title stays short
    assert "timing.lds_latency=40" in caption and BANDWIDTH_BURSTS in caption
    assert fig.axes[0].get_title() == "LDS bandwidth against burst length (simulated)"


def test_unknown_hardware_field_gets_did_you_mean():
    with pytest.raises(ConfigError, match="did you mean 'lds_latency'"):
        run_experiment(CONFIG, overrides=["timing.lds_latncy=40"])


LONG_LAYOUT = (
    "layouts.plain=#ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>"
)


@pytest.fixture(scope="module")
def long_run():
    """lds_bandwidth with a long --set (a whole layout string) and a drift section."""
    return run_experiment(
        CONFIG,
        overrides=[
            LONG_LAYOUT,
            "drift={jitter_cycles: [0, 32], seeds: 2}",
            "timing.lds_latency=40",
        ],
    )


def _drawn(fig):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    return fig.canvas.get_renderer()


def test_burst_axis_is_log2_and_peak_labels_sit_clear_of_their_lines(long_run):
    """Issue 25: bursts 1..32 on a log2 axis; each peak's label above its line, on a box the
    line does not cross; a long --set not in the title but in a wrapped, shortened caption."""
    fig = figures_for(long_run)["bandwidth_vs_burst"]()
    renderer = _drawn(fig)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.xaxis.get_transform().base == 2
    bursts = sorted(set(long_run.tables["sweep"]["burst"]))
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(b) for b in bursts]
    peaks = long_run.summary.peaks
    labels = [t for t in ax.texts if t.get_text().startswith("peak ")]
    assert sorted(t.get_text() for t in labels) == sorted(
        f"peak {p:g} B/cycle ({name})" for name, p in peaks.items()
    )
    for text in labels:
        box = text.get_window_extent(renderer)
        for peak in peaks.values():  # no peak line runs through any label
            y = ax.transData.transform((1, peak))[1]
            assert not box.y0 < y < box.y1, text.get_text()
        assert ax.get_window_extent(renderer).contains(box.x0, box.y1)  # inside the axes
    assert len(ax.get_title()) < 60 and "swizzled" not in ax.get_title()
    caption = fig.get_supxlabel()
    assert "layouts.plain=#ttg.swizzled" in caption and " … " in caption
    assert max(map(len, caption.splitlines())) <= 120


def test_drift_labels_are_inside_the_figure(long_run):
    """Issue 25: the growth labels of the drift figure's cycles panel were cut at its edge."""
    fig = figures_for(long_run)["conflict_rate_vs_jitter"]()
    renderer = _drawn(fig)
    ax = fig.axes[1]
    assert [t.get_text().split()[0] for t in ax.texts] == ["plain", "partitioned"]
    inside = ax.get_window_extent(renderer)
    for text in ax.texts:
        box = text.get_window_extent(renderer)
        assert inside.x0 <= box.x0 and box.x1 <= inside.x1 and box.y1 <= inside.y1, text
    assert "swizzled" not in fig.get_suptitle() and "swizzled" in fig.get_supxlabel()
