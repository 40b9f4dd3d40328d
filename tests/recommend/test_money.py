"""Money rules: which price a card is ranked on, the job's cost arithmetic, and the order of a ranking."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from advisor.catalog.exchange import bundled_rates
from advisor.catalog.records import PriceRecord
from advisor.core.errors import AdvisorError
from advisor.recommend.money import (
    MoneyOptions,
    budget_caps,
    choose_offer,
    costed,
    frontier,
    is_old,
    rent_offer,
    within_budget,
)
from advisor.recommend.objectives import ordered
from advisor.recommend.recommendation import Recommendation

TODAY = date(2026, 6, 1)


def price(
    amount: float,
    day: date,
    condition: str = "new",
    kind: str = "purchase",
    market: str = "retail",
    user: bool = False,
    currency: str = "USD",
) -> PriceRecord:
    return PriceRecord("Card", amount, currency, day, condition, "a shop", user, kind, market)


def rec(**changes: Any) -> Recommendation:
    values: dict[str, Any] = dict(
        card="Card",
        count=1,
        plan="single",
        fits=True,
        reasons=(),
        required_bytes=1,
        usable_bytes=2,
        max_batch=8,
        step_time_s=0.1,
        throughput=100.0,
        throughput_unit="samples/s",
        price_usd=1000.0,
        price_date=TODAY,
        price_condition="new",
        perf_per_dollar=0.1,
        perf_per_watt=1.0,
        price_kind="purchase",
        power_w=500.0,
    )
    values.update(changes)
    return Recommendation(**values)


def test_new_basis_takes_the_newest_prices_lowest_and_the_users_price_wins() -> None:
    launch = price(1599, date(2022, 10, 12), market="msrp")
    shops = [price(1999, date(2026, 5, 1)), price(1899, date(2026, 4, 1)), price(1700, date(2025, 1, 1))]
    # 1700 is more than 90 days older than the newest (2026-05-01): the current price is the lower of the others
    assert choose_offer([launch, *shops], "new").amount == 1899  # type: ignore[union-attr]
    mine = price(1500, date(2024, 1, 1), user=True)
    assert choose_offer([launch, *shops, mine], "new") is mine  # the user's own price, even an older one
    assert choose_offer([launch, *shops], "used") is None


def test_used_lowest_and_rent_bases() -> None:
    new = price(1600, date(2026, 5, 1))
    used = price(900, date(2026, 5, 2), condition="used", market="used_market")
    refurb = price(1000, date(2026, 5, 3), condition="refurbished", market="used_market")
    euro = price(800, date(2026, 5, 4), condition="used", market="used_market", currency="EUR")  # > 900 USD
    on_demand = price(2.49, date(2026, 5, 1), kind="rent_hour", market="cloud_on_demand")
    spot = price(1.10, date(2026, 5, 1), kind="rent_hour", market="cloud_spot")
    every = [new, used, refurb, euro, on_demand, spot]
    assert choose_offer(every, "used") is used  # 800 EUR is more than 900 USD at any rate of 2026 (1.17)
    assert choose_offer(every, "lowest") is used
    assert choose_offer(every, "rent") is on_demand  # spot capacity can be taken away: not ranked on
    assert rent_offer([spot]) is None
    with pytest.raises(AdvisorError, match="--price-basis"):
        choose_offer(every, "borrowed")


def test_a_price_in_another_currency_competes_in_usd_and_one_without_a_rate_does_not() -> None:
    used = price(900, date(2026, 5, 2), condition="used", market="used_market")
    euro = price(700, date(2026, 5, 4), condition="used", market="used_market", currency="EUR")
    unknown = price(1, date(2026, 5, 5), condition="used", market="used_market", currency="XYZ")
    usd_per_eur = bundled_rates().usd_per_unit("EUR")
    assert usd_per_eur is not None and 700 * usd_per_eur < 900  # the euro price is the cheaper one
    best = choose_offer([used, euro, unknown], "used")
    assert best is not None and best.currency == "USD" and best.amount == pytest.approx(700 * usd_per_eur)
    assert best.source.startswith("from 700.00 EUR at ") and best.source.endswith("; a shop")
    assert choose_offer([unknown], "used") is None  # no rate for XYZ: it cannot be compared


def test_a_price_over_a_year_old_is_old() -> None:
    assert is_old(date(2025, 5, 31), TODAY) and not is_old(date(2025, 6, 1), TODAY)
    old = costed(rec(), price(699, date(2017, 3, 10)), None, 1, MoneyOptions(today=TODAY))
    assert old.price_old and old.job_hours is None and old.job_cost_usd is None  # no job size: no job cost


def test_bought_job_cost_and_break_even_arithmetic() -> None:
    # 2 cards bought for 1000 each (price_usd 2000 for both), 2 x 250 W, 3.6e6 samples at 100 samples/s.
    entry = rec(count=2, price_usd=2000.0, power_w=500.0)
    rent = price(1.5, TODAY, kind="rent_hour", market="cloud_on_demand")
    done = costed(entry, price(1000, TODAY), rent, 1, MoneyOptions(samples=3.6e6, kwh_usd=0.2, today=TODAY))
    assert done.job_hours == pytest.approx(10.0)  # 3.6e6 / 100 / 3600 = 10 h
    assert done.job_cost_usd == pytest.approx(2001.0)  # 2000 + 0.5 kW x 10 h x 0.2 = 2000 + 1
    # renting 2 cards: 1.5 x 2 = 3.0 USD/h; owning saves 3.0 - 0.1 = 2.9 USD/h; 2000 / 2.9 = 689.66 h
    assert done.break_even_hours == pytest.approx(2000 / 2.9)


def test_rented_job_cost_and_tokens() -> None:
    # 4 cards at 2.5 USD per GPU-hour: price_usd 10 USD/h; 1.8e9 tokens at 50,000 tokens/s
    entry = rec(count=4, price_usd=10.0, price_kind="rent_hour", throughput=50_000.0, throughput_unit="tokens/s")
    per_gpu_hour = price(2.5, TODAY, kind="rent_hour", market="cloud_on_demand")
    done = costed(entry, per_gpu_hour, None, 1024, MoneyOptions(tokens=1.8e9, today=TODAY))
    assert done.job_hours == pytest.approx(10.0)  # 1.8e9 / 5e4 / 3600 = 10 h
    assert done.job_cost_usd == pytest.approx(100.0)  # 10 h x 10 USD/h
    assert done.break_even_hours is None  # renting has nothing to break even with
    samples = costed(entry, per_gpu_hour, None, 1024, MoneyOptions(samples=1e5, today=TODAY))
    assert samples.job_hours == pytest.approx(1e5 * 1024 / 5e4 / 3600)  # samples x tokens each / tokens/s
    with pytest.raises(AdvisorError, match="--tokens"):
        costed(rec(), None, None, 1, MoneyOptions(tokens=1e6))


def test_rent_cheaper_than_power_never_breaks_even_and_budget_rules() -> None:
    rent = price(0.05, TODAY, kind="rent_hour", market="cloud_on_demand")
    done = costed(rec(power_w=1000.0), price(1000, TODAY), rent, 1, MoneyOptions(samples=1e6, kwh_usd=0.1, today=TODAY))
    assert done.break_even_hours is None  # power alone costs 1 kW x 0.1 = 0.1 USD/h > 0.05 rent
    assert within_budget(rec(price_usd=999.0), 1000.0) and not within_budget(rec(price_usd=1001.0), 1000.0)
    assert within_budget(rec(price_usd=None), 1.0)  # unpriced rows stay, listed after the priced ones
    assert not within_budget(rec(price_kind="rent_hour", price_usd=5.0, job_cost_usd=2000.0), 1000.0)
    # a rent per hour has a total only with a job size: without one a budget caps nothing (the CLI refuses it,
    # the app greys its budget box)
    assert within_budget(rec(price_kind="rent_hour", price_usd=5.0, job_cost_usd=None), 1.0)
    assert [budget_caps(MoneyOptions(basis)) for basis in ("new", "used", "lowest", "rent")] == [True] * 3 + [False]
    assert budget_caps(MoneyOptions("rent", samples=1e6)) and budget_caps(MoneyOptions("rent", tokens=1e9))


def test_money_objectives_rank_priced_fitting_rows_before_unpriced_ones() -> None:
    rows = [
        rec(card="fast unpriced", price_usd=None, perf_per_dollar=None, throughput=1e6),
        rec(card="slow priced", perf_per_dollar=0.01, throughput=10.0),
        rec(card="good value", perf_per_dollar=0.5, throughput=500.0),
        rec(card="too small", fits=False, perf_per_dollar=9.0),
    ]
    assert [r.card for r in ordered(rows, "perf_per_dollar")] == [
        "good value",
        "slow priced",
        "fast unpriced",
        "too small",
    ]
    assert [r.card for r in ordered(rows, "cheapest")][:3] == ["good value", "slow priced", "fast unpriced"]
    assert ordered(rows, "fastest")[0].card == "fast unpriced"
    cheap_job = rec(card="cheap job", price_usd=3000.0, job_cost_usd=3001.0)
    dear_job = rec(card="dear job", price_usd=2000.0, job_cost_usd=5000.0)
    assert [r.card for r in ordered([dear_job, cheap_job], "cheapest")] == ["cheap job", "dear job"]


def test_the_frontier_keeps_what_nothing_beats_on_both_time_and_cost() -> None:
    rows = [
        rec(card="slow cheap", job_hours=100.0, job_cost_usd=50.0),
        rec(card="fast dear", job_hours=1.0, job_cost_usd=900.0),
        rec(card="middle", job_hours=10.0, job_cost_usd=300.0),
        rec(card="beaten", job_hours=20.0, job_cost_usd=400.0),  # middle is faster and cheaper
        rec(card="no fit", fits=False, job_hours=0.5, job_cost_usd=1.0),
        rec(card="no size"),
    ]
    assert [r.card for r in frontier(rows)] == ["fast dear", "middle", "slow cheap"]


def test_a_perf_per_dollar_tie_goes_to_fewer_cards() -> None:
    # data parallel: 8 cards give 8 x the throughput for 8 x the price, the same value to 3 figures
    one = rec(card="A580", count=1, throughput=100.0, price_usd=180.0, perf_per_dollar=100.0 / 180.0)
    eight = rec(
        card="A580", count=8, plan="data_parallel", throughput=799.99, price_usd=1440.0, perf_per_dollar=799.99 / 1440.0
    )  # 0.555549 vs 0.555556: equal to 4 significant figures
    better = rec(card="B580", count=2, throughput=230.0, price_usd=400.0, perf_per_dollar=230.0 / 400.0)
    assert [(r.card, r.count) for r in ordered([eight, one, better], "perf_per_dollar")] == [
        ("B580", 2),
        ("A580", 1),
        ("A580", 8),
    ]  # 0.575 beats 0.556; the tie goes to 1 card, not 8
