"""Issue 23's table: ``wgpsim kernel`` on the corpus of kernels other people wrote.

Runs wgpsim (its report and its loop program, as ``wgpsim kernel`` and ``wgpsim.kernel.loop``
do, and the loop timing) on every fixture of ``tests/corpus_others`` (Triton 3.9.0 compiles for
gfx1250; ``tests/corpus_others/regenerate.py`` writes them) and prints the issue's table, then
one line per failing kernel naming each failed check's cause. The checks are
``tests/corpus_others/checks.py``'s::

    python benchmarks/kernel_corpus_check.py            # the table and the causes
    python benchmarks/kernel_corpus_check.py --json     # per kernel and check, for scripts
    python benchmarks/kernel_corpus_check.py --target gfx950   # the gfx950 compiles (issue 27)

No triton needed (the fixtures are stored). About 10 s on this 2-core machine once the fast
engine is compiled.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from corpus_others import checks  # noqa: E402

ROWS = (
    ("ds", "loops", "ds_* per loop iteration = the assembly's loop body"),
    ("ds", "straight", "kernels without a loop: ds_* = the assembly's"),
    ("lds_bytes", "kernels", "LDS bytes = Triton's ttg.shared"),
    ("offsets", "kernels", "every buffer at Triton's offset"),
    ("clean", "kernels", "runs clean"),
    ("local_load", "kernels", "every local_load matches the assembly"),
)


def table(
    results: dict[str, dict[str, checks.Check]], target: str = "gfx1250"
) -> list[tuple[str, str]]:
    """(row, figure) of the issue's table."""
    out = []
    looped = {n for n in results if checks.expected(n, target)["assembly"]["loops"]}
    for check, over, text in ROWS:
        if over == "loops":
            ok = sum(results[n][check].ok for n in looped)
            of = sum(results[n][check].of for n in looped)
            figure = f"{ok} of {of} loops ({len(looped)} kernels)"
        else:
            names = [n for n in results if over != "straight" or n not in looped]
            applies = [n for n in names if results[n][check].passed is not None]
            ok = sum(bool(results[n][check].passed) for n in applies)
            figure = f"{ok} of {len(applies)}"
        out.append((text, figure))
    return out


def causes(results: dict[str, dict[str, checks.Check]]) -> list[str]:
    """One line per failing kernel: each failed check and its cause."""
    lines = []
    for name, res in results.items():
        bad = [f"{c} ({r.detail}): {r.cause}" if r.detail else f"{c}: {r.cause}"
               for c, r in res.items() if r.passed is False]  # fmt: skip
        if bad:
            lines.append(f"{name}: " + " | ".join(bad))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="per kernel and check, as JSON")
    parser.add_argument(
        "--target", choices=checks.TARGETS, default="gfx1250", help="whose compiles to check"
    )
    args = parser.parse_args(argv)
    t = args.target
    results = {n: checks.check_kernel(n, t) for n in checks.compiled(t)}
    if args.json:
        doc = {n: {c: vars(r) for c, r in res.items()} for n, res in results.items()}
        doc["not_compiled"] = checks.not_compiled(t)
        print(json.dumps(doc, indent=1))
        return 0
    print(f"| check on the {len(results)} kernels ({t}) | now |")
    print("|---|---|")
    for text, figure in table(results, t):
        print(f"| {text} | {figure} |")
    for name, err in checks.not_compiled(t).items():
        print(f"not compiled by Triton: {name}: {err}")
    print()
    print("\n".join(causes(results)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
