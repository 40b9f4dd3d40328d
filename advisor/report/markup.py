"""The HTML subset QTextDocument lays out (Qt's rich text): headings, paragraphs, tables with a repeated
header row (<thead>), and markers where a chart goes.

Every string reaches the report through a translation function `t` (the app's tr); the report package does
not import the app's catalogue, so that it stays free of the UI (an import-linter contract checks this).
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence

Text = Callable[[str], str]

CHART_MARKER = "@@chart:{key}@@"
TABLE = '<table width="100%" cellspacing="0" cellpadding="3" style="border-collapse: collapse; {style}">'
HEAD_COLOR = "#E8EEF6"
STRIPE_COLOR = "#F6F8FB"
BORDER = "border: 0.5px solid #B8C2CC;"
PAGE_BREAK = ' style="page-break-before: always"'


class Raw(str):
    """Markup already escaped (a cell with two lines); any other string is escaped."""

    __slots__ = ()


def esc(text: object) -> str:
    return text if isinstance(text, Raw) else html.escape(str(text), quote=True)


def lines(*parts: str, small: int = 1) -> Raw:
    """Cell text on several lines; lines after the first `small` ones are smaller and grey."""
    shown = [
        esc(p) if i < small else f'<span style="color: #666666; font-size: 6.5pt">{esc(p)}</span>'
        for i, p in enumerate(parts)
    ]
    return Raw("<br>".join(shown))


def heading(text: str, level: int = 2, new_page: bool = False) -> str:
    return f"<h{level}{PAGE_BREAK if new_page else ''}>{esc(text)}</h{level}>"


def paragraph(text: str, css: str = "") -> str:
    return f'<p style="{css}">{esc(text)}</p>' if css else f"<p>{esc(text)}</p>"


def bullets(items: Iterable[str]) -> str:
    return "<ul>" + "".join(f"<li>{esc(item)}</li>" for item in items) + "</ul>"


def chart(key: str) -> str:
    """A paragraph of its own that pdf.py replaces with the vector chart `key`."""
    return f'<p align="center">{CHART_MARKER.format(key=key)}</p>'


def figure(key: str, title: str, caption: str, new_page: bool = False) -> str:
    """A chart under its heading and caption; pdf.py keeps the three on one page."""
    return heading(title, new_page=new_page) + paragraph(caption) + chart(key)


def facts(rows: Sequence[tuple[str, str]], label_width: int = 30) -> str:
    """Label: value rows, labels in the narrow first column."""
    cells = "".join(
        f'<tr><td width="{label_width}%" style="{BORDER} background-color: {HEAD_COLOR}">{esc(label)}</td>'
        f'<td style="{BORDER}">{esc(value)}</td></tr>'
        for label, value in rows
    )
    return TABLE.format(style="") + cells + "</table>"


def side_by_side(*columns: tuple[str, str]) -> str:
    """Headed blocks next to each other (model and workload share the first page's width)."""
    width = 100 // len(columns)
    cells = "".join(
        f'<td width="{width}%" style="padding-right: 6px">{heading(title)}{body}</td>' for title, body in columns
    )
    return f'<table width="100%" cellspacing="0" cellpadding="0"><tr>{cells}</tr></table>'


def grid(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    numeric: Iterable[int] = (),
    muted: Iterable[int] = (),
    size_pt: float = 7.5,
    widths: Sequence[int] = (),
) -> str:
    """A table with a header row that repeats on every page it spans; `numeric` columns align right and do
    not wrap, `muted` rows (configurations that do not fit) are grey."""
    right, grey = set(numeric), set(muted)

    def cell(tag: str, column: int, text: str, extra: str = "", width: int = 0) -> str:
        align = (' align="right"' if column in right else "") + (f' width="{width}%"' if width else "")
        wrap = " white-space: nowrap;" if column in right and tag == "td" else ""
        return f'<{tag}{align} style="{BORDER} font-size: {size_pt}pt;{wrap}{extra}">{esc(text)}</{tag}>'

    head = "".join(
        cell("th", i, h, f" background-color: {HEAD_COLOR}", widths[i] if widths else 0) for i, h in enumerate(headers)
    )
    body = []
    for index, row in enumerate(rows):
        style = " color: #8A8A8A;" if index in grey else ""
        style += f" background-color: {STRIPE_COLOR};" if index % 2 else ""
        body.append("<tr>" + "".join(cell("td", i, text, style) for i, text in enumerate(row)) + "</tr>")
    return (
        TABLE.format(style=f"font-size: {size_pt}pt") + f"<thead><tr>{head}</tr></thead>" + "".join(body) + "</table>"
    )


STYLE = """
body { font-size: 9pt; }
h1 { font-size: 17pt; margin-bottom: 2pt; }
h2 { font-size: 12.5pt; margin-top: 12pt; margin-bottom: 4pt; color: #1F3A5F; }
h3 { font-size: 10pt; margin-top: 8pt; margin-bottom: 3pt; }
p { margin-top: 2pt; margin-bottom: 4pt; }
li { margin-bottom: 2pt; }
th { font-weight: bold; }
"""


def document(parts: Iterable[str]) -> str:
    return f"<html><head><style>{STYLE}</style></head><body>{''.join(parts)}</body></html>"
