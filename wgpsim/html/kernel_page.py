"""One kernel's HTML report (``wgpsim kernel PATH --html FILE``), and its sections for the
``--all`` index and the ``diff`` page.

`kernel_sections` holds, for a `wgpsim.kernel.figures.KernelFigures`: the summary;
the kernel's Python source lines with their LDS ops (the file the locations name, when it can
be read); the ops, and per op the lanes-to-banks map of every pass of warp 0 (each distinct
pattern drawn once, conflicted banks red) and which partitions each SIMD pair touches; the
buffers and the LDS map over the partitions; the loop's timeline, tables and what-ifs when the
loop was timed.

>>> from wgpsim.kernel.figures import kernel_figures
>>> page = kernel_page(kernel_figures("examples/kernels/lds_bandwidth_plain", loop=False))
>>> [s in page for s in ('id="k-source"', 'id="k-ops"', 'id="k-buffers"', 'id="k-loop"',
...                     'id="k-passes"')]
[True, True, True, True, True]
"""

from __future__ import annotations

from pathlib import Path

from wgpsim.html.page import Raw, document, esc, number, section, table, write_page
from wgpsim.html.svg import COLORS, bank_pass_svg, lds_map_svg, legend, pairs_svg, timeline_svg
from wgpsim.hw.grouping_sources import instructions_text, marks_legend

__all__ = ["kernel_page", "kernel_sections", "write_kernel_page"]

MAX_PATTERNS = 12
"""Distinct lanes-to-banks patterns drawn per op (the rest are counted)."""
CONTEXT = 2
"""Source lines shown around each line holding an LDS op."""
PARTITION_COLUMNS = ("partition stall cycles", "partitions A|B", "pairs co-located",
                     "partition stall")  # fmt: skip
"""The tables' columns of the LDS partitions, hidden on a chip with one partition (as the text
report hides its own): no partition conflict can happen there."""


def _columns(report, head: tuple, rows: list) -> tuple[tuple, list]:
    """``head`` and ``rows`` without `PARTITION_COLUMNS` when ``report`` was simulated on one
    LDS partition, else as given.

    >>> from types import SimpleNamespace as R
    >>> _columns(R(one_partition=True), ("op", "partition stall"), [("a", 0)])
    (('op',), [('a',)])
    """
    if not report.one_partition:
        return head, rows
    keep = [i for i, h in enumerate(head) if h not in PARTITION_COLUMNS]
    return tuple(head[i] for i in keep), [tuple(r[i] for i in keep) for r in rows]


def _hw(hw, fig=None):
    """``hw`` if given, else the hardware file ``fig`` was simulated on, else MI450's."""
    from wgpsim.hw.config import load_hardware

    if hw is not None:
        return hw
    return fig.hw if fig is not None and fig.hw is not None else load_hardware()


def chip_words(hws) -> str:
    """The chips of hardware files ``hws``, for a page's subtitle: ``mi450, gfx1250`` (the
    file's name, and its arch where that differs), several joined by ``; ``."""
    names = []
    for hw in hws:
        arch = (hw.target or "").removeprefix("hip:")
        names.append(f"{hw.name}, {arch}" if arch and arch != hw.name else hw.name)
    return "; ".join(dict.fromkeys(names))


def _source_file(name: str, kernel_source: str | None) -> list[str] | None:
    """The lines of the Python file a location names: as given (from the working directory),
    else beside the kernel's files or their parents."""
    tries = [Path(name)]
    if kernel_source:
        here = Path(kernel_source).resolve()
        tries += [d / Path(name).name for d in list(here.parents)[:4]]
    for path in tries:
        try:
            if path.is_file() and path.stat().st_size < 4 << 20:
                return path.read_text(errors="replace").splitlines()
        except OSError:
            continue
    return None


