"""Recommendations straight from the catalog: the caller opens the session, this reads cards and prices."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy.orm import Session

from advisor.catalog import PriceRecord, list_cards
from advisor.catalog.repository import all_prices, price_history
from advisor.catalog.software import software_path
from advisor.recommend.money import PriceBasis, as_basis, choose_offer, rent_offer
from advisor.recommend.prepare import RankingInput
from advisor.recommend.ranking import RankingOptions, rank
from advisor.recommend.recommendation import Recommendation


@dataclass(frozen=True)
class CardFilter:
    vendor: str | None = None
    segment: str | None = None
    min_memory_bytes: int | None = None
    allow_used: bool = False  # the older switch: same as price_basis="lowest"
    price_basis: PriceBasis = PriceBasis.NEW  # its text is accepted too (__post_init__)
    software: str | None = None  # "CUDA", "ROCm", "XPU" or "Gaudi" (software.SOFTWARE_PATHS); None: all

    def __post_init__(self) -> None:
        object.__setattr__(self, "price_basis", as_basis(self.price_basis))

    @property
    def basis(self) -> PriceBasis:
        return PriceBasis.LOWEST if self.allow_used and self.price_basis is PriceBasis.NEW else self.price_basis


def best_price(session: Session, card: str, basis: PriceBasis | str | bool) -> PriceRecord | None:
    """The price `card` is ranked on: a PriceBasis (True/False: lowest/new, the older flag)."""
    name = basis if isinstance(basis, str) else (PriceBasis.LOWEST if basis else PriceBasis.NEW)
    return choose_offer(price_history(session, card), name)


def recommend(session: Session, job: RankingInput, cards: CardFilter, options: RankingOptions) -> list[Recommendation]:
    records = list_cards(session, vendor=cards.vendor, segment=cards.segment, min_memory_bytes=cards.min_memory_bytes)
    if cards.software:
        records = [c for c in records if software_path(c.vendor, c.architecture) == cards.software]
    history = all_prices(session)
    prices = {card.name: choose_offer(history.get(card.name, []), cards.basis) for card in records}
    rents = {card.name: rent_offer(history.get(card.name, [])) for card in records}
    if options.money.basis != cards.basis:
        options = replace(options, money=replace(options.money, basis=cards.basis))
    return rank(job, records, prices, options, rents)
