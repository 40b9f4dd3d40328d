"""With a job size the PDF shows the job's time against its cost, as the app's chart does from the same
entries, and names the best choices with their hours and cost."""

from __future__ import annotations

from pathlib import Path

from report_support import make_report, pdf_text, words

from advisor.recommend.money import MoneyOptions, frontier
from advisor.recommend.present import job_cells
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.service import CardFilter
from advisor.report import write_pdf


def test_a_job_size_adds_the_cost_of_the_job_with_its_best_choices(catalog_path: Path, tmp_path: Path) -> None:
    options = RankingOptions(counts=(1, 2), money=MoneyOptions("rent", samples=1e7))
    report = make_report(
        catalog_path, cards=CardFilter(price_basis="rent", segment="datacenter"), options=options, gpus=False
    )
    costed = report.ranking.costed
    assert costed and all(e.fits and e.job_cost_usd is not None for e in costed)
    best = frontier(costed)
    assert best and best[0].job_hours == min(e.job_hours for e in costed)  # type: ignore[type-var]
    path, _pages = write_pdf(tmp_path / "job.pdf", report)
    text = words(pdf_text(path))
    assert "The cost of the job" in text and "10,000,000 samples" in text
    for r in best:  # each best choice with its job's hours and cost, as the command line's columns print them
        hours, cost, _ = job_cells(r)
        assert f"{hours} {cost}" in text and r.card in text


def test_without_a_job_size_there_is_no_job_section(catalog_path: Path, tmp_path: Path) -> None:
    report = make_report(catalog_path, options=RankingOptions(counts=(1,)), gpus=False)
    assert report.ranking.costed == ()
    path, _pages = write_pdf(tmp_path / "plain.pdf", report)
    assert "The cost of the job" not in words(pdf_text(path))
