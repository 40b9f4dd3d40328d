"""Lays the report out and writes it as PDF with Qt's PDF writer (QtGui only: no widgets, so it runs under a
QGuiApplication on the offscreen platform from the command line, and on a worker thread in the app).

Why Qt rather than matplotlib's PDF backend: QTextDocument paginates rich text and tables (repeating the
header row on each page) and QPdfWriter embeds subsets of any font fontconfig finds, CJK OpenType (CFF)
included, with a text layer that pdftotext and screen readers read. Charts come in as SVG (figures.py) and
are drawn with QSvgRenderer into the page: vector paths and real text, no raster images.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QCoreApplication,
    QIODevice,
    QLocale,
    QMarginsF,
    QPointF,
    QRect,
    QRectF,
    QSizeF,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QPageLayout,
    QPageSize,
    QPainter,
    QPdfWriter,
    QPyTextObject,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextFrame,
    QTextTable,
)
from PySide6.QtSvg import QSvgRenderer

from advisor.charts import ChartStyle
from advisor.report.card_pages import batch_chart, job_cost, local_gpus, multi_gpu, provenance, recommendations
from advisor.report.content import Report
from advisor.report.figures import chart_svgs, shows_model_map
from advisor.report.markup import CHART_MARKER, Text, document
from advisor.report.model_pages import front_pages, layer_pages
from advisor.report.output import ReportError, write_atomic
from advisor.report.tounicode import fix_to_unicode

PAPERS: dict[str, QPageSize.PageSizeId] = {"a4": QPageSize.PageSizeId.A4, "letter": QPageSize.PageSizeId.Letter}
MARGIN_MM = 15.0
FOOTER_PT = 18.0
BODY_PT = 9.0
# 72 dots per inch: one device unit is one point, so HTML sizes in px and pt agree and charts built at
# the text width in inches come out at their natural size (10 pt ticks stay 10 pt).
RESOLUTION = 72
CHART_OBJECT = QTextFormat.ObjectTypes.UserObject + 1
CHART_KEY = QTextFormat.Property.UserProperty + 1


# Letter is the usual paper where these are the system's territory; A4 everywhere else.
LETTER_TERRITORIES = ("UnitedStates", "Canada", "Mexico", "Philippines", "Chile", "Colombia")


def default_paper() -> str:
    return "letter" if QLocale.system().territory().name in LETTER_TERRITORIES else "a4"


def _same(text: str) -> str:
    return text


def ensure_gui_application() -> None:
    """Fonts and painting need a QGuiApplication; the command line has none, so make an offscreen one."""
    if QCoreApplication.instance() is not None:
        if not isinstance(QCoreApplication.instance(), QGuiApplication):
            raise ReportError("a PDF report needs a QGuiApplication, not a QCoreApplication")
        return
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # a server or CI runner: no display to open
    QGuiApplication(["advisor"])


def text_font(families: Sequence[str], size_pt: float) -> QFont:
    """The families in order, with the two glyph substitutions off that break the PDF's text layer.

    Qt writes the text layer by mapping each glyph back through the font's character map; a substituted glyph
    is not in it. liga: DejaVu's "fi" ligature extracts as one character (U+FB01), so a search for "fits"
    fails. locl: Noto Sans CJK SC swaps Latin digits for Chinese-locale forms in Latin runs, and "resnet50"
    extracted as "resnet"."""
    font = QFont()
    font.setFamilies(list(families))
    font.setPointSizeF(size_pt)
    for feature in ("liga", "locl"):
        font.setFeature(QFont.Tag(feature), 0)
    return font


class SvgCharts(QPyTextObject):
    """Draws a chart where the document holds its object character, scaled to the text width.

    PySide6 only registers QPyTextObject subclasses as handlers (a plain QObject + QTextObjectInterface is
    silently ignored by registerHandler)."""

    def __init__(self, svgs: dict[str, bytes], families: Sequence[str]) -> None:
        super().__init__()
        self.families = families
        self.renderers = {key: QSvgRenderer(QByteArray(svg)) for key, svg in svgs.items()}

    def intrinsicSize(self, doc: QTextDocument, _position: int, fmt: QTextFormat) -> QSizeF:
        natural = self.renderers[fmt.property(CHART_KEY)].defaultSize()
        width = min(float(natural.width()), doc.textWidth() - 2)
        return QSizeF(width, width * natural.height() / max(natural.width(), 1))

    def drawObject(
        self, painter: QPainter, rect: QRectF | QRect, _doc: QTextDocument, _position: int, fmt: QTextFormat
    ) -> None:
        painter.save()
        # QtSvg starts each text's font from the painter's: this is how the substitutions stay off in charts too
        painter.setFont(text_font(self.families, BODY_PT))
        self.renderers[fmt.property(CHART_KEY)].render(painter, rect)
        painter.restore()


def html_parts(report: Report, t: Text) -> list[str]:
    """The report's sections in page order (each new page starts with a heading that says so)."""
    return [
        *front_pages(report, t),
        recommendations(report, t),
        job_cost(report, t),
        multi_gpu(report, t),
        batch_chart(report, t),
        *layer_pages(report, t, shows_model_map(report)),
        local_gpus(report, t),
        provenance(report, t),
    ]


