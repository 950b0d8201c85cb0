"""The frame of every HTML report: one self-contained document, styles and script inline.

Pages are built as strings: every value goes through `esc` (``html.escape``) unless it is
`Raw` (markup this package built). `table` makes a table whose headers sort it on a click
(the one inline script; the page reads fine without it), `section` a titled part with an
anchor and a sentence saying what it shows, `document` the page, `write_page` writes it.

>>> table(("op", "cycles"), [("local_load <a>", 188)])
'<table class="sortable"><thead><tr><th>op</th><th>cycles</th></tr></thead><tbody><tr><td>local_load &lt;a&gt;</td><td class="num">188</td></tr></tbody></table>'
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

__all__ = ["Raw", "document", "esc", "number", "section", "table", "write_page"]


class Raw(str):
    """Markup that is inserted as is (built here, its values already escaped)."""


def esc(value: Any) -> str:
    """``value`` as HTML text (`Raw` as is; None as a dash)."""
    if isinstance(value, Raw):
        return value
    return "–" if value is None else html.escape(str(value))


def number(value: Any) -> str:
    """A figure as the terminal prints it (whole numbers bare, else one decimal)."""
    from wgpsim.kernel.loop.timing import number_text

    if isinstance(value, float):
        return number_text(value)
    return "–" if value is None else str(value)


def _cell(value: Any) -> str:
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    text = number(value) if numeric else esc(value)
    return f'<td class="num">{text}</td>' if numeric else f"<td>{text}</td>"


def table(head, rows, *, cls: str = "sortable", row_classes=None) -> str:
    """A table; numbers right-aligned; ``row_classes`` (one CSS class per row) marks rows."""
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = []
    for i, row in enumerate(rows):
        rc = row_classes[i] if row_classes else ""
        attr = f' class="{rc}"' if rc else ""
        body.append(f"<tr{attr}>" + "".join(_cell(v) for v in row) + "</tr>")
    return (
        f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{"".join(body)}</tbody></table>'
    )


def section(anchor: str, title: str, intro: str, *parts: str, level: int = 2) -> str:
    """A titled section with an anchor, a sentence saying what it shows, then ``parts``."""
    return (
        f'<section id="{esc(anchor)}" class="{esc(anchor.split("-")[-1])}">'
        f'<h{level}>{esc(title)}</h{level}><p class="intro">{esc(intro)}</p>'
        + "".join(parts)
        + "</section>"
    )


CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1400px;padding:1em 2em;color:#222}
h1{font-size:1.5em;margin-bottom:.2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
h3{margin:1em 0 .3em}p.intro{color:#555;margin:.2em 0 .8em}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:13px;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #ccc;padding:2px 7px;text-align:left;vertical-align:top}
th{background:#f0f0f0;cursor:pointer;white-space:nowrap}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.bad td{background:#fde8e8}tr.good td{background:#e6f4e6}tr.added td{background:#e8f0fd}
tr.removed td{background:#f4f4f4;color:#777}
pre.source{background:#fafafa;border:1px solid #ddd;padding:.5em;overflow-x:auto;font-size:12.5px}
pre.source .lds{background:#fff3c4;font-weight:600}pre.source .ann{color:#8a4b00;font-weight:400}
.sentence{font-size:1.1em;background:#eef4fb;border-left:4px solid #4C72B0;padding:.4em .8em}
.pass{display:inline-block;margin:0 1em 1em 0;vertical-align:top}
.pass figcaption{font-size:12px;color:#444;max-width:480px}.side{display:flex;gap:2em;align-items:flex-start}
.side>div{flex:1;min-width:0}nav a{margin-right:1em}.note{color:#666;font-size:12.5px}
p.foreign{color:#8a4b00;font-size:inherit;border-left:4px solid #e0a040;padding:.2em .8em}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
svg text{font:11px system-ui,sans-serif}svg{max-width:100%;height:auto}
"""

SCRIPT = """
document.querySelectorAll('table.sortable th').forEach(function (th, col) {
  th.title = 'click to sort';
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var down = th.dataset.down !== '1';
    th.dataset.down = down ? '1' : '0';
    var key = function (r) {
      var t = r.cells[th.cellIndex] ? r.cells[th.cellIndex].textContent : '';
      var n = parseFloat(t.replace(/[^0-9eE+.-]/g, ''));
      return isNaN(n) ? t : n;
    };
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      var c = (typeof x === typeof y) ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === 'number' ? -1 : 1);
      return down ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def document(title: str, body: str, subtitle: str = "") -> str:
    """The whole page: no external resource (styles and the script inline)."""
    sub = f'<p class="intro">{esc(subtitle)}</p>' if subtitle else ""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{esc(title)}</h1>{sub}{body}<script>{SCRIPT}</script></body></html>\n"
    )


def write_page(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole or not at all (`wgpsim.files.atomic_write`)."""
    from wgpsim.files import atomic_write

    return atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
