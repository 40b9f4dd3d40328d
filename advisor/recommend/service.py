"""Recommendations straight from the catalog: the caller opens the session, this reads cards and prices."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from advisor.catalog import PriceRecord, latest_price, list_cards
from advisor.recommend.engine import Job, Options, Recommendation, rank


@dataclass(frozen=True)
class CardFilter:
    vendor: str | None = None
    segment: str | None = None
    min_memory_bytes: int | None = None
    allow_used: bool = False  # rank by the cheaper of the newest new and used price


def best_price(session: Session, card: str, allow_used: bool) -> PriceRecord | None:
    offers = [latest_price(session, card, condition="new", currency="USD")]
    if allow_used:
        offers.append(latest_price(session, card, condition="used", currency="USD"))
    priced = [p for p in offers if p is not None]
    return min(priced, key=lambda p: p.amount) if priced else None


def recommend(session: Session, job: Job, cards: CardFilter, options: Options) -> list[Recommendation]:
    records = list_cards(session, vendor=cards.vendor, segment=cards.segment,
                         min_memory_bytes=cards.min_memory_bytes)
    prices = {card.name: best_price(session, card.name, cards.allow_used) for card in records}
    return rank(job, records, prices, options)
