"""A profiler's LDS counters for the probes beside the ones wgpsim simulates for them.

rocprofv3 / rocprof-compute count ``SQ_INSTS_LDS`` (LDS instructions), ``SQ_LDS_IDX_ACTIVE``
and ``SQ_LDS_BANK_CONFLICT`` (cycles; :mod:`wgpsim.measures.metrics` gives the definitions
and wgpsim's counterparts) per dispatch; a probe kernel is one workgroup, so one dispatch of it
is one simulated run. The measured value is the median over the kernel's dispatches.

>>> import pandas as pd
>>> from wgpsim.calibration.probes import probe
>>> counters = pd.DataFrame({"kernel": ["banks_s256"] * 2, "dispatch": [0, 0],
...     "counter": ["SQ_LDS_IDX_ACTIVE", "SQ_INSTS_LDS"], "value": [128.0, 2.0]})
>>> compare_counters(counters, [probe("banks_s256")])[["counter", "measured", "simulated"]]
             counter  measured  simulated
0       SQ_INSTS_LDS       2.0          2
1  SQ_LDS_IDX_ACTIVE     128.0        128
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from wgpsim.calibration.probe_traces import probe_trace
from wgpsim.calibration.probes import Probe
from wgpsim.calibration.rocprof_csv import LDS_COUNTERS
from wgpsim.engine import simulate
from wgpsim.errors import ModuleError
from wgpsim.hw.config import HardwareConfig, load_hardware
from wgpsim.measures.metrics import NAMES, lds_metrics

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["compare_counters"]

#: rocprof counter -> the LdsMetrics field that simulates it
SIMULATED = {
    "SQ_INSTS_LDS": "lds_instructions",
    "SQ_LDS_IDX_ACTIVE": "idx_active",
    "SQ_LDS_BANK_CONFLICT": "bank_conflict",
}
assert set(SIMULATED) == set(LDS_COUNTERS) and set(SIMULATED.values()) <= set(NAMES)


def compare_counters(
    counters: pd.DataFrame, probes: Sequence[Probe], hw: HardwareConfig | None = None
) -> pd.DataFrame:
    """Per probe kernel and LDS counter present in ``counters`` (``read_counters``' table):
    measured (median over dispatches), simulated, and their ratio."""
    import pandas as pd

    hw = load_hardware() if hw is None else hw
    by_name = {p.name: p for p in probes}
    lds = counters[counters["counter"].isin(LDS_COUNTERS)]
    kernels = [k for k in dict.fromkeys(lds["kernel"]) if k in by_name]
    if not kernels:
        raise ModuleError(
            "counters: no LDS counter (SQ_INSTS_LDS, SQ_LDS_IDX_ACTIVE, SQ_LDS_BANK_CONFLICT) "
            "of a probe kernel"
        )
    per_dispatch = lds.groupby(["kernel", "counter", "dispatch"], sort=False)["value"].sum()
    measured = per_dispatch.groupby(level=["kernel", "counter"], sort=False).median()
    rows = []
    for kernel in kernels:
        metrics = lds_metrics(simulate(probe_trace(by_name[kernel]), hw))
        for counter in LDS_COUNTERS:
            if (kernel, counter) not in measured.index:
                continue
            got = float(measured[(kernel, counter)])
            sim = int(getattr(metrics, SIMULATED[counter]))
            rows.append(
                {
                    "probe": kernel,
                    "counter": counter,
                    "measured": got,
                    "simulated": sim,
                    "ratio": sim / got if got else float("nan"),
                }
            )
    return pd.DataFrame(rows, columns=["probe", "counter", "measured", "simulated", "ratio"])