def _source_section(fig, anchor: str, level: int = 2) -> str:
    model, ops = fig.report.model, fig.report.ops
    by_file: dict[str, dict[int, list[dict]]] = {}
    for op, row in zip(model.ops if model else (), ops, strict=False):
        if op.loc is not None:
            by_file.setdefault(op.loc.file, {}).setdefault(op.loc.line, []).append(row)
    parts = []
    for name, lines in by_file.items():
        text = _source_file(name, model.source)
        parts.append(f"<h3>{esc(name)}</h3>")
        if text is None:
            rows = [(n, _ops_text(lines[n])) for n in sorted(lines)]
            parts.append(f'<p class="note">{esc(name)} cannot be read here: the lines only.</p>')
            parts.append(table(("line", "LDS ops"), rows))
            continue
        keep = sorted({k for n in lines for k in range(n - CONTEXT, n + CONTEXT + 1)
                       if 1 <= k <= len(text)})  # fmt: skip
        out, prev = [], None
        for k in keep:
            if prev is not None and k != prev + 1:
                out.append("   ⋮")
            src = esc(text[k - 1])
            if k in lines:
                ann = esc("   # " + _ops_text(lines[k]))
                out.append(f'<span class="lds">{k:5d}  {src}<span class="ann">{ann}</span></span>')
            else:
                out.append(f"{k:5d}  {src}")
            prev = k
        parts.append('<pre class="source">' + "\n".join(out) + "</pre>")
    intro = "The kernel's Python source around each line that holds an LDS op (highlighted), " \
            "with the op, its instructions per warp and its LDS cycles in lock step."  # fmt: skip
    return section(f"{anchor}-source", "Source lines and their LDS ops", intro, *parts,
                   _marks(ops), level=level)  # fmt: skip


def _marks(ops) -> str:
    """The legend of the instructions' grouping marks (`marks_legend`), if any is marked."""
    marks = marks_legend(ops)
    return f'<p class="intro">{esc(marks)}</p>' if marks else ""


def _ops_text(rows: list[dict]) -> str:
    out = []
    for r in rows:
        ins = instructions_text(r)
        cyc = "" if r["lds_cycles"] is None else f", {r['lds_cycles']} cycles"
        stall = (
            f" ({r['partition_stall_cycles']} partition stall)"
            if r["partition_stall_cycles"]
            else ""
        )
        out.append(f"{r['op'].split('.', 1)[-1]} {r['name'] or ''}: {ins}{cyc}{stall}")
    return "; ".join(out)


def _op_rows(fig) -> tuple[list, list]:
    rows, classes = [], []
    for op in fig.report.ops:
        pairs = "|".join("-".join(map(str, p)) for p in op["pair_partitions"].values()) or None
        looped = fig.loop_op(op)
        rows.append((op["index"], op["loc"], op["op"].split(".", 1)[-1], op["name"], op["shape"],
                     instructions_text(op), op["bank_conflict_cycles"], op["partition_stall_cycles"], pairs,
                     {None: None, True: "yes", False: "no"}[op["co_located"]],
                     op["lds_cycles"], None if looped is None else looped["exposed"]))  # fmt: skip
        bad = op["bank_conflict_cycles"] or op["partition_stall_cycles"]
        classes.append("bad" if bad else "")
    return rows, classes


def _op_details(fig, low, op, hw, anchor: str) -> str:
    from wgpsim.kernel.op_passes import distinct_patterns, op_passes

    one = fig.report.one_partition
    passes = op_passes(low, hw)
    title = f"#{op['index']} {op['loc']} {op['op'].split('.', 1)[-1]} {op['name'] or ''}"
    if not passes:
        why = (
            op["note"] or "not modelled (no lanes: the copy engine or an op wgpsim does not lower)"
        )
        return f'<details id="{anchor}-op{op["index"]}"><summary>{esc(title)}</summary><p class="note">{esc(why)}</p></details>'
    groups = distinct_patterns(passes)
    figs = []
    for p, where in groups[:MAX_PATTERNS]:
        shown = ", ".join(f"i{k}.p{q}" for k, q in where[:6]) + (" ..." if len(where) > 6 else "")
        cap = (f"{p.instruction} pass {p.pass_index}: {len(where)} pass(es) ({shown}); "
               f"{p.bank_cycles} bank cycle(s)"
               + ("" if one else f"; partitions {','.join(map(str, p.partitions))}"))  # fmt: skip
        figs.append(
            f'<figure class="pass">{bank_pass_svg(p, hw.bank_count(p.instruction))}<figcaption>{esc(cap)}</figcaption></figure>'
        )
    more = len(groups) - MAX_PATTERNS
    extra = f'<p class="note">{more} more distinct patterns not drawn.</p>' if more > 0 else ""
    conflicted = sum(p.bank_cycles > 1 for p in passes)
    head = (f"{len(passes)} passes of warp 0 ({conflicted} with a bank conflict), "
            f"{len(groups)} distinct lanes-to-banks patterns")  # fmt: skip
    pairs = ""
    if op["pair_partitions"] and not one:
        pairs = f"<h4>Partitions each SIMD pair touches</h4>{pairs_svg(op['pair_partitions'], hw)}"
    return (
        f'<details id="{anchor}-op{op["index"]}" class="op"{" open" if conflicted else ""}>'
        f"<summary>{esc(title)}: {esc(head)}</summary>{pairs}"
        f"<h4>Lanes to banks, pass by pass</h4>{''.join(figs)}{extra}</details>"
    )


