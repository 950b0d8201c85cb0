"""Measured beside simulated for the lane-pair probes (``wgpsim compare`` on a gfx942 / gfx950
kit): per probe, the extra conflict cycles per instruction the device showed (its
``SQ_LDS_BANK_CONFLICT`` or span over the one-lane launch, / ``REPEATS``) and the model's count
for the same probe (:func:`wgpsim.calibration.lanes.traces.simulated_values`), and whether both
call the pair a conflict; per instruction and family, how many probes agree.

>>> from wgpsim.calibration.lanes.pairs import catalogue
>>> probes = [p for p in catalogue("gfx942") if p.name in
...     ("ds_read_b32_one_lane", "ds_read_b32_l0_l1", "ds_read_b32_l0_l33")]
>>> measured = {"ds_read_b32_one_lane": 0.0, "ds_read_b32_l0_l1": 16.0, "ds_read_b32_l0_l33": 0}
>>> simulated = {"ds_read_b32_one_lane": 0.0, "ds_read_b32_l0_l1": 16.0, "ds_read_b32_l0_l33": 16}
>>> per_probe, per_op = lane_compare(measured, simulated, probes)
>>> per_probe[["probe", "measured", "simulated", "agrees"]].to_dict("records")[1]
{'probe': 'ds_read_b32_l0_l33', 'measured': 0.0, 'simulated': 1.0, 'agrees': False}
>>> per_op.to_dict("records")
[{'op': 'ds_read_b32', 'family': 'phase', 'probes': 2, 'agree': 1, 'first_disagreeing': 'ds_read_b32_l0_l33'}]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from wgpsim.calibration.lanes.fit import CONFLICT, extra_cycles
from wgpsim.calibration.probe import Probe

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["lane_compare"]


def lane_compare(
    measured: Mapping[str, float], simulated: Mapping[str, float], probes: Sequence[Probe]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(per_probe, per_op)``: every probe measured and simulated (extra cycles per
    instruction, and whether both say conflict), and per instruction and family the probes
    that agree and the first that does not."""
    import pandas as pd

    got = extra_cycles(measured, probes)
    model = extra_cycles(simulated, probes)
    rows = [
        {
            "probe": p.name,
            "op": p.param("op"),
            "family": p.family,
            "measured": float(got[p.name]),
            "simulated": float(model[p.name]),
            "agrees": (got[p.name] >= CONFLICT) == (model[p.name] >= CONFLICT),
        }
        for p in probes
        if p.name in got and p.name in model
    ]
    per_probe = pd.DataFrame(
        rows, columns=["probe", "op", "family", "measured", "simulated", "agrees"]
    )
    summary = []
    for (op, family), group in per_probe.groupby(["op", "family"], sort=False):
        wrong = group.loc[~group["agrees"], "probe"]
        summary.append(
            {
                "op": op,
                "family": family,
                "probes": len(group),
                "agree": int(group["agrees"].sum()),
                "first_disagreeing": wrong.iloc[0] if len(wrong) else "",
            }
        )
    return per_probe, pd.DataFrame(summary)
