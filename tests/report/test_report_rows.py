"""No table row of the report is split across pages (issue 27: a card's name at a page's foot, its plan and
figures on the next). The job's cost table of a ResNet-50 ranked with a job size is long enough to cross pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QBuffer, QIODevice
from report_support import make_report

from advisor.charts import ChartStyle
from advisor.core.workload import Workload
from advisor.recommend.money import MoneyOptions
from advisor.recommend.ranking import RankingOptions
from advisor.report import Report, pdf
from advisor.report.figures import chart_svgs
from advisor.report.markup import document
from advisor.ui.i18n import fonts, set_language, tr


def _laid_out(report: Report, svgs: dict[str, bytes] | None = None) -> tuple[int, list[object], dict[str, bytes]]:
    """(pages, rows split across pages, the charts drawn): the charts of a second layout of the same report
    are the first's (drawing them twice took 2 of the test's 5 s)."""
    set_language("zh_CN")
    try:
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        writer = pdf._writer(buffer, "a4", "rows")
        style = ChartStyle(text=tr, fonts=fonts(), width_in=writer.width() / pdf.RESOLUTION, height_in=3.4)
        svgs = chart_svgs(report, style) if svgs is None else svgs
        charts = pdf.SvgCharts(svgs, fonts())
        doc = pdf._document(writer, document(pdf.html_parts(report, tr)), charts, fonts())
        return doc.pageCount(), list(pdf.split_rows(doc)), svgs
    finally:
        set_language("en")


def test_no_row_is_split_across_pages(catalog_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = make_report(
        catalog_path,
        "zoo:resnet50",
        Workload("train", 32, "amp_bf16", "adam"),
        seq_len=None,
        options=RankingOptions(money=MoneyOptions(samples=1e6)),
        gpus=False,
    )
    monkeypatch.setattr(pdf, "keep_rows_together", lambda doc: None)
    pages, split, svgs = _laid_out(report)
    assert split, "the fixture no longer crosses a page inside a row: the test would prove nothing"
    monkeypatch.undo()
    kept_pages, kept_split, _ = _laid_out(report, svgs)
    assert kept_split == []
    assert pages <= kept_pages <= pages + 1  # the moved rows start the next page; nothing runs pages further
