"""The prices CSV format, shared by the bundled advisor/data/prices.csv and `catalog import-prices`.

Columns: card,amount,currency,date,condition,kind,market,source
- amount: a positive decimal in `currency` (ISO 4217, three letters); per card for kind=purchase, per
  GPU-hour for kind=rent_hour;
- date: YYYY-MM-DD the price was observed (not in the future);
- condition: new | used | refurbished;  kind: purchase | rent_hour;
- market: msrp | retail | used_market | cloud_on_demand | cloud_spot | cloud_reserved;
- source: a key of sources.csv (title, url, read date), or for the user's own file any text or address.
The first version of prices.csv had no kind and market: such rows are launch prices (purchase, msrp).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Any, NamedTuple

from advisor.catalog.csvio import parse_fields
from advisor.catalog.records import CONDITIONS, KINDS, MARKETS, PriceRecord

PRICE_COLUMNS: tuple[str, ...] = ("card", "amount", "currency", "date", "condition", "kind", "market", "source")
REQUIRED_PRICE_COLUMNS: tuple[str, ...] = ("card", "amount", "currency", "date", "condition", "source")
_CURRENCY = re.compile(r"^[A-Za-z]{3}$")
# No GPU was sold before this (NVIDIA's first, the GeForce 256, launched in 1999): an earlier date, like
# year 0001, is a typo or a hostile file.
EARLIEST_PRICE = date(1990, 1, 1)


class Source(NamedTuple):
    title: str
    url: str
    read_date: date | None


SourceLookup = Callable[[str], Source]


def _amount(text: str) -> float:
    value = float(text)
    if not 0 < value < float("inf"):
        raise ValueError(f"{text!r} is not a positive amount")
    return value


def _currency(text: str) -> str:
    if not _CURRENCY.match(text):
        raise ValueError(f"{text!r} is not a three-letter ISO 4217 code")
    return text.upper()


def _observed(text: str) -> date:
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a YYYY-MM-DD date") from None
    if day > date.today():
        raise ValueError(f"{text} is in the future")
    if day < EARLIEST_PRICE:
        raise ValueError(f"{text} is before {EARLIEST_PRICE}, earlier than any GPU price")
    return day


def _one_of(options: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text.lower() not in options:
            raise ValueError(f"{text!r} is not one of {', '.join(options)}")
        return text.lower()

    return parse


_PARSERS: dict[str, Callable[[str], Any]] = {
    "card": str.strip,
    "amount": _amount,
    "currency": _currency,
    "date": _observed,
    "condition": _one_of(CONDITIONS),
    "kind": _one_of(KINDS),
    "market": _one_of(MARKETS),
}
# A row of the first prices.csv format (no kind, no market) was an official launch price or price cut.
_DEFAULTS = {"kind": "purchase", "market": "msrp"}


def parse_price_row(row: dict[str, str | None], sources: SourceLookup, *, user_owned: bool) -> PriceRecord:
    """One CSV row -> PriceRecord; raises ValueError naming every bad field ("amount: ...; kind: ...")."""
    values, problems = parse_fields(row, _PARSERS, _PARSERS, _DEFAULTS)
    source_text = (row.get("source") or "").strip()
    source = None
    try:
        source = sources(source_text) if source_text else None
    except KeyError:
        problems.append(f"source: unknown source key {source_text!r}")
    if source is None and not problems:
        problems.append("source is missing")
    if values.get("kind") == "rent_hour" and not str(values.get("market", "")).startswith("cloud_"):
        problems.append(f"market: a rent_hour price comes from a cloud market, not {values.get('market')!r}")
    if problems or source is None:
        raise ValueError("; ".join(problems))
    return PriceRecord(
        values["card"],
        values["amount"],
        values["currency"],
        values["date"],
        values["condition"],
        source.title,
        user_owned,
        values["kind"],
        values["market"],
        source.url,
        source.read_date,
    )


# "Title <https://...>", the way a price feed (catalog/update.py) and `catalog export` write a source.
_CITED = re.compile(r"^(?P<title>.*\S)\s*<(?P<url>https?://[^<>\s]+)>$")


def free_text_source(text: str) -> Source:
    """A user's source: an address is kept as the address (and title), "title <address>" as both, anything
    else as the title."""
    cited = _CITED.match(text)
    if cited:
        return Source(cited["title"], cited["url"], None)
    is_url = text.startswith(("http://", "https://"))
    return Source(text, text if is_url else "", None)
