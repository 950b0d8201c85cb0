"""The mutation check: do the tests catch a small bug in either statement of the rules?

A plain script (not a test), run by ``.ci/run``: ``python scripts/mutation_check.py [--list]
[--only NAME ...] [--jobs 2]``. It copies the package and the tests into temporary directories
(one per job; the worktree is never touched), checks that the tests pass there, then applies each mutant of ``MUTANTS`` in turn to that copy (one
small textual change to one rule, in the plain reference ``wgpsim/hw/rules.py`` / ``des`` or
in the fast engine's compiled kernels), runs ``TESTS`` there with ``pytest -x`` and the CI
hypothesis profile (derandomized), and restores the file. A mutant is caught when a test
fails. It prints one line per mutant and ``N/N mutants caught``; it exits 1 if any mutant
survives (add the test that catches it) or if a mutant no longer applies (its ``old`` text is
not in its file exactly once: update the list with the code).

Numba validates a cached function only against its own file, and ``run_loop`` inlines the
helpers of ``_fast_grant`` and ``_fast_heaps``: so each mutant of the fast engine runs with a
copy of the warm cache from which the stale functions are removed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = (
    "tests/test_hw_rules.py",
    "tests/test_engine_fast_rules.py",
    "tests/test_engine_limits.py",
    "tests/test_engine_des.py",
    "tests/test_engine_differential.py",
    "tests/test_engine_tdm.py",
)
"""The test files run against a mutant of the plain rules, fastest to fail first (``-x``)."""
TESTS_FAST = (
    "tests/test_engine_fast_rules.py",
    "tests/test_engine_limits.py",
    "tests/test_engine_differential.py",
    "tests/test_engine_des.py",
    "tests/test_engine_tdm.py",
)
"""The test files run against a mutant of the fast engine (the des-only files cannot fail)."""
COPIED = ("wgpsim", "tests", "configs", "pyproject.toml")
INLINED = {"_fast_grant", "_fast_heaps", "_fast_loop"}
"""Modules of compiled code that ``_fast_loop.run_loop`` inlines (its cache goes stale)."""
TIMEOUT = 600
"""Seconds one mutant's tests may take; a mutant that hangs them counts as caught."""


@dataclass(frozen=True)
class Mutant:
    """``old`` -> ``new`` in ``path`` (each ``old`` exactly once); ``what`` says the bug."""

    name: str
    path: str
    changes: tuple[tuple[str, str], ...]
    what: str


RULES, DES, CONFIG = "wgpsim/hw/rules.py", "wgpsim/engine/des_lds.py", "wgpsim/hw/config.py"
LANES = "wgpsim/engine/_fast_passes.py"  # the lane groups and bank counts the kernels take
PASSES, GRANT, LOOP = (
    "wgpsim/engine/_fast_pass_kernels.py",
    "wgpsim/engine/_fast_grant.py",
    "wgpsim/engine/_fast_loop.py",
)