def _insert_charts(doc: QTextDocument, keys: Sequence[str]) -> None:
    for key in keys:
        found = doc.find(CHART_MARKER.format(key=key))
        if found.isNull():
            continue
        fmt = QTextCharFormat()
        fmt.setObjectType(CHART_OBJECT)
        fmt.setProperty(CHART_KEY, key)
        found.insertText("\ufffc", fmt)  # the object replacement character stands for the chart


def _writer(buffer: QBuffer, paper: str, title: str) -> QPdfWriter:
    if paper not in PAPERS:
        raise ReportError(f"--paper: choose one of {', '.join(PAPERS)}, got {paper!r}")
    writer = QPdfWriter(buffer)
    writer.setResolution(RESOLUTION)
    margins = QMarginsF(MARGIN_MM, MARGIN_MM, MARGIN_MM, MARGIN_MM)
    writer.setPageLayout(
        QPageLayout(QPageSize(PAPERS[paper]), QPageLayout.Orientation.Portrait, margins, QPageLayout.Unit.Millimeter)
    )
    writer.setTitle(title)
    writer.setCreator("Advisor")
    return writer


def _document(writer: QPdfWriter, html: str, charts: SvgCharts, fonts: Sequence[str]) -> QTextDocument:
    doc = QTextDocument()
    doc.documentLayout().setPaintDevice(writer)  # lay out in the writer's points, not the screen's pixels
    doc.setUseDesignMetrics(True)  # glyph advances at the font's design size, not hinted to whole points
    doc.setDocumentMargin(0)
    doc.setDefaultFont(text_font(fonts, BODY_PT))
    doc.setHtml(html)
    doc.documentLayout().registerHandler(CHART_OBJECT, charts)
    _insert_charts(doc, list(charts.renderers))
    # Set last: a page size makes the layout paginate (no line split by a page), and setting it lays the whole
    # document out afresh. Qt's incremental relayout after the chart insertions left the blocks after a
    # table with no height (the last pages came out empty).
    doc.setPageSize(QSizeF(float(writer.width()), float(writer.height()) - FOOTER_PT))
    _keep_headings_with_charts(doc)
    keep_rows_together(doc)
    _no_lone_last_lines(doc)
    return doc