def _ops_section(fig, hw, anchor: str, level: int = 2) -> str:
    rows, classes = _op_rows(fig)
    head = ("#", "line", "op", "name", "shape", "instructions/warp", "bank conflict cycles",
            "partition stall cycles", "partitions A|B", "pairs co-located", "LDS cycles",
            "exposed/iter")  # fmt: skip
    one = fig.report.one_partition
    what = ["instructions per warp", "bank-conflict cycles (cycles beyond one per pass)",
            "partition-stall cycles", "LDS cycles when all warps issue the op together after a "
            "barrier (the AMD blog's lock-step measurement)", "the partitions SIMD pairs A and B "
            "touch", "the exposed LDS cycles per loop iteration charged to the op"]  # fmt: skip
    if one:
        what = [w for w in what if "partition" not in w]
    intro = (
        f"Every LDS op: {', '.join(what[:-1])} and {what[-1]}. Red rows lose cycles to "
        "conflicts; each op's passes are drawn under 'Lanes to banks' below."
        + (" One LDS partition on this chip: no partition conflicts, no partition columns."
           if one else "")
    )  # fmt: skip
    head, rows = _columns(fig.report, head, rows)
    return section(
        f"{anchor}-ops", "LDS ops", intro, table(head, rows, row_classes=classes),
        _marks(fig.report.ops), level=level,
    )  # fmt: skip


def _passes_section(fig, hw, anchor: str, level: int = 2) -> str:
    details = [
        _op_details(fig, low, op, hw, anchor)
        for low, op in zip(fig.report.lowerings, fig.report.ops, strict=False)
    ]
    pairs = (
        ""
        if fig.report.one_partition
        else (
            "the partitions each SIMD pair touches (red outline: both pairs, where they can "
            "collide), then "
        )
    )
    intro = (
        f"Per op (click to open; ops with bank conflicts are open): {pairs}the passes of "
        "warp 0. In a lanes-to-banks map a row is a lane and a column one of the 64 four-byte "
        "banks; a red column is a bank that serves more than one dword in the pass (the "
        "number above a run of them, ×n: each serves n dwords, n bank cycles). Passes with "
        "the same pattern are drawn once."
    )
    leg = legend([(COLORS["A"], "lane's banks"), ("#d62728", "lane on a conflicted bank"),
                  ("#fbd3d3", "conflicted bank")])  # fmt: skip
    return section(
        f"{anchor}-passes", "Lanes to banks, op by op", intro, leg, *details, level=level
    )


def _buffers_section(fig, hw, anchor: str, level: int = 2) -> str:
    rows = [
        (b["name"], b["shape"], b["encoding"], ",".join(map(str, b["offsets"])) or None,
         b["bytes"], ",".join(map(str, b["partitions"])) or None, f"[{b['live'][0]}, {b['live'][1]})")
        for b in fig.report.buffers
    ]  # fmt: skip
    head = ("buffer", "shape", "encoding", "offsets", "bytes", "partitions", "live")
    leg = legend([(COLORS["A"], "read by pair A"), (COLORS["B"], "read by pair B"),
                  (COLORS["both"], "read by both pairs"), (COLORS["none"], "not read")])  # fmt: skip
    intro = (
        "The shared buffers at their LDS offsets over the 64 KiB physical partitions, each "
        "byte coloured by the SIMD pair whose loads read it: red bytes are read by both pairs "
        "(co-located, where partition conflicts arise)."
    )
    if fig.report.one_partition:
        intro = (
            "The shared buffers at their LDS offsets (one LDS partition on this chip: no "
            "partition conflicts), each byte coloured by the SIMD pair whose loads read it."
        )
    picture = lds_map_svg(fig.report, hw) if fig.report.buffers else ""
    return section(
        f"{anchor}-buffers",
        "Buffers and the LDS map",
        intro,
        table(head, rows),
        picture,
        leg,
        level=level,
    )


