"""A report ranked on rent prints its prices per hour, as the command line does."""

from __future__ import annotations

from pathlib import Path

from report_support import make_report, pdf_text, words

from advisor.recommend.money import MoneyOptions
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.service import CardFilter
from advisor.report import write_pdf


def test_a_rent_ranking_prints_prices_per_hour(catalog_path: Path, tmp_path: Path) -> None:
    report = make_report(
        catalog_path,
        cards=CardFilter(segment="datacenter", price_basis="rent"),
        options=RankingOptions(money=MoneyOptions("rent")),
        gpus=False,
    )
    best = report.best
    assert best is not None and best.price_kind == "rent_hour" and best.price_usd is not None
    assert next(s for s in report.ranking.sources if s.card == best.card).price_kind == "rent_hour"
    path, _pages = write_pdf(tmp_path / "rent.pdf", report)
    assert f"{best.price_usd:,.2f} USD per hour" in words(pdf_text(path))
