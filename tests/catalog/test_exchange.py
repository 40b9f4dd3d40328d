"""Exchange rates: the arithmetic of a conversion, the note it leaves, and the bundled file as data."""

from __future__ import annotations

import csv
from datetime import date
from pathlib import Path

import pytest

from advisor.catalog.bundled import bundled_dir
from advisor.catalog.errors import CatalogDataError
from advisor.catalog.exchange import RATES_FILE, ExchangeRates, bundled_rates, priced_in_usd, read_rates
from advisor.catalog.records import PriceRecord

RATES = ExchangeRates({"EUR": 1.0, "USD": 1.2, "CNY": 8.0}, date(2026, 5, 8), "a central bank")


def price(amount: float, currency: str) -> PriceRecord:
    return PriceRecord(
        "Card", amount, currency, date(2026, 6, 1), "new", "a cloud", False, "rent_hour", "cloud_on_demand"
    )


def test_conversion_arithmetic_goes_through_the_euro() -> None:
    assert RATES.usd_per_unit("eur") == pytest.approx(1.2)  # 1.2 USD per euro
    assert RATES.usd_per_unit("CNY") == pytest.approx(0.15)  # 1.2 / 8.0 = 0.15 USD per yuan
    assert RATES.usd_per_unit("USD") == pytest.approx(1.0)
    assert RATES.usd_per_unit("XYZ") is None


def test_a_converted_price_says_from_what_and_at_which_rate() -> None:
    dollars = price(2.5, "USD")
    assert RATES.in_usd(dollars) is dollars
    yuan = RATES.in_usd(price(20.0, "CNY"))
    assert yuan is not None and yuan.currency == "USD"
    assert yuan.amount == pytest.approx(3.0)  # 20 CNY x 0.15 = 3.00 USD
    assert yuan.source == "from 20.00 CNY at 0.1500 USD/CNY (2026-05-08 rate); a cloud"
    big = RATES.in_usd(price(110_000.0, "CNY"))
    assert big is not None and big.source.startswith("from 110,000.00 CNY at 0.1500 USD/CNY")
    assert priced_in_usd([price(1.0, "XYZ"), dollars], RATES) == [dollars]  # no rate: left out


def test_the_bundled_rates_are_one_days_ecb_rates() -> None:
    rates = bundled_rates()
    assert rates.date == date(2026, 5, 8) and "European Central Bank" in rates.source
    # Sanity bounds for 2026: a euro buys between 1 and 1.4 US dollars; a US dollar between 6 and 8 yuan.
    eur, cny = rates.usd_per_unit("EUR"), rates.usd_per_unit("CNY")
    assert eur is not None and 1.0 < eur < 1.4
    assert cny is not None and 6.0 < 1 / cny < 8.0


def _copy_with_rates(tmp_path: Path, text: str) -> Path:
    for name in ("sources.csv",):
        (tmp_path / name).write_text((bundled_dir() / name).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / RATES_FILE).write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("USD,-1,2026-05-08,ecb-eurofxref-2026-05-08\n", "line 2: units_per_eur '-1'"),
        ("USD,1.1,2026-13-08,ecb-eurofxref-2026-05-08\n", "line 2: month must be in 1..12"),
        ("USD,1.1,2026-05-08,no-such-source\n", "line 2: 'no-such-source'"),
        ("CNY,7.9,2026-05-08,ecb-eurofxref-2026-05-08\n", "USD among them"),
    ],
)
def test_a_bad_rates_file_names_file_and_line(tmp_path: Path, body: str, problem: str) -> None:
    directory = _copy_with_rates(tmp_path, "currency,units_per_eur,date,source\n" + body)
    with pytest.raises(CatalogDataError, match=RATES_FILE) as error:
        read_rates(directory)
    assert problem in str(error.value)


def test_every_bundled_price_can_be_ranked_in_usd() -> None:
    """A bundled price in a currency without a rate would be dead data: no ranking would ever read it."""
    with (bundled_dir() / "prices.csv").open(encoding="utf-8", newline="") as handle:
        currencies = {row["currency"] for row in csv.DictReader(handle)}
    assert {"USD", "EUR", "CNY"} <= currencies
    assert [c for c in sorted(currencies) if bundled_rates().usd_per_unit(c) is None] == []


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (1499, "1,499.00"),
        (2.49, "2.49"),
        (1.2426, "1.24"),  # cents from one unit up
        (0.0556, "0.0556"),
        (0.33, "0.33"),
        (0.5, "0.50"),  # below one: 3 significant digits, 2 decimals at least
        (0.5904, "0.59"),
        (0.7992, "0.799"),
        (0.999, "0.999"),
    ],
)
def test_amounts_below_one_keep_the_digits_cents_would_lose(amount: float, text: str) -> None:
    from advisor.catalog.present import amount_text

    assert amount_text(amount) == text  # 0.0556 in cents would be 0.06: 8% off
