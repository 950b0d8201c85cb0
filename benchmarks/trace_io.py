"""How fast a Parquet trace is read, per 1 M rows, beside the format before and the replay.

A plain script (not a test): ``python benchmarks/trace_io.py [--instructions 1000000]
[--repeat 5]``. It builds the streaming trace of ``benchmarks/memory.py`` (8 warps of
``ds_load_b128``, a ``wait_ds`` every 32 loads) and, as a second case, the same trace with
random aligned lane addresses (nothing to compress), and writes each twice in a temporary
directory:

- ``write_trace``: the current format (``addr`` as 128-byte values, one row group, LZ4), read
  a whole row group at a time into numpy without a copy;
- the baseline, ``write_list_parquet`` below: the format written before (``addr`` a
  ``fixed_size_list<int32>[32]``, pyarrow's defaults: Snappy, dictionary pages), which
  ``read_parquet`` still reads by its old route (batches of 8192 rows through
  ``flatten().fill_null(-1).to_numpy()`` into preallocated arrays), validated by the old route
  too (``validate`` lane by lane, its whole-block screen ``_clean`` turned off).

Timed (CPU seconds, ``time.process_time``, best of ``--repeat``): ``read_trace(path,
check=False)`` (decoding and the reader's own checks: types, nulls, op names, value ranges),
``read_trace(path)`` (plus ``validate``), and the replay of the trace read with the fast engine
(``simulate(trace, engine="fast")``; its validation is already done, so this is the engine).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from memory import make_trace  # noqa: E402

MB = 1 << 20


def write_list_parquet(trace, path: Path) -> Path:
    """The baseline: ``write_parquet`` as it was before (``addr`` a fixed_size_list)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from wgpsim.trace.instructions import LANES, OPS

    addr = pa.FixedSizeListArray.from_arrays(pa.array(trace.addr.ravel(), pa.int32()), LANES)
    table = pa.table(
        {
            "warp": pa.array(trace.warp, pa.int32()),
            "op": pa.DictionaryArray.from_arrays(pa.array(trace.op, pa.int16()), pa.array(OPS)),
            "arg": pa.array(trace.arg, pa.int64()),
            "addr": addr,
        }
    ).replace_schema_metadata(
        {
            "wgpsim.num_warps": str(trace.num_warps),
            "wgpsim.labels": json.dumps(list(trace.labels)),
        }
    )
    pq.write_table(table, path)
    return path


def random_lanes(trace, seed: int = 0):
    """``trace`` with each active lane at a random 16-byte aligned LDS address."""
    from wgpsim.trace.trace import Trace

    rng = np.random.default_rng(seed)
    lanes = rng.integers(0, (320 << 10) // 16, trace.addr.shape) * 16
    addr = np.where(trace.addr >= 0, lanes, -1)
    return Trace(trace.warp, trace.op, trace.arg, addr, trace.labels, trace.num_warps)


@contextlib.contextmanager
def lane_by_lane(old: bool):
    """With ``old``: ``validate`` as before, every block checked lane by lane."""
    module = importlib.import_module("wgpsim.trace.validate")
    screen = module._clean
    if old:
        module._clean = lambda *args: False
    try:
        yield
    finally:
        module._clean = screen


def best_cpu(run, repeat: int) -> tuple[float, object]:
    """The least CPU time of ``repeat`` calls of ``run()``, and its result (each call starts
    with the previous result freed, as a fresh process would)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        result = None
        t0 = time.process_time()
        result = run()
        best = min(best, time.process_time() - t0)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instructions", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure (best is shown)")
    args = parser.parse_args()
    from wgpsim.engine import simulate
    from wgpsim.trace.io import read_trace, write_trace

    simulate(make_trace(64), engine="fast")  # compile or load the compiled cache first
    stream = make_trace(args.instructions)
    per = 1e6 / len(stream)
    print(f"{len(stream):,} rows, CPU s per 1 M rows, best of {args.repeat}")
    print(
        f"{'case':<8}{'format':<22}{'file MB':>8}{'read':>8}{'x':>6}"
        f"{'read+check':>11}{'x':>6}{'replay':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for case, trace in (("stream", stream), ("random", random_lanes(stream))):
            files = {
                "list (baseline)": write_list_parquet(trace, Path(tmp) / f"{case}-list.parquet"),
                "128-byte rows": write_trace(trace, Path(tmp) / f"{case}.parquet"),
            }
            base = None
            for name, path in files.items():
                read, got = best_cpu(lambda p=path: read_trace(p, check=False), args.repeat)
                with lane_by_lane(base is None):
                    checked, got = best_cpu(lambda p=path: read_trace(p), args.repeat)
                assert got == trace, f"{name}: the trace read differs from the one written"
                replay, _ = best_cpu(lambda t=got: simulate(t, engine="fast"), args.repeat)
                base = base or (read, checked)
                print(
                    f"{case:<8}{name:<22}{path.stat().st_size / MB:8.1f}{read * per:8.3f}"
                    f"{base[0] / read:6.1f}{checked * per:11.3f}{base[1] / checked:6.1f}"
                    f"{replay * per:8.3f}"
                )
    print("x: the baseline's time over this row's (read: decoding and the reader's checks;")
    print("read+check: plus validate(); replay: simulate(engine='fast') of the trace read)")


if __name__ == "__main__":
    main()
