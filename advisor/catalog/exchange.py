"""Prices in other currencies, in US dollars, so that every dated price can be ranked and charted.

The rates are the European Central Bank's euro reference rates of one day, bundled in
advisor/data/exchange_rates.csv (currency, units_per_eur, date, source key of sources.csv) exactly as the
ECB publishes them: units of each currency per euro. A currency's price in USD is therefore
amount x (USD per euro) / (its units per euro). A price converted this way says so in its source text, with
the rate and its date, so a reader can redo the arithmetic. A currency without a rate is not converted:
the money code leaves such a price out, as it did before any rate was bundled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date
from functools import lru_cache
from pathlib import Path

from advisor.catalog.bundled import bundled_dir, load_sources
from advisor.catalog.csvio import rows
from advisor.catalog.errors import CatalogDataError
from advisor.catalog.present import amount_text
from advisor.catalog.records import PriceRecord

RATES_FILE = "exchange_rates.csv"


@dataclass(frozen=True)
class ExchangeRates:
    """Units of each currency per euro on `date`, from `source` (a title)."""

    units_per_eur: Mapping[str, float]
    date: date
    source: str

    def usd_per_unit(self, currency: str) -> float | None:
        """US dollars for one unit of `currency`; None where no rate is known."""
        units = self.units_per_eur.get(currency.upper())
        usd = self.units_per_eur.get("USD")
        return None if units is None or usd is None else usd / units

    def in_usd(self, price: PriceRecord) -> PriceRecord | None:
        """`price` in USD (itself when it already is); None when its currency has no rate."""
        if price.currency == "USD":
            return price
        rate = self.usd_per_unit(price.currency)
        if rate is None:
            return None
        currency = price.currency
        note = f"from {amount_text(price.amount)} {currency} at {rate:.4f} USD/{currency} ({self.date} rate)"
        return replace(price, amount=price.amount * rate, currency="USD", source=f"{note}; {price.source}")


def priced_in_usd(prices: Iterable[PriceRecord], rates: ExchangeRates | None = None) -> list[PriceRecord]:
    """The prices that can be stated in USD, converted (bundled rates unless `rates` is given)."""
    rates = rates or bundled_rates()
    return [usd for usd in (rates.in_usd(p) for p in prices) if usd is not None]


def read_rates(directory: Path) -> ExchangeRates:
    """The rates file of `directory`; a malformed one is a data defect named by file and line."""
    path = directory / RATES_FILE
    sources = load_sources(directory)
    found: dict[str, float] = {}
    days: set[date] = set()
    titles: set[str] = set()
    for line, row in rows(path.read_text(encoding="utf-8")):
        try:
            units = float(row["units_per_eur"])
            if not 0 < units < float("inf"):
                raise ValueError(f"units_per_eur {row['units_per_eur']!r} is not a positive number")
            days.add(date.fromisoformat(row["date"].strip()))
            titles.add(sources[row["source"].strip()].title)
        except (KeyError, ValueError) as error:
            raise CatalogDataError(str(path), [f"line {line}: {error}"]) from None
        found[row["currency"].strip().upper()] = units
    if len(days) != 1 or len(titles) != 1 or "USD" not in found:
        raise CatalogDataError(str(path), ["the rates must be one source's rates of one day, USD among them"])
    return ExchangeRates(found, days.pop(), titles.pop())


@lru_cache(maxsize=1)
def bundled_rates() -> ExchangeRates:
    return read_rates(bundled_dir())
