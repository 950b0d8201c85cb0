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
    assert "timing.lds_latency=40" in fig.axes[0].get_title()
    assert BANDWIDTH_BURSTS in fig.axes[0].get_title()


def test_unknown_hardware_field_gets_did_you_mean():
    with pytest.raises(ConfigError, match="did you mean 'lds_latency'"):
        run_experiment(CONFIG, overrides=["timing.lds_latncy=40"])
