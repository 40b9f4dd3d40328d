"""The report read back as a reader sees it: text (pdftotext), pages (pdftoppm), fonts, images, paper."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from report_support import make_report, page_count, pdf_text, poppler, words

from advisor.core.workload import Workload
from advisor.recommend.ranking import RankingOptions
from advisor.report import Report, render_pdf, write_pdf

Made = tuple[Report, Path, int]


def test_english_report_says_what_the_issue_asks(english: Made) -> None:
    report, path, pages = english
    text = words(pdf_text(path))
    best = report.ranking.rows[0]
    assert "Which GPU for gpt2" in text and "zoo:gpt2" in text and "Advisor 0.1.0" in text
    assert f"{report.estimate.param_count:,}" in text  # parameters, exactly
    assert "FLOPs = 2 × MACs (multiply-adds" in text and "multiply-adds at batch 8" in text
    assert "AMP bf16" in text and "AdamW" in text and "analytic" in text
    assert all(row.card in text for row in report.ranking.rows)  # e.g. GeForce RTX 5070, 4070 Super
    assert best.price_date is not None and best.price_date.isoformat() in text
    assert "Memory does not pool across cards" in text and "ZeRO-3 (FSDP)" in text
    assert "Only cards: NVIDIA." in text
    assert "NVIDIA H200" in text and "NVIDIA driver 580.159.04" in text  # the replayed local GPU
    assert "Assumptions and provenance" in text and "The required memory replays the training loop" in text
    assert 3 <= pages <= 7 and page_count(path) == pages


def test_the_last_page_holds_the_last_sources(english: Made) -> None:
    """Qt's incremental relayout once left everything after a table with no height: the data sources (the
    report's end) went missing. The last listed card's source must be on the last page."""
    report, path, pages = english
    last = report.ranking.sources[-1]
    assert last.card in pdf_text(path, pages)
    assert f"Advisor 0.1.0 · gpt2 · page {pages} of {pages}" in pdf_text(path, pages)


def test_every_page_renders_with_ink(english: Made, tmp_path: Path) -> None:
    _report, path, pages = english
    poppler("pdftoppm", "-r", "40", "-png", path, tmp_path / "page")
    images = sorted(tmp_path.glob("page-*.png"))
    assert len(images) == pages
    for image_path in images:
        image = QImage(str(image_path)).convertToFormat(QImage.Format.Format_Grayscale8)
        dark = sum(
            1
            for y in range(0, image.height(), 2)
            for x in range(0, image.width(), 2)
            if image.pixelColor(x, y).lightness() < 200
        )
        assert dark > 200, f"{image_path.name} is (nearly) blank"


def test_charts_are_vectors_with_real_text(english: Made) -> None:
    _report, path, _pages = english
    text = pdf_text(path)
    for label in (
        "Memory at the peak",
        "Batch size",
        "Memory per card",
        "Kept for backward",
        "FLOPs per step (forward + backward)",
    ):
        assert label in text, label  # axis labels are text, not pixels
    images = poppler("pdfimages", "-list", path).strip().splitlines()
    assert len(images) == 2, images  # only pdfimages' two header lines: no raster image at all


def test_chinese_report_extracts_as_chinese(chinese: Made) -> None:
    _report, path, pages = chinese
    text = words(pdf_text(path))
    for phrase in (
        "显存明细",
        "推荐显卡",
        "显存不会在多卡之间合并",
        "每美元吞吐量",
        "假设与数据来源",
        "批大小",
        f"第 {pages} 页，共 {pages} 页",
    ):
        assert phrase in text, phrase
    # Latin runs keep their digits (Noto Sans CJK SC's locl swaps them for glyphs the text layer cannot map),
    # in the page text and in the charts' text alike.
    for phrase in ("gpt2 该选哪块 GPU", "Advisor 0.1.0 报告", "h.0.mlp.act", "10 GiB", "批大小 8"):
        assert phrase in text, phrase
    radicals = sorted({c for c in text if 0x2E80 <= ord(c) <= 0x2FDF})
    assert not radicals, f"radicals instead of ideographs: {radicals}"
    fonts = poppler("pdffonts", path)
    assert "NotoSansCJKsc" in fonts and "NotoSansCJKjp" not in fonts  # the Simplified Chinese forms, embedded
    assert all(line.split()[-5] == "yes" for line in fonts.splitlines()[2:])  # every font embedded


@pytest.mark.parametrize(("paper", "size"), [("a4", "595 x 842 pts (A4)"), ("letter", "612 x 792 pts (letter)")])
def test_paper_sizes(english: Made, tmp_path: Path, paper: str, size: str) -> None:
    report = english[0]
    path, _pages = write_pdf(tmp_path / f"{paper}.pdf", report, paper)
    assert size in poppler("pdfinfo", path)


def test_an_inference_report_without_local_gpus(catalog_path: Path) -> None:
    report = make_report(catalog_path, "zoo:resnet50", Workload("infer", 64, "fp16"), gpus=False, seq_len=None)
    data, pages = render_pdf(report)
    assert data.startswith(b"%PDF") and pages >= 3
    assert report.snapshot is None and report.estimate.workload.mode == "infer"


def test_a_report_where_nothing_fits(catalog_path: Path, tmp_path: Path) -> None:
    report = make_report(
        catalog_path,
        workload=Workload("train", 100_000, "fp32", "adam"),
        options=RankingOptions(max_gpus=1),
        gpus=False,
    )
    assert report.best is None
    path, _pages = write_pdf(tmp_path / "none.pdf", report)
    text = words(pdf_text(path))
    assert "No listed configuration fits" in text and "The local GPUs were not read." in text


def test_layer_count_is_the_models_not_the_loss_row() -> None:
    from advisor.core import zoo
    from advisor.core.analytic import estimate
    from advisor.core.workload import Workload
    from advisor.report.model_pages import model_layer_count

    graph = zoo.build("resnet50")
    trained = estimate(graph, Workload(batch=8))
    assert len(trained.layers) == len(graph.nodes) + 1  # the estimator's cross-entropy head
    assert model_layer_count(trained) == len(graph.nodes) == 176  # what the app's builder lists
    assert model_layer_count(estimate(graph, Workload("infer", 8))) == 176


def test_card_names_in_the_sources_are_the_size_of_their_line(english: Made) -> None:
    from PySide6.QtGui import QTextDocument

    from advisor.report.card_pages import _sources
    from advisor.report.markup import document

    report = english[0]
    doc = QTextDocument()
    doc.setHtml(document([_sources(report, str)]))
    first = report.ranking.sources[0]
    name = doc.find(first.card)
    rest = doc.find("figures:")
    assert not name.isNull() and not rest.isNull()
    assert name.charFormat().fontPointSize() == rest.charFormat().fontPointSize() == 7


def test_the_last_page_is_not_one_leftover_line(english: Made) -> None:
    from PySide6.QtCore import QSizeF
    from PySide6.QtGui import QTextDocument

    from advisor.report.pdf import LEAST_ON_LAST_PAGE, _no_lone_last_lines, _page

    _report, path, pages = english
    lines = [line for line in pdf_text(path, pages).splitlines() if line.strip() and "page" not in line]
    assert len(lines) >= LEAST_ON_LAST_PAGE  # the footer line ("... page N of N") is not content
    # a document built to end with one line alone on its last page: the page ends just above the 12th line
    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setHtml("".join(f"<p>source line {n}</p>" for n in range(12)))
    doc.setTextWidth(400)
    layout = doc.documentLayout()
    last = layout.blockBoundingRect(doc.lastBlock())
    doc.setPageSize(QSizeF(400, last.top() + last.height() / 2))

    def on_last_page() -> int:
        blocks, block = 0, doc.lastBlock()
        while block.isValid() and _page(doc, layout.blockBoundingRect(block).bottom() - 1) == doc.pageCount() - 1:
            blocks, block = blocks + 1, block.previous()
        return blocks

    assert doc.pageCount() == 2 and on_last_page() == 1
    _no_lone_last_lines(doc)
    assert doc.pageCount() == 2 and on_last_page() == LEAST_ON_LAST_PAGE
