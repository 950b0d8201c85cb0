"""Write the synthetic measurements the calibration walk-through of docs/USAGE.md fits.

They are NOT measured on hardware: they are what wgpsim predicts for a pretend device whose LDS
latency is 40, barrier 15 and lane grouping Triton's, three runs per probe, with seeded Gaussian
noise (standard deviation 2 cycles). The kit recovers those constants from them
(tests/test_calibration.py checks the same round trip).

    python examples/calibration/make_synthetic.py
"""

from pathlib import Path

import numpy as np

from wgpsim.calibration.fit import predict
from wgpsim.calibration.measurements import write_measurements
from wgpsim.calibration.probes import catalogue, write_manifest
from wgpsim.hw.config import load_hardware

HERE = Path(__file__).resolve().parent
PRETEND = {"timing.lds_latency": 40, "timing.barrier_latency": 15, "passes.lane_grouping": "triton"}


def main() -> None:
    frame = predict(catalogue(), load_hardware().with_overrides(**PRETEND))
    frame = frame.loc[frame.index.repeat(3)].reset_index(drop=True)
    frame["repeat"] = frame.groupby(["probe", "warp"]).cumcount()
    noise = np.random.default_rng(2026).normal(0, 2.0, len(frame)).round()
    frame["cycles"] = np.maximum(frame["cycles"] + noise, 0).astype(int)
    write_measurements(frame, HERE / "measurements.csv")
    write_manifest(catalogue(), HERE / "manifest.json")
    print(f"wrote {len(frame)} rows to {HERE / 'measurements.csv'}")


if __name__ == "__main__":
    main()