def _loop_section(fig, anchor: str, level: int = 2) -> str:
    from matplotlib.colors import to_hex

    from wgpsim.plots.loop_timeline import PAIR_COLOURS, STATES

    title = "The main loop: timeline and what-ifs"
    if fig.loop is None:
        why = fig.loop_error or "not timed: run with --loop-timing for the loop's timeline"
        return section(f"{anchor}-loop", title, why, level=level)
    lp, lt = fig.loop, fig.timing
    intro = (
        f"Loop {lp['loop']} ({lp['source']}), {lp['iterations']} iterations x {lp['num_warps']} "
        "warps simulated; figures per steady iteration. Exposed LDS cycles: a warp waits at "
        "issue, at wait_ds, or at a barrier behind LDS work; hidden: LDS in flight while the "
        "warp works."
    )
    parts = [f'<p class="sentence">{esc(lp["sentence"])}</p>']
    if lt is not None and lt.state is not None:
        parts.append(timeline_svg(lt))
        items = [(to_hex(c), n) for _, n, c in STATES]
        items += [(to_hex(PAIR_COLOURS[i]), f"port pass of pair {p}") for i, p in enumerate("AB")]
        parts.append(legend(items))
    wi = [(n, v["cycles_per_iteration"], v["saves"], v["how"]) for n, v in lp["what_ifs"].items()]
    parts += ["<h3>What if</h3>", table(("what if", "cycles/iter", "saves", "how"), wi)]
    ops = [(o["op"], o["kind"], o["instructions"], o["exposed"], 100 * o["exposed_share"],
            o["latency"], o["bank_conflict_cycles"], o["partition_stall_cycles"])
           for o in lp["ops"]]  # fmt: skip
    ohead = ("op", "kind", "instr/iter", "exposed", "share %", "latency", "bank conflict",
             "partition stall")  # fmt: skip
    parts += ["<h3>Ops in the loop</h3>", table(*_columns(fig.report, ohead, ops))]
    warps = [tuple(w.values()) for w in lp["warps"]]
    parts += ["<h3>Warps</h3>", table(tuple(lp["warps"][0]) if lp["warps"] else (), warps)]
    parts += [f'<p class="note">note: {esc(n)}</p>' for n in lp["notes"]]
    return section(f"{anchor}-loop", title, intro, *parts, level=level)


def _summary(fig) -> str:
    rep = fig.report
    flag = "" if rep.lds_bytes_match is not False else " (differs from Triton's)"
    line = (f"{rep.kernel}: {rep.warps} warps, target {rep.extras.get('target')}; LDS "
            f"{number(rep.lds_bytes)} B (wgpsim){flag}, ttg.shared {number(rep.ttg_shared)} B "
            f"(Triton); from {fig.path or rep.extras.get('source')}")  # fmt: skip
    sentence = fig.loop["sentence"] if fig.loop else None
    note = rep.foreign_note()
    out = f"<p>{esc(line)}</p>" + (f'<p class="note foreign">{esc(note)}</p>' if note else "")
    return out + (f'<p class="sentence">{esc(sentence)}</p>' if sentence else "")


def kernel_sections(fig, hw=None, anchor: str = "k", level: int = 2) -> Raw:
    """Every section of one kernel, anchors prefixed ``anchor``, headings at ``level``."""
    hw = _hw(hw, fig)
    nav = "".join(
        f'<a href="#{anchor}-{s}">{t}</a>'
        for s, t in (
            ("source", "source"),
            ("ops", "LDS ops"),
            ("buffers", "LDS map"),
            ("loop", "loop"),
            ("passes", "lanes to banks"),
        )
    )
    return Raw(
        f"<nav>{nav}</nav>{_summary(fig)}"
        + _source_section(fig, anchor, level)
        + _ops_section(fig, hw, anchor, level)
        + _buffers_section(fig, hw, anchor, level)
        + _loop_section(fig, anchor, level)
        + _passes_section(fig, hw, anchor, level)
    )


def kernel_page(fig, hw=None) -> str:
    """The whole page of one kernel."""
    chip = chip_words([_hw(hw, fig)])
    sub = f"wgpsim's LDS report of one compiled kernel ({chip}): a static model, not a measurement."
    return document(f"LDS report: {fig.name}", kernel_sections(fig, hw), sub)


def write_kernel_page(path, report, loop=None, hw=None) -> Path:
    """Write ``wgpsim kernel``'s page: its report and (payload, LoopTiming, ...) when timed."""
    from wgpsim.kernel.figures import KernelFigures

    payload, lt = (loop[0], loop[1]) if loop is not None else (None, None)
    fig = KernelFigures(report, payload, lt, path=report.extras.get("source"), hw=hw)
    return write_page(path, kernel_page(fig, hw))
