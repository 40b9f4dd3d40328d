"""The bundled data in advisor/data/: read it, and bring a database up to date with it without touching user rows.

Files (conventions in advisor/data/README.md): sources.csv (key, title, url, read_date), cards.csv (the CSV
format of csvio.py, `source` holding keys of sources.csv joined by "+"), prices.csv (the format of
price_rows.py: card, amount, currency, date, condition, kind, market, source key). A launch MSRP in
cards.csv also becomes a price (purchase, new, msrp) on the launch date, so the price history starts with
it and there is one place to write it.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from advisor.catalog.csvio import read_cards, rows
from advisor.catalog.errors import CatalogDataError, DuplicateCardError
from advisor.catalog.names import normalize, unambiguous_aliases
from advisor.catalog.orm import BUNDLED, Alias, Card, Meta, Price
from advisor.catalog.price_rows import Source, parse_price_row
from advisor.catalog.records import CONDITIONS, CardSpec, PriceRecord
from advisor.catalog.repository import SPEC_COLUMNS, price_orm

DATA_FILES = ("sources.csv", "cards.csv", "prices.csv")
DIGEST_KEY = "bundled_digest"


def bundled_dir() -> Path:
    """advisor/data/: package data, so the source tree, an editable install and a wheel all have it beside
    this package. A PyInstaller build (packaging/advisor.spec) puts it at <bundle>/advisor/data, where a
    frozen module's __file__ points too; sys._MEIPASS is the fallback should a freezer place modules elsewhere.
    """
    here = Path(__file__).resolve().parents[1] / "data"
    frozen = getattr(sys, "_MEIPASS", None)
    for candidate in (here, *([Path(frozen) / "advisor" / "data"] if frozen else [])):
        if (candidate / "cards.csv").is_file():
            return candidate
    return here


def data_digest(directory: Path) -> str:
    """Hash of the bundled files: a database seeded from the same files needs no re-seed at open."""
    digest = hashlib.sha256()
    for name in DATA_FILES:
        digest.update((directory / name).read_bytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class BundledData:
    cards: tuple[CardSpec, ...]
    prices: tuple[PriceRecord, ...]
    digest: str


def load_sources(directory: Path) -> dict[str, Source]:
    text = (directory / "sources.csv").read_text(encoding="utf-8")
    found: dict[str, Source] = {}
    for line, row in rows(text):
        read = (row.get("read_date") or "").strip()
        try:
            found[row["key"].strip()] = Source(
                row["title"].strip(), row["url"].strip(), date.fromisoformat(read) if read else None
            )
        except ValueError as error:
            raise CatalogDataError(str(directory / "sources.csv"), [f"line {line}: read_date: {error}"]) from None
    return found


def _source_map(sources: dict[str, Source]) -> Callable[[str], str]:
    def expand(keys: str) -> str:
        return " + ".join(f"{sources[k.strip()].title} <{sources[k.strip()].url}>" for k in keys.split("+"))

    return expand


def _msrp(card: CardSpec) -> PriceRecord | None:
    """cards.csv's launch price as a price fact (purchase, new, msrp) on the launch date."""
    if not (card.msrp_usd and card.launch_date):
        return None
    return PriceRecord(
        card.name,
        card.msrp_usd,
        "USD",
        card.launch_date,
        "new",
        f"launch MSRP; {card.source}",
        False,
        "purchase",
        "msrp",
    )


def _prices(directory: Path, cards: tuple[CardSpec, ...], sources: dict[str, Source]) -> list[PriceRecord]:
    """Launch MSRPs from cards.csv, then the dated prices of prices.csv; bad rows are a data defect."""
    names = {card.name for card in cards}
    prices = [p for p in (_msrp(card) for card in cards) if p is not None]
    problems: list[str] = []
    for line, row in rows((directory / "prices.csv").read_text(encoding="utf-8")):
        try:
            price = parse_price_row(dict(row), sources.__getitem__, user_owned=False)
            if price.card_name not in names:
                raise ValueError(f"card: unknown card {price.card_name!r}")
            prices.append(price)
        except ValueError as error:
            problems.append(f"line {line}: {error}")
    if problems:
        raise CatalogDataError(str(directory / "prices.csv"), problems)
    return prices


def load_bundled(directory: Path | None = None) -> BundledData:
    directory = directory or bundled_dir()
    sources = load_sources(directory)
    text = (directory / "cards.csv").read_text(encoding="utf-8")
    cards = tuple(read_cards(text, str(directory / "cards.csv"), _source_map(sources)))
    prices = _prices(directory, cards, sources)
    return BundledData(cards, tuple(prices), data_digest(directory))


def seeded_digest(session: Session) -> str | None:
    return session.scalar(select(Meta.value).where(Meta.key == DIGEST_KEY))


def apply_bundled(session: Session, data: BundledData) -> None:
    """Insert new bundled cards, update bundled ones, skip the user's; replace bundled aliases and prices.

    Done in a few batched statements, with the alias owners kept in memory: a query (and autoflush) per
    alias and price made a first start take half a second."""
    existing = {card.name: card for card in session.scalars(select(Card))}
    session.execute(delete(Alias).where(Alias.origin == BUNDLED))
    session.execute(delete(Price).where(Price.origin == BUNDLED))
    session.flush()
    owners: dict[str, int] = {alias: card_id for alias, card_id in session.execute(select(Alias.alias, Alias.card_id))}
    cards = _upsert_cards(session, data.cards, existing, owners)
    session.flush()  # ids for the new cards
    names = unambiguous_aliases((c.name for c in data.cards), {c.name: c.aliases for c in data.cards})
    for name, card in cards.items():
        _attach(session, card, names[name], owners)
    session.add_all(_price_row(cards[p.card_name], p) for p in data.prices if p.card_name in cards)
    session.merge(Meta(key=DIGEST_KEY, value=data.digest))


def _upsert_cards(
    session: Session, specs: tuple[CardSpec, ...], existing: dict[str, Card], owners: dict[str, int]
) -> dict[str, Card]:
    """The bundled cards by name, new ones added; a name one of the user's cards answers to is theirs: skipped."""
    cards: dict[str, Card] = {}
    for spec in specs:
        card = existing.get(spec.name)
        if card is None and normalize(spec.name) in owners:
            continue
        if card is None:
            card = Card(**{column: getattr(spec, column) for column in SPEC_COLUMNS}, origin=BUNDLED)
            session.add(card)
        elif card.origin == BUNDLED:
            for column in SPEC_COLUMNS:
                setattr(card, column, getattr(spec, column))
        cards[spec.name] = card
    return cards


def _attach(session: Session, card: Card, aliases: Iterable[str], owners: dict[str, int]) -> None:
    """The card's name and aliases, unless another card already answers to one (as attach_aliases does)."""
    for display in dict.fromkeys([card.name, *aliases]):
        key = normalize(display)
        owner = owners.get(key)
        if owner is None:
            session.add(Alias(card_id=card.id, alias=key, display=display, origin=BUNDLED))
            owners[key] = card.id
        elif owner != card.id and display == card.name:
            raise DuplicateCardError(card.name, display)


def _price_row(card: Card, price: PriceRecord) -> Price:
    if price.condition not in CONDITIONS or not price.amount > 0:
        raise CatalogDataError("prices.csv", [f"{price.card_name}: bad price {price.amount} {price.condition}"])
    return price_orm(card.id, price, BUNDLED)
