"""Prices in other currencies, in US dollars, so that every dated price can be ranked and charted.

The rates are the European Central Bank's euro reference rates of one day, bundled in
advisor/data/exchange_rates.csv (currency, units_per_eur, date, source key of sources.csv) exactly as the
ECB publishes them: units of each currency per euro. A currency's price in USD is therefore
amount x (USD per euro) / (its units per euro). A price converted this way says so in its source text, with
the rate and its date, so a reader can redo the arithmetic. A currency without a rate is not converted:
the money code leaves such a price out, as it did before any rate was bundled.
"""

from __future__ import annotations

import math
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
# What one price may be, in USD, so that a typo or a hostile file (1e308, 1e-7) cannot rank first or print
# as Infinity. A card costs from a few dollars used to a few hundred thousand for a datacenter board, and a
# GPU-hour from about a cent (old cards on spot markets) to a few hundred dollars (a whole 8-GPU node);
# the bounds sit an order of magnitude or more beyond both ends.
USD_BOUNDS: Mapping[str, tuple[float, float]] = {"purchase": (1.0, 1e7), "rent_hour": (1e-3, 1e4)}


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


def price_problems(amount: float, currency: str, kind: str, rates: ExchangeRates) -> list[str]:
    """Why a price cannot be right ("currency: ...", "amount: ..."); empty when it is plausible. A currency
    the rate table does not know could never be ranked, so it is refused where it enters the catalog."""
    rate = rates.usd_per_unit(currency)
    if rate is None:
        known = ", ".join(sorted(rates.units_per_eur))
        return [f"currency: {currency!r} is not one the exchange-rate table knows ({known})"]
    low, high = USD_BOUNDS.get(kind, USD_BOUNDS["purchase"])
    usd = amount * rate
    if not (math.isfinite(usd) and low <= usd <= high):
        per = " per GPU-hour" if kind == "rent_hour" else ""
        return [f"amount: {amount:g} {currency} (= {usd:.3g} USD{per}) is outside {low:g} to {high:g} USD{per}"]
    return []


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
