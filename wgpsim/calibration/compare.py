"""Simulated against measured: per probe, the model's span beside the device's, their ratio and
error, and the mean absolute percentage error per family (``wgpsim compare``). The model
compared with its own predictions has no error:

>>> from wgpsim.calibration.fit import predict
>>> from wgpsim.calibration.probes import catalogue
>>> per_probe, per_family = compare(predict(catalogue()), catalogue())
>>> float(per_family["mape_percent"].max()), per_probe["ratio"].unique().tolist()
(0.0, [1.0])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from wgpsim.calibration.fit import joined, spans
from wgpsim.calibration.probes import Probe
from wgpsim.hw.config import HardwareConfig, load_hardware

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["compare"]


def compare(measured: pd.DataFrame, probes: Sequence[Probe], hw: HardwareConfig | None = None):
    """Per probe: measured (median over warps and runs), simulated (median over warps), their
    ratio and absolute percentage error; and the mean absolute percentage error per family.
    Returns ``(per_probe, per_family)`` DataFrames."""
    import pandas as pd

    hw = load_hardware() if hw is None else hw
    used, _ = joined(measured, probes)
    rows = []
    medians = measured.groupby("probe")["cycles"].median()
    for p in used:
        sim = float(np.median(spans(p, hw)))
        got = float(medians[p.name])
        rows.append(
            {
                "probe": p.name,
                "family": p.family,
                "measured": got,
                "simulated": sim,
                "ratio": sim / got if got else float("nan"),
                "error_percent": 100 * abs(sim - got) / got if got else float("nan"),
            }
        )
    per_probe = pd.DataFrame(rows)
    per_family = (
        per_probe.groupby("family", sort=False)["error_percent"]
        .agg(probes="size", mape_percent="mean")
        .reset_index()
    )
    return per_probe, per_family
