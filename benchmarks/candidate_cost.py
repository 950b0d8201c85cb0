"""CPU-ms per GEMM candidate in a sweep, warm engine, against a baseline measured in the same run.

    python benchmarks/candidate_cost.py                  # baseline: the un-cached route
    python benchmarks/candidate_cost.py --against main   # also: main's code, in a subprocess

Sweeps (each point run as ``gemm_candidates`` runs it: ``candidate_point``, the analysis and
its table rows):

* ``config``: ``configs/gemm_128x128.yaml`` as shipped (5 candidates, 3 ctaLayouts);
* ``product``: the AMD blog's Part II tile (128x128x64 fp16, 4 warps, 2 stages) over every
  ctaLayout x A layout x B layout of that config (3 x 3 x 3 = 27 candidates, some infeasible);
* ``space``: the same tile over those ctaLayouts x every other shared layout of the layout
  search's space for A and for B (``search_space.shared_choices``: 3 x 8 x 8 = 192);
* ``search``: the layout search on the Part II tile, first 20 ctaLayouts, no pruning (every
  point scored, the distinct ones simulated): CPU-ms per scored candidate.

Timed with ``time.process_time``: the best of ``--repeat`` runs of the whole sweep, the caches
emptied before each run, so a run is a fresh sweep that computes what its candidates share
once. Baselines: ``uncached`` empties the caches before every candidate (each one pays for its
own layouts, lowerings, allocation and simulations; not for ``search``, whose caches are its
Scorer's); ``--against REV`` exports REV (``git archive``) to a temporary directory and runs the
same sweeps there in a subprocess (its numba cache kept per commit, so only the first use
compiles). The engine is compiled and warmed before anything is timed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from pathlib import Path

import yaml
from revision import measure_at

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "gemm_128x128.yaml"


def _clear() -> None:
    """Empty the analysis caches (a no-op on code that has none)."""
    from wgpsim.microbench import gemm

    getattr(gemm, "clear_caches", lambda: None)()


def _configs() -> dict:
    raw = yaml.safe_load(CONFIG.read_text())
    cands = raw["candidates"]
    ctas = {}
    for c in cands.values():
        ctas.setdefault(json.dumps(c["cta_layout"], sort_keys=True), c["cta_layout"])
    a_specs = {json.dumps(c["a"], sort_keys=True): c["a"] for c in cands.values()}
    b_specs = {json.dumps(c["b"], sort_keys=True): c["b"] for c in cands.values()}
    product = {
        f"c{i}": {"cta_layout": cta, "a": a, "b": b}
        for i, (cta, a, b) in enumerate(
            itertools.product(ctas.values(), a_specs.values(), b_specs.values())
        )
    }
    part2 = {**raw, "block": [128, 128, 64], "stages": 2, "engine": "fast", "candidates": product}
    from wgpsim.search.space import shared_choices

    a_space = [c.spec for c in shared_choices(64, 2)][::2]
    b_space = [c.spec for c in shared_choices(128, 2)][::2]
    space = {
        f"s{i}": {"cta_layout": cta, "a": a, "b": b}
        for i, (cta, a, b) in enumerate(itertools.product(ctas.values(), a_space, b_space))
    }
    return {
        "config": {**raw, "engine": "fast"},
        "product": part2,
        "space": {**part2, "candidates": space},
    }


def _sweep(raw: dict):
    from wgpsim.microbench.gemm_candidates import candidate_point, parse_config
    from wgpsim.sweeps.config import ConfigSource

    source = ConfigSource(CONFIG.name, CONFIG.parent)
    cfg = parse_config(raw, source)
    return [s.name for s in cfg.candidates], lambda name: candidate_point(cfg, source, name)


def _best(run, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def measure(repeat: int, uncached: bool) -> dict:
    """CPU-ms per candidate of each sweep (and of the un-cached route when asked)."""
    out = {}
    for name, raw in _configs().items():
        names, point = _sweep(raw)
        for n in names:  # warm: the engine, imports
            point(n)

        def fresh(names=names, point=point):
            _clear()
            for n in names:
                point(n)

        def each(names=names, point=point):
            for n in names:
                _clear()
                point(n)

        out[name] = {"candidates": len(names), "ms": 1e3 * _best(fresh, repeat) / len(names)}
        if uncached:
            out[name]["uncached_ms"] = 1e3 * _best(each, repeat) / len(names)
    out["search"] = _search(repeat)
    return out


def _search(repeat: int) -> dict:
    from wgpsim.hw import load_hardware
    from wgpsim.microbench.candidates import Gemm
    from wgpsim.search.search import SearchProblem, search

    hw = load_hardware()
    gemm = Gemm((128, 128, 64), "fp16", 4, (16, 16, 32))
    problem = SearchProblem(gemm, cta_list=tuple(SearchProblem(gemm).ctas()[:20]))
    search(SearchProblem(gemm, cta=problem.cta_list[0]), hw)  # warm
    scored = search(problem, hw, prune=False).scored
    return {
        "candidates": scored,
        "ms": 1e3 * _best(lambda: search(problem, hw, prune=False), repeat) / scored,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per sweep; the best is kept")
    parser.add_argument("--against", help="also run the sweeps on this git revision (e.g. main)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    now = measure(args.repeat, True)
    other = None
    if args.against:
        other = measure_at(args.against, "candidate_cost", f"measure({args.repeat}, False)")
        if other is None:
            parser.error(f"--against {args.against}: not a git revision")
    for name, got in now.items():
        line = f"{name:8} {got['candidates']:5d} candidates: {got['ms']:6.2f} CPU-ms per candidate"
        if "uncached_ms" in got:
            u = got["uncached_ms"]
            line += f"; un-cached route {u:6.2f} ({u / got['ms']:.1f}x)"
        if other is not None:
            o = other[name]["ms"]
            line += f"; {args.against} {o:6.2f} ({o / got['ms']:.1f}x)"
        print(line)


if __name__ == "__main__":
    main()
