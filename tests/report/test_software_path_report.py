"""Every ranked row of the PDF says how PyTorch runs its card, as the command line's SW column and the app's
Software column do."""

from __future__ import annotations

from pathlib import Path

from report_support import make_report, pdf_text, words

from advisor.recommend.ranking import RankingOptions
from advisor.recommend.service import CardFilter
from advisor.report import write_pdf


def test_the_pdf_names_rocm_beside_an_amd_card(catalog_path: Path, tmp_path: Path) -> None:
    report = make_report(
        catalog_path,
        cards=CardFilter(vendor="AMD", segment="datacenter"),
        options=RankingOptions(counts=(1,)),
        gpus=False,
    )
    rows = report.ranking.rows
    assert rows and {r.software for r in rows} == {"ROCm"}
    path, _pages = write_pdf(tmp_path / "amd.pdf", report)
    text = words(pdf_text(path))
    assert text.count("one card, ROCm") == len(rows)  # one per row: "1 x one card, ROCm" below each card
