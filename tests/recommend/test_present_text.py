"""The lines under the recommendation table say what the ranking found: a missing price only when no fitting
configuration has one, and an empty catalog selection as such, not as a workload that does not fit."""

from dataclasses import replace
from pathlib import Path

import pytest

from advisor.catalog import Catalog, find_card, open_catalog
from advisor.core import zoo
from advisor.core.workload import Workload
from advisor.recommend.prepare import prepare_graph
from advisor.recommend.present import render_table
from advisor.recommend.ranking import RankingOptions, rank
from advisor.recommend.recommendation import Recommendation

NO_PRICE = "No fitting configuration has a price"


@pytest.fixture(scope="module")
def unpriced(tmp_path_factory: pytest.TempPathFactory) -> list[Recommendation]:
    catalog: Catalog = open_catalog(Path(tmp_path_factory.mktemp("catalog")) / "catalog.sqlite3")
    with catalog.read() as s:
        cards = [find_card(s, "RTX 4090"), find_card(s, "RTX 3090")]
    entries = rank(prepare_graph(zoo.build("resnet50"), Workload("train", 8)), cards, {}, RankingOptions(counts=(1,)))
    assert len(entries) == 2 and all(e.fits for e in entries)  # resnet50 at batch 8 fits 24 GB cards
    return entries


def test_no_price_is_said_only_when_no_fitting_row_has_one(unpriced: list[Recommendation]) -> None:
    assert NO_PRICE in render_table(unpriced, 5)
    # --objective fastest puts an unpriced card first while a slower one has a price: no "no price" line
    first, second = unpriced
    priced = [first, replace(second, price_usd=1000.0, perf_per_dollar=second.throughput / 1000)]
    assert NO_PRICE not in render_table(priced, 5)


def test_filters_that_leave_no_card_are_not_called_a_workload_that_does_not_fit() -> None:
    text = render_table([], 5)  # e.g. --vendor Foo
    assert "No card in the catalog passes the filters" in text
    assert "No configuration fits" not in text and "smaller batch" not in text


def test_a_speed_below_one_per_second_is_not_printed_as_zero(unpriced: list[Recommendation]) -> None:
    # DeepSeek-V3 int4 through transformers decodes 0.42 tokens/s: the table said "0 tokens/s" on every row
    from advisor.recommend.present import rate_text
    from advisor.report.card_pages import _row as pdf_row

    assert (rate_text(0.42), rate_text(9.5), rate_text(22_168.4)) == ("0.42", "9.5", "22,168")
    slow = replace(unpriced[0], throughput=0.42)
    assert "0.42 samples/s" in render_table([slow], 5)
    assert "0.42" in pdf_row(1, slow, str)  # the PDF's cell is the same figure


def test_a_sharded_plan_is_spelled_zero_n_in_its_reason(tmp_path: Path) -> None:
    # the reason read "ZERO3 shards model state over 8 cards" beside "ZeRO-3" in the table and the fit list
    from advisor.recommend.reasons import reasons_text

    catalog: Catalog = open_catalog(tmp_path / "catalog.sqlite3")
    with catalog.read() as s:
        cards = [find_card(s, "RTX 4090")]
    job = prepare_graph(zoo.build("resnet18"), Workload("train", 8))
    sharded = [e for e in rank(job, cards, {}, RankingOptions(counts=(2,))) if e.plan.sharded]
    assert {e.plan.zero_stage for e in sharded} == {1, 2, 3}
    for e in sharded:
        assert f"ZeRO-{e.plan.zero_stage} shards model state over 2 cards" in reasons_text(e.reasons)