MUTANTS = (
    # -- the plain reference (wgpsim/hw/rules.py, des) ------------------------------------------
    Mutant(
        "rules.bank_count",
        CONFIG,
        (
            (
                "        return store if writes and store is not None else self.banks.count\n",
                "        return store if writes and store is not None else self.banks.count // 2\n",
            ),
        ),
        "half the banks",
    ),
    Mutant(
        "rules.broadcast",
        RULES,
        (("    distinct[:, 1:] &= dwords[:, 1:] != dwords[:, :-1]", "    pass"),),
        "lanes reading one dword count it twice",
    ),
    Mutant(
        "rules.b128_lane_groups",
        RULES,
        (("parity ^= (lanes >> bit) & 1", "parity ^= (lanes >> (bit - 1)) & 1"),),
        "lane bit 3 instead of 4 selects the b128 pass",
    ),
    Mutant(
        "rules.dword_span",
        RULES,
        (
            (
                "touched = (addr[..., None] >= 0) & (dwords <= last[..., None])",
                "touched = (addr[..., None] >= 0) & (dwords < last[..., None])",
            ),
        ),
        "a lane touches one dword too few",
    ),
    Mutant(
        "rules.last_byte_partition",
        RULES,
        (("np.where(active, first | last, 0)", "np.where(active, first, 0)"),),
        "a lane straddling a partition boundary touches only its first",
    ),
    Mutant(
        "rules.conflict_in_service",
        RULES,
        (
            (
                "    for partitions in state.held:\n        taken |= partitions\n",
                "    for partitions in state.held:\n        taken |= 0\n",
            ),
        ),
        "a pass in service holds no partition",
    ),
    Mutant(
        "rules.conflict_same_cycle",
        RULES,
        (("            taken |= head.partitions\n", "            taken |= 0\n"),),
        "two heads granted in one cycle may share a partition",
    ),
    Mutant(
        "rules.grant_order",
        RULES,
        (
            (
                "order = sorted(heads, key=lambda h: policy.rank(h, state.favor, npairs))",
                "order = sorted(heads, key=lambda h: policy.rank(h, state.favor, npairs), reverse=True)",
            ),
        ),
        "youngest head first",
    ),
    Mutant(
        "rules.tie_alternation",
        RULES,
        (
            (
                "return (favor + 1) % npairs if tie and self.tie_break",
                "return favor if tie and self.tie_break",
            ),
        ),
        "ties never alternate",
    ),
    Mutant(
        "rules.round_robin_turn",
        RULES,
        (("return (granted[0][0] + 1) % npairs if granted else favor", "return favor"),),
        "round_robin never passes the turn on",
    ),
    Mutant(
        "des.skip_a_cycle",
        DES,
        (
            (
                "        return max(min(times), now + 1)\n",
                "        return max(min(times), now + 2)\n",
            ),
        ),
        "the tick after a wait comes one cycle late",
    ),
    Mutant(
        "des.lds_latency",
        DES,
        (
            (
                "self.complete(instr.warp, now + cycles + self.latency)\n",
                "self.complete(instr.warp, now + cycles + self.latency + 1)\n",
            ),
        ),
        "a load completes one cycle late",
    ),
    Mutant(
        "des.issue_interval",
        DES,
        (("self.simd_next[simd] = now + self.interval", "self.simd_next[simd] = now + 1"),),
        "a SIMD issues every cycle whatever issue_interval says",
    ),
    Mutant(
        "des.queue_depth",
        DES,
        (
            (
                "        return len(pair.queue) < self.depth\n",
                "        return len(pair.queue) <= self.depth\n",
            ),
        ),
        "a pair's queue holds one instruction more",
    ),
    Mutant(
        "des.tdm_counts_rows",
        DES,
        (
            (
                "self.tdm_last = ((trace.op == TDM) & (trace.arg == 1)).tolist()",
                "self.tdm_last = (trace.op == TDM).tolist()",
            ),
        ),
        "wait_tensor counts the TDM's rows, not its instructions",
    ),
    # -- the fast engine's compiled statement ------------------------------------------------
    Mutant(
        "fast.bank_count",
        LANES,
        (
            (
                "else hw.banks.count,\n",
                "else hw.banks.count // 2,\n",
            ),
        ),
        "half the banks",
    ),
    Mutant(
        "fast.broadcast",
        PASSES,
        (
            ("            if b >= nrows or rows[b] != bank_row:", "            if True:"),
            (
                "                while b < nrows and rows[b] != bank_row:\n                    b += 1\n",
                "                b = nrows\n",
            ),
        ),
        "every lane's bank row counted apart: lanes reading one dword count it twice",
    ),
    Mutant(
        "fast.broadcast_beyond_64_banks",
        PASSES,
        (("first = first and dwords[j] != dwords[i]", "first = first and True"),),
        "with more than 64 banks, lanes reading one dword count it twice",
    ),
    Mutant(
        "fast.b128_lane_groups",
        LANES,
        (
            (
                "weights = [sum(1 << b for b in mask) for mask in masks]",
                "weights = [sum(1 << (b - 1) for b in mask) for mask in masks]",
            ),
        ),
        "lane bit 3 instead of 4 selects the b128 pass",
    ),
    Mutant(
        "fast.last_byte_partition",
        PASSES,
        (("_div(a + w - 1, part_size)", "_div(a, part_size)"),),
        "a lane straddling a partition boundary touches only its first",
    ),
    Mutant(
        "fast.conflict_rule",
        GRANT,
        (
            (
                "        if policy[2] and heads[PARTS, h] & taken:\n",
                "        if policy[2] and heads[PARTS, h] & taken & 0:\n",
            ),
        ),
        "no partition conflict ever",
    ),
    Mutant(
        "fast.grant_order",
        GRANT,
        (
            (
                "while j >= 0 and _key(heads, order[j], policy, favor, npairs) > key:",
                "while j >= 0 and _key(heads, order[j], policy, favor, npairs) < key:",
            ),
        ),
        "youngest head first",
    ),
    Mutant(
        "fast.tie_alternation",
        GRANT,
        (
            (
                "return granted, stalled, _after(favor + 1, 0, npairs) if tie else favor",
                "return granted, stalled, favor",
            ),
        ),
        "ties never alternate",
    ),
    Mutant(
        "fast.round_robin_turn",
        GRANT,
        (("_after(out[0, 0] + 1, 0, npairs) if granted else favor", "favor"),),
        "round_robin never passes the turn on",
    ),
    Mutant(
        "fast.skip_a_cycle",
        LOOP,
        (("    return max(step, now + 1)\n", "    return max(step, now + 2)\n"),),
        "the step after a wait comes one cycle late",
    ),
    Mutant(
        "fast.lds_latency",
        LOOP,
        (
            (
                "complete(st, head.warp, now + cycles + hw.lds_latency)",
                "complete(st, head.warp, now + cycles + hw.lds_latency + 1)",
            ),
        ),
        "a load completes one cycle late",
    ),
    Mutant(
        "fast.issue_interval",
        LOOP,
        (("simd.next_issue = now + hw.issue_interval", "simd.next_issue = now + 1"),),
        "a SIMD issues every cycle whatever issue_interval says",
    ),
    Mutant(
        "fast.tdm_counts_rows",
        LOOP,
        (
            (
                "    if tr.args[row] == 1:\n        st.warps[w].tensors += 1",
                "    if True:\n        st.warps[w].tensors += 1",
            ),
        ),
        "wait_tensor counts the TDM's rows, not its instructions",
    ),
    Mutant(
        "fast.queue_depth",
        LOOP,
        (("if start < end and pair.len >= depth:", "if start < end and pair.len >= depth - 1:"),),
        "a pair's queue holds one instruction fewer",
    ),
)


