"""A price over a year old is marked in the PDF's table as on the command line and in the app: one function
(advisor.recommend.present.price_text) writes that cell for all three."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from report_support import make_report, pdf_text, words

from advisor.recommend.money import OLD_AFTER_DAYS, MoneyOptions
from advisor.recommend.present import price_text
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.service import CardFilter
from advisor.report import Report, write_pdf
from advisor.ui.i18n import fonts, set_language, tr
from advisor.ui.money_text import price_cell


def _ranked_on(catalog_path: Path, today: date) -> Report:
    """GeForce cards of 16 GB and more, one card each: GPT-2 fits every one, so the table holds the same ten
    cards however the estimate moves, launch MSRPs of 2020-2025 beside retail prices of 2026."""
    cards = CardFilter(vendor="NVIDIA", segment="consumer", min_memory_bytes=16 * 2**30)
    return make_report(
        catalog_path,
        cards=cards,
        options=RankingOptions(counts=(1,), money=MoneyOptions("new", today=today)),
        gpus=False,
    )


def test_the_pdf_table_marks_old_prices_as_the_command_line_does(catalog_path: Path, tmp_path: Path) -> None:
    report = _ranked_on(catalog_path, date(2026, 11, 30))
    rows = report.ranking.rows
    old = [r for r in rows if r.price_old]
    fresh = [r for r in rows if r.price_usd is not None and not r.price_old]
    assert old and fresh  # launch MSRPs of 2020-2024 and prices of 2026 side by side
    assert all(price_text(r).endswith(" (old)") for r in old) and all("(old)" not in price_text(r) for r in fresh)
    assert [price_cell(r) for r in rows] == [price_text(r) for r in rows]  # the app's cell is the command line's
    path, _pages = write_pdf(tmp_path / "old.pdf", report)
    text = words(pdf_text(path))
    assert text.count("(old)") == len(old)  # one mark per old row of the table, none for a recent price
    assert all(price_text(r) in text and str(r.price_date) in text for r in rows)


def test_a_price_turns_old_a_year_after_its_date(catalog_path: Path) -> None:
    best = _ranked_on(catalog_path, date(2026, 11, 30)).best
    assert best is not None and best.price_date is not None
    for days, mark in ((OLD_AFTER_DAYS, False), (OLD_AFTER_DAYS + 1, True)):
        report = _ranked_on(catalog_path, best.price_date + timedelta(days=days))
        row = next(r for r in report.ranking.rows if r.card == best.card)
        assert row.price_old is mark and price_text(row).endswith(" (old)") is mark


def test_the_chinese_pdf_writes_the_mark_in_chinese(catalog_path: Path, tmp_path: Path) -> None:
    report = _ranked_on(catalog_path, date(2040, 1, 1))  # every bundled price is old by then
    set_language("zh_CN")
    try:
        path, _pages = write_pdf(tmp_path / "old-zh.pdf", report, "a4", tr, fonts())
    finally:
        set_language("en")
    assert "（旧）" in pdf_text(path) and "(old)" not in pdf_text(path)
