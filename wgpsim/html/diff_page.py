"""The ``wgpsim diff OLD NEW --html FILE`` page: per kernel, the regressions the thresholds
found, the totals, ops, buffers and loop old -> new with the change (growth red, a fall green),
then the old and the new report side by side (`wgpsim.html.kernel_page`).
"""

from __future__ import annotations

from pathlib import Path

from wgpsim.html.kernel_page import _hw, chip_words, kernel_sections
from wgpsim.html.page import Raw, document, esc, section, table, write_page
from wgpsim.kernel.diff import change_text, percent_text

__all__ = ["diff_page", "write_diff_page"]

ROW_CLASS = {"added": "added", "removed": "removed", "same": "", "changed": ""}


def _grew(figures: dict) -> str:
    """'bad' when a figure grew, 'good' when one fell and none grew (more is worse here)."""
    changes = [f["change"] for f in figures.values() if f["change"]]
    return "bad" if any(c > 0 for c in changes) else ("good" if changes else "")


def _rows_table(rows: list[dict], title: str) -> str:
    if not rows:
        return ""
    names = list(rows[0]["figures"])
    body = [
        (r["status"], r["key"], *(change_text(r["figures"][n], "→") for n in names)) for r in rows
    ]
    classes = [ROW_CLASS[r["status"]] or _grew(r["figures"]) for r in rows]
    return table(("status", title, *names), body, row_classes=classes)


def _kernel_diff(d, i: int, failed: list[str], hw) -> str:
    mine = [line for line in failed if line.startswith(f"{d.name}: ")]
    verdict = "".join(f'<p class="sentence">REGRESSION {esc(line)}</p>' for line in mine)
    totals = [(k, f["old"], f["new"], f["change"], percent_text(f)) for k, f in d.totals.items()]
    tclass = [_grew({k: f}) for k, f in d.totals.items()]
    parts = [verdict, table(("figure", "old", "new", "change", "change %"), totals,
                            row_classes=tclass)]  # fmt: skip
    parts += ["<h3>Ops (matched by source line and op)</h3>", _rows_table(d.ops, "line op")]
    parts += ["<h3>Buffers</h3>", _rows_table(d.buffers, "buffer")]
    if d.loop is not None:
        lrows = [(k, change_text(f, "→")) for k, f in d.loop.items()]
        parts += ["<h3>Loop, per iteration</h3>", table(("figure", "old → new (change)"), lrows)]
    side = (
        '<div class="side">'
        f"<div><h2>old</h2>{kernel_sections(d.old, hw, f'd{i}old', level=3)}</div>"
        f"<div><h2>new</h2>{kernel_sections(d.new, hw, f'd{i}new', level=3)}</div></div>"
    )
    intro = f"{d.old.path} → {d.new.path}: a red row grew (more cycles, bytes or conflicts), " \
            "a green one fell; blue rows were added, grey ones removed."  # fmt: skip
    return section(f"d{i}", f"{d.name}: old → new", intro, *parts, Raw(side))


def diff_page(diffs, only=(), unreadable=(), failed=(), hw=None) -> str:
    """The page of ``wgpsim diff``'s comparisons (and the kernels only one side has)."""
    parts = [_kernel_diff(d, i, list(failed), hw) for i, d in enumerate(diffs)]
    extra = [(name, f"only in {side}") for name, side in only]
    extra += [(where, f"unreadable: {why}") for where, why in unreadable]
    if extra:
        parts.append(section("unmatched", "Not compared", "Kernels one side lacks or that "
                             "could not be read.", table(("kernel", "why"), extra)))  # fmt: skip
    verdict = f"{len(failed)} regression(s) under the thresholds" if failed else ""
    chips = chip_words(_hw(hw, f) for d in diffs for f in (d.old, d.new)) or "no kernel read"
    sub = f"wgpsim's static LDS model of two compiles ({chips}), old and new. " + verdict
    names = ", ".join(d.name for d in diffs) or "no kernel"
    return document(f"LDS diff: {names}", "".join(parts), sub)


def write_diff_page(path, diffs, only=(), unreadable=(), hw=None, failed=()) -> Path:
    return write_page(path, diff_page(diffs, only, unreadable, failed, hw))