def apply(mutant: Mutant, text: str) -> str:
    """``text`` with the mutant's changes; ValueError if one does not apply exactly once."""
    for old, new in mutant.changes:
        if text.count(old) != 1:
            raise ValueError(
                f"{mutant.name}: {old!r} occurs {text.count(old)} times in {mutant.path}"
            )
        text = text.replace(old, new)
    compile(text, mutant.path, "exec")
    return text


def run_tests(
    copy: Path, cache: Path, tests: tuple[str, ...], show_failure: bool = False
) -> tuple[int, float]:
    """``pytest -x tests`` in the copy: (return code, seconds); -1 on timeout."""
    env = {**os.environ, **JIT, "PYTHONPATH": str(copy), "CI": "1", "NUMBA_CACHE_DIR": str(cache)}
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    start = time.perf_counter()
    with subprocess.Popen(
        command,
        cwd=copy,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    ) as proc:
        try:
            out, _ = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            return -1, time.perf_counter() - start
    if show_failure and proc.returncode:
        print(out.decode(errors="replace")[-3000:])
    return proc.returncode, time.perf_counter() - start


def mutant_cache(warm: Path, mutant: Mutant, into: Path) -> Path:
    """The warm numba cache without the functions a fast-engine mutant makes stale."""
    if into.exists():
        shutil.rmtree(into)
    shutil.copytree(warm, into)
    stem = Path(mutant.path).stem
    stale = {stem} | (INLINED if stem in INLINED else set())
    for f in into.rglob("*.nb[ic]"):
        if f.name.split(".")[0] in stale:
            f.unlink()
    return into