def _page(doc: QTextDocument, y: float) -> int:
    return int(y // doc.pageSize().height())


def _breaks_needed(doc: QTextDocument) -> list[QTextBlock]:
    """Headings whose chart (up to two blocks below: heading, caption, chart) starts on a later page."""
    layout, found = doc.documentLayout(), []
    block = doc.begin()
    while block.isValid():
        if "\ufffc" in block.text():
            chart_page = _page(doc, layout.blockBoundingRect(block).bottom() - 1)
            intro = block.previous()
            for _ in range(2):
                if not intro.isValid() or intro.blockFormat().headingLevel():
                    break
                intro = intro.previous()
            if intro.isValid() and _page(doc, layout.blockBoundingRect(intro).top()) < chart_page:
                found.append(intro)
        block = block.next()
    return found


def _keep_headings_with_charts(doc: QTextDocument) -> None:
    """QTextDocument has no keep-with-next: a heading left at the foot of a page gets a page break instead."""
    for _ in range(4):  # each break moves what follows, so look again (a few passes settle any report)
        headings = _breaks_needed(doc)
        if not headings:
            return
        for heading in headings:
            fmt = QTextBlockFormat()
            fmt.setPageBreakPolicy(QTextFormat.PageBreakFlag.PageBreak_AlwaysBefore)
            QTextCursor(heading).mergeBlockFormat(fmt)
        doc.setPageSize(doc.pageSize())  # lay everything out afresh (see _document)


def _tables(frame: QTextFrame) -> list[QTextTable]:
    found: list[QTextTable] = []
    for child in frame.childFrames():
        found += ([child] if isinstance(child, QTextTable) else []) + _tables(child)
    return found


def split_rows(doc: QTextDocument) -> list[tuple[QTextTable, int]]:
    """Table rows whose cells do not all sit on one page (a card's name at a page's foot, its plan on the next)."""
    layout, split = doc.documentLayout(), []
    for table in _tables(doc.rootFrame()):
        for row in range(table.rows()):
            cells = [table.cellAt(row, column) for column in range(table.columns())]
            tops = [layout.blockBoundingRect(c.firstCursorPosition().block()).top() for c in cells]
            bottoms = [layout.blockBoundingRect(c.lastCursorPosition().block()).bottom() for c in cells]
            if len({_page(doc, y) for y in tops} | {_page(doc, y - 1) for y in bottoms}) > 1:
                split.append((table, row))
    return split


def keep_rows_together(doc: QTextDocument) -> None:
    """Qt moves a table row to the next page only when none of its cells' first lines fits (qtbase
    src/gui/text/qtextdocumentlayout.cpp, layoutTable's dropRowToNextPage), so a two-line cell beside one-line
    cells splits. The row above gets a bottom padding that reaches past the page's foot: the split row then
    starts the next page, under the repeated header, as Qt does with a row it drops (it stretches the row
    above to the page's foot too). A page break on the cells' blocks dropped the row a page further, and a
    block's bottom margin in a cell does not count in the row's height; a cell's padding does."""
    for _ in range(6):  # each move shifts the rows after it: look again
        split = [(table, row) for table, row in split_rows(doc) if row > table.format().headerRowCount()]
        if not split:
            return
        layout, height = doc.documentLayout(), doc.pageSize().height()
        for table, row in split:
            cell = table.cellAt(row, 0)
            top = layout.blockBoundingRect(cell.firstCursorPosition().block()).top()
            above = table.cellAt(row - 1, 0)
            fmt = above.format().toTableCellFormat()
            fmt.setBottomPadding(fmt.bottomPadding() + (_page(doc, top) + 1) * height - top + 1)
            above.setFormat(fmt)
        doc.setPageSize(doc.pageSize())


LEAST_ON_LAST_PAGE = 3  # blocks (a list item, a paragraph): one leftover source line alone looks like a mistake


def _no_lone_last_lines(doc: QTextDocument) -> None:
    """No orphan on the last page: when it would hold fewer than LEAST_ON_LAST_PAGE blocks, the page breaks
    that many blocks earlier, so the end of a list arrives with some of its lines."""
    layout, last = doc.documentLayout(), doc.pageCount() - 1
    tail = []
    block = doc.lastBlock()
    while block.isValid() and _page(doc, layout.blockBoundingRect(block).bottom() - 1) == last:
        tail.append(block)
        block = block.previous()
    if last == 0 or not tail or len(tail) >= LEAST_ON_LAST_PAGE:
        return
    move = tail[-1]
    for _ in range(LEAST_ON_LAST_PAGE - len(tail)):
        if move.previous().isValid():
            move = move.previous()
    fmt = QTextBlockFormat()
    fmt.setPageBreakPolicy(QTextFormat.PageBreakFlag.PageBreak_AlwaysBefore)
    QTextCursor(move).mergeBlockFormat(fmt)
    doc.setPageSize(doc.pageSize())


def _footer(painter: QPainter, text: str, width: float, top: float, fonts: Sequence[str]) -> None:
    painter.setFont(text_font(fonts, 7))
    painter.setPen(QColor("#8A8A8A"))
    painter.drawLine(QPointF(0, top + 4), QPointF(width, top + 4))
    painter.drawText(QRectF(0, top + 6, width, FOOTER_PT - 6), 0x0004 | 0x0080, text)  # AlignHCenter|VCenter


def _paint(writer: QPdfWriter, doc: QTextDocument, footer: Callable[[int, int], str], fonts: Sequence[str]) -> int:
    width, height = float(writer.width()), float(writer.height()) - FOOTER_PT
    pages = doc.pageCount()
    painter = QPainter()
    if not painter.begin(writer):
        raise ReportError("cannot start the PDF writer")
    try:
        for page in range(pages):
            if page:
                writer.newPage()
            painter.save()
            painter.translate(0, -page * height)
            doc.drawContents(painter, QRectF(0, page * height, width, height))
            painter.restore()
            _footer(painter, footer(page + 1, pages), width, height, fonts)
    finally:
        painter.end()
    return pages


def render_pdf(
    report: Report, paper: str = "a4", text: Text = _same, fonts: Sequence[str] = ("DejaVu Sans",)
) -> tuple[bytes, int]:
    """The report as PDF bytes, and its page count. `text` translates, `fonts` are the families to use."""
    ensure_gui_application()
    t = text
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    title = t("Which GPU for {model}").format(model=report.estimate.model)
    writer = _writer(buffer, paper, title)
    svgs = chart_svgs(
        report, ChartStyle(text=t, fonts=tuple(fonts), width_in=writer.width() / RESOLUTION, height_in=3.4)
    )
    charts = SvgCharts(svgs, fonts)  # referenced until the document is painted: the layout keeps no Python reference
    doc = _document(writer, document(html_parts(report, t)), charts, fonts)

    def footer(page: int, pages: int) -> str:
        return t("Advisor {version} · {model} · page {page} of {pages}").format(
            version=report.version, model=report.estimate.model, page=page, pages=pages
        )

    pages = _paint(writer, doc, footer, fonts)
    del writer  # finishes the PDF (trailer, cross-reference table) into the buffer
    buffer.close()
    return fix_to_unicode(bytes(buffer.data().data()), fonts), pages


def write_pdf(
    path: str | os.PathLike[str],
    report: Report,
    paper: str = "a4",
    text: Text = _same,
    fonts: Sequence[str] = ("DejaVu Sans",),
) -> tuple[Path, int]:
    """Renders the report and writes it atomically (output.py); returns the path written and the page count."""
    data, pages = render_pdf(report, paper, text, fonts)
    return write_atomic(path, data), pages
