"""The ``wgpsim kernel CACHE_ROOT --all --html FILE`` page: the table of every kernel, worst
first, each name linking to the kernel's own sections below (`wgpsim.html.kernel_page`); an
unreadable kernel is a row with its reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wgpsim.html.kernel_page import _hw, chip_words, kernel_sections
from wgpsim.html.page import Raw, document, esc, section, table, write_page

__all__ = ["index_page", "write_index_page"]

HEAD = ("kernel", "folder", "target", "warps", "LDS bytes", "ttg.shared (Triton)", "ds/iter",
        "exposed/iter", "exposed %", "bank conflict cycles", "partition stall cycles",
        "worst op", "line", "note")  # fmt: skip


def _link(anchor: str, text: str) -> Raw:
    return Raw(f'<a href="#{esc(anchor)}">{esc(text)}</a>')


def index_page(root, rows: list[dict[str, Any]], figures: dict[str, Any], hw=None) -> str:
    """The page: ``rows`` of `wgpsim.kernel.table`; ``figures`` by the rows' folder
    (`KernelFigures`, or a reason string)."""
    table_rows, classes, parts = [], [], []
    for i, r in enumerate(rows):
        anchor = f"k{i}"
        fig = figures.get(r["folder"])
        readable = fig is not None and not isinstance(fig, str)
        share = None if r["exposed_share"] is None else 100 * r["exposed_share"]
        name = _link(anchor, r["kernel"]) if readable else r["kernel"]
        table_rows.append((name, r["folder"], r["target"], r["warps"], r["lds_bytes"],
                           r["ttg_shared"], r["loop_instructions"], r["exposed"], share,
                           r["bank_conflicts"], r["partition_stalls"], r["worst_op"],
                           r["worst_line"], r["error"]))  # fmt: skip
        classes.append("removed" if not readable else ("bad" if r["partition_stalls"] else ""))
        if readable:
            parts.append(
                f'<article id="{anchor}" class="kernel"><h2>{esc(r["kernel"])} '
                f"<small>({esc(r['folder'])})</small></h2>"
                + kernel_sections(fig, hw, anchor, level=3)
                + '<p><a href="#index">back to the table</a></p></article>'
            )
    intro = (
        "Every kernel of the cache, worst first: the most exposed LDS cycles per iteration of "
        "its main loop (a warp waiting on LDS). LDS bytes are wgpsim's beside Triton's "
        "ttg.shared; bank-conflict and partition-stall cycles are its ops' in the lock-step "
        "model; the worst op has the most LDS cycles. Click a name for its report, a header "
        "to sort."
    )
    notes = "".join(
        f'<p class="note">{esc(r["kernel"])} ({esc(r["folder"])}): {esc(r["error"])}</p>'
        for r in rows
        if r["error"]
    )
    body = section("index", "Kernels", intro, table(HEAD, table_rows, row_classes=classes), notes)
    title = f"LDS review of {root}"
    chips = chip_words(_hw(hw, f) for f in figures.values() if not isinstance(f, str))
    sub = f"{len(rows)} kernels; wgpsim's static LDS model ({chips or 'no kernel read'})."
    return document(title, body + "".join(parts), sub)


def write_index_page(path, root, rows, figures, hw=None) -> Path:
    return write_page(path, index_page(root, rows, figures, hw))