JIT = {"WGPSIM_FAST_KERNELS": "jit"}
"""The copies run the fast engine on numba's JIT: a mutant changes the kernels' sources, so a
built engine (``wgpsim.engine._fast_backend``) would be rebuilt for each (twice the JIT's
compile); both compile the same sources."""

WARM_UP = (
    "from wgpsim.engine import simulate\n"
    "from wgpsim.trace.generate import streaming_trace\n"
    "simulate(streaming_trace(4, 2, 'ds_load_b128', lambda w: 0, timed=True), engine='fast')\n"
)
"""Compiles the fast engine into a copy's numba cache (what the unmutated run does in copy 0)."""


def make_copy(into: Path) -> Path:
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            ignore = shutil.ignore_patterns("__pycache__", ".hypothesis", "*.nbi", "*.nbc")
            shutil.copytree(src, into / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(src, into / name)
    return into


def check(mutant: Mutant, copy: Path, warm: Path, mutated: str) -> tuple[bool, str]:
    """Run the tests on ``copy`` with ``mutant`` applied: (caught, the line to print)."""
    target = copy / mutant.path
    original, stamp = target.read_text(), target.stat()
    target.write_text(mutated)
    fast = not mutant.path.startswith(("wgpsim/hw/", "wgpsim/engine/des"))
    cache = mutant_cache(warm, mutant, warm.with_name(warm.name + "-mutant")) if fast else warm
    try:
        code, seconds = run_tests(copy, cache, TESTS_FAST if fast else TESTS)
    finally:
        target.write_text(original)
        os.utime(target, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    verdict = {1: "caught", -1: "caught (tests timed out)"}.get(code, f"SURVIVED (pytest {code})")
    return code in (1, -1), f"{mutant.name:32} {verdict:24} {seconds:5.0f} s  {mutant.what}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutants")
    parser.add_argument("--jobs", type=int, default=2, help="copies tested at once (default 2)")
    args = parser.parse_args(argv)
    mutants = [m for m in MUTANTS if not args.only or m.name in args.only]
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:32} {m.path:34} {m.what}")
        return 0
    jobs = max(1, min(args.jobs, len(mutants)))
    with tempfile.TemporaryDirectory(prefix="wgpsim-mutants-") as tmp:
        copies = [make_copy(Path(tmp) / f"repo{i}") for i in range(jobs)]
        caches = [Path(tmp) / f"numba{i}" for i in range(jobs)]
        mutated = {m.name: apply(m, (ROOT / m.path).read_text()) for m in mutants}  # all apply
        with ThreadPoolExecutor(jobs) as pool:
            warm_ups = [
                pool.submit(warm_up, c, w) for c, w in zip(copies[1:], caches[1:], strict=True)
            ]
            code, seconds = run_tests(copies[0], caches[0], TESTS, show_failure=True)
            print(
                f"unmutated: {'pass' if code == 0 else f'FAIL (pytest {code})'} ({seconds:.0f} s)"
            )
            if code != 0 or not all(w.result() for w in warm_ups):
                return 1
            lock, caught = threading.Lock(), []

            def work(i: int) -> None:
                for m in mutants[i::jobs]:
                    ok, line = check(m, copies[i], caches[i], mutated[m.name])
                    with lock:
                        caught.append(ok)
                        print(line, flush=True)

            for future in [pool.submit(work, i) for i in range(jobs)]:
                future.result()
    print(f"{sum(caught)}/{len(caught)} mutants caught")
    return 0 if all(caught) else 1


def warm_up(copy: Path, cache: Path) -> bool:
    env = {**os.environ, **JIT, "PYTHONPATH": str(copy), "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-c", WARM_UP], cwd=copy, env=env).returncode == 0


if __name__ == "__main__":
    sys.exit(main())
