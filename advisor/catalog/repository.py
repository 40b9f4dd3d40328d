"""Repository functions: each takes a Session the caller opened (Catalog.read / write / transact) and
returns plain records. The only module that turns ORM rows into records and back.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import fields, replace
from datetime import date
from typing import Any

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from advisor.catalog.errors import AmbiguousCardError, CatalogError, DuplicateCardError, UnknownCardError
from advisor.catalog.names import match, normalize
from advisor.catalog.orm import FIGURE_COLUMNS, USER, Alias, Card, Price
from advisor.catalog.price_rows import EARLIEST_PRICE
from advisor.catalog.records import CONDITIONS, KINDS, MARKETS, CardRecord, CardSpec, PriceRecord, missing_figures

# Columns a spec shares with the cards table (every declared figure but the aliases, which have their own table).
SPEC_COLUMNS: tuple[str, ...] = FIGURE_COLUMNS
SORT_KEYS: dict[str, Any] = {
    "name": Card.name,
    "memory": Card.memory_bytes,
    "bandwidth": Card.bandwidth_gbs,
    "fp32": Card.fp32_tflops,
    "fp16": Card.fp16_tflops,
    "bf16": Card.bf16_tflops,
    "tdp": Card.tdp_w,
    "launch": Card.launch_date,
    "price": Card.msrp_usd,
}


def _record(card: Card, aliases: Sequence[str]) -> CardRecord:
    values = {column: getattr(card, column) for column in SPEC_COLUMNS}
    return CardRecord(**values, aliases=tuple(aliases), user_owned=card.origin == USER)


def _price_record(price: Price, card_name: str) -> PriceRecord:
    return PriceRecord(
        card_name=card_name,
        amount=price.amount,
        currency=price.currency,
        date=price.date,
        condition=price.condition,
        source=price.source,
        user_owned=price.origin == USER,
        kind=price.kind,
        market=price.market,
        source_url=price.source_url,
        source_read_date=price.source_read_date,
    )


def price_orm(card_id: int, price: PriceRecord, origin: str) -> Price:
    return Price(
        card_id=card_id,
        amount=float(price.amount),
        currency=price.currency.upper(),
        date=price.date,
        condition=price.condition,
        source=price.source,
        origin=origin,
        kind=price.kind,
        market=price.market,
        source_url=price.source_url,
        source_read_date=price.source_read_date,
    )


def _aliases_of(session: Session, card_ids: Iterable[int]) -> dict[int, list[str]]:
    ids = list(card_ids)
    found: dict[int, list[str]] = defaultdict(list)
    query = select(Alias.card_id, Alias.display).where(Alias.card_id.in_(ids)).order_by(Alias.id)
    for card_id, display in session.execute(query):
        found[card_id].append(display)
    return found


def orm_card(session: Session, name: str) -> Card | None:
    return session.scalar(select(Card).join(Alias).where(Alias.alias == normalize(name)))


def resolve_card(session: Session, name: str) -> Card | None:
    """The card a typed name means: an exact name or alias, else the same words in any order or spelling
    (names.match). AmbiguousCardError lists the candidates when the words fit several cards."""
    card = orm_card(session, name)
    if card is not None:
        return card
    pairs = [(alias, card) for alias, card in session.execute(select(Alias.display, Card.name).join(Card))]
    found = match(name, pairs)
    if len(found) > 1:
        raise AmbiguousCardError(name, found)
    return session.scalar(select(Card).where(Card.name == found[0])) if found else None


def _require(session: Session, name: str) -> Card:
    card = resolve_card(session, name)
    if card is None:
        names = [display for (display,) in session.execute(select(Alias.display))]
        raise UnknownCardError(name, difflib.get_close_matches(name, names, n=3, cutoff=0.6))
    return card


def _as_record(session: Session, card: Card) -> CardRecord:
    aliases = [a for a in _aliases_of(session, [card.id]).get(card.id, []) if a != card.name]
    return _record(card, aliases)


def find_card(session: Session, name: str) -> CardRecord:
    """The card a name or alias means (case-insensitive); UnknownCardError suggests close names."""
    return _as_record(session, _require(session, name))


def lookup_card(session: Session, name: str) -> CardRecord | None:
    card = resolve_card(session, name)
    return None if card is None else _as_record(session, card)


def list_cards(
    session: Session,
    *,
    vendor: str | None = None,
    segment: str | None = None,
    min_memory_bytes: int | None = None,
    sort_by: str = "name",
    descending: bool | None = None,
) -> list[CardRecord]:
    """Cards matching every given filter, sorted by `sort_by` (figures default to largest first)."""
    if sort_by not in SORT_KEYS:
        raise CatalogError(f"cannot sort by {sort_by!r}; choose one of {', '.join(SORT_KEYS)}")
    conditions: list[ColumnElement[bool]] = []
    if vendor:
        conditions.append(Card.vendor == _canonical_vendor(session, vendor))
    if segment:
        conditions.append(Card.segment == segment.lower())
    if min_memory_bytes:
        conditions.append(Card.memory_bytes >= min_memory_bytes)
    key = SORT_KEYS[sort_by]
    down = (sort_by != "name") if descending is None else descending
    order = [key.desc().nulls_last() if down else key.asc().nulls_last(), Card.name]
    # Plain column rows, not ORM objects: building 10,000 tracked objects costs more than the query itself.
    columns = [getattr(Card, column) for column in SPEC_COLUMNS]
    rows = session.execute(select(Card.id, Card.origin, *columns).where(*conditions).order_by(*order)).all()
    aliases: dict[int, list[str]] = defaultdict(list)
    alias_query = select(Alias.card_id, Alias.display).join(Card)
    alias_query = alias_query.where(*conditions, Alias.display != Card.name)
    for card_id, display in session.execute(alias_query.order_by(Alias.id)):
        aliases[card_id].append(display)
    return [
        CardRecord(
            **dict(zip(SPEC_COLUMNS, row[2:], strict=True)), aliases=tuple(aliases[row[0]]), user_owned=row[1] == USER
        )
        for row in rows
    ]


def _canonical_vendor(session: Session, vendor: str) -> str:
    known = {v.lower(): v for (v,) in session.execute(select(Card.vendor).distinct())}
    return known.get(vendor.lower(), vendor)


def attach_aliases(session: Session, card: Card, aliases: Iterable[str], origin: str) -> None:
    """Attach aliases (and the canonical name itself) unless another card already answers to them."""
    for display in dict.fromkeys([card.name, *aliases]):
        key = normalize(display)
        owner = session.scalar(select(Alias.card_id).where(Alias.alias == key))
        if owner is None:
            session.add(Alias(card=card, alias=key, display=display, origin=origin))
        elif owner != card.id and display == card.name:
            raise DuplicateCardError(card.name, display)
        elif owner != card.id:  # say so: silently dropping it left the user's alias pointing nowhere
            other = session.get(Card, owner)
            raise CatalogError(f"alias {display!r} already belongs to {other.name if other else 'another card'!r}")


def insert_card(session: Session, spec: CardSpec, origin: str) -> Card:
    existing = orm_card(session, spec.name)
    if existing is not None:
        raise DuplicateCardError(spec.name, existing.name)
    card = Card(**{column: getattr(spec, column) for column in SPEC_COLUMNS}, origin=origin)
    session.add(card)
    session.flush()
    attach_aliases(session, card, spec.aliases, origin)
    return card


def _require_complete(spec: CardSpec) -> None:
    missing = missing_figures(spec)
    if missing:
        raise CatalogError(f"card {spec.name or '(no name)'}: {', '.join(missing)} must be given (above zero)")


def add_card(session: Session, spec: CardSpec) -> CardRecord:
    """Add the user's own card; it is marked as theirs and never replaced by bundled data."""
    _require_complete(spec)
    card = insert_card(session, spec, USER)
    session.flush()
    return _as_record(session, card)


_EDITED = re.compile(r"edited by the user on [0-9-]+ \(([^)]*)\); other figures: (.*)", re.DOTALL)


def edited_source(source: str, changes: Iterable[str]) -> str:
    """The source of an edited card: which figures the user changed (all edits together), then where the
    others come from. Rewritten, not prefixed again, so repeated edits do not grow it."""
    earlier = _EDITED.fullmatch(source)
    columns = dict.fromkeys([*(earlier.group(1).split(", ") if earlier else []), *changes])
    original = earlier.group(2) if earlier else source
    return f"edited by the user on {date.today().isoformat()} ({', '.join(columns)}); other figures: {original}"


def edit_card(session: Session, name: str, **changes: Any) -> CardRecord:
    """Change figures of any card; the row becomes the user's, so a bundled data update leaves it be."""
    unknown = set(changes) - set(SPEC_COLUMNS) - {"aliases"}
    if unknown:
        raise CatalogError(f"cannot edit {', '.join(sorted(unknown))}: not a card figure")
    card = _require(session, name)
    aliases = changes.pop("aliases", ())
    for column, value in changes.items():
        setattr(card, column, value)
    if changes and "source" not in changes:
        card.source = edited_source(card.source, changes)
    card.origin = USER
    session.flush()
    attach_aliases(session, card, aliases, USER)
    session.flush()
    record = _as_record(session, card)
    _require_complete(record)  # the caller's transaction rolls the edit back
    return record


def remove_card(session: Session, name: str) -> str:
    """Delete one of the user's own cards (with its prices and aliases); bundled cards are refused, since
    the next data update would bring them back. Returns the removed card's name."""
    card = _require(session, name)
    if card.origin != USER:
        raise CatalogError(f"{card.name} is a bundled card and cannot be removed; only cards you added or edited can")
    removed = card.name
    session.delete(card)
    session.flush()
    return removed


def spec_of(record: CardRecord) -> CardSpec:
    return CardSpec(**{f.name: getattr(record, f.name) for f in fields(CardSpec)})


def import_cards(session: Session, specs: Sequence[CardSpec]) -> tuple[int, int, int]:
    """Add new cards and apply changed figures to existing ones as user edits. -> (added, edited, same)."""
    added = edited = same = 0
    for spec in specs:
        card = orm_card(session, spec.name)
        if card is None:
            insert_card(session, spec, USER)
            added += 1
            continue
        current = spec_of(_as_record(session, card))
        wanted = replace(spec, name=card.name, aliases=current.aliases + spec.aliases)
        changes = {c: getattr(wanted, c) for c in SPEC_COLUMNS if getattr(wanted, c) != getattr(current, c)}
        new_aliases = [a for a in spec.aliases if orm_card(session, a) is None]
        if changes or new_aliases:
            edit_card(session, card.name, **changes, aliases=new_aliases)
            edited += 1
        else:
            same += 1
    return added, edited, same


def add_price(
    session: Session,
    card_name: str,
    amount: float,
    *,
    currency: str = "USD",
    on: date | None = None,
    condition: str = "new",
    source: str = "entered by the user",
    origin: str = USER,
    kind: str = "purchase",
    market: str | None = None,
    source_url: str = "",
) -> PriceRecord:
    """Record one price; the market defaults to what the condition and kind imply (used -> used_market)."""
    market = market or default_market(condition, kind)
    for label, value, options in (
        ("condition", condition, CONDITIONS),
        ("kind", kind, KINDS),
        ("market", market, MARKETS),
    ):
        if value not in options:
            raise CatalogError(f"price {label} {value!r} is not one of {', '.join(options)}")
    if not (amount > 0 and math.isfinite(amount)):
        raise CatalogError(f"price {amount!r} is not a positive amount")
    if origin == USER and on is not None:  # as import-prices checks each row (price_rows.py)
        _check_seen_on(on)
    card = _require(session, card_name)
    record = PriceRecord(
        card.name,
        float(amount),
        currency.upper(),
        on or date.today(),
        condition,
        source,
        origin == USER,
        kind,
        market,
        source_url,
    )
    price = price_orm(card.id, record, origin)
    session.add(price)
    session.flush()
    return _price_record(price, card.name)


def _check_seen_on(on: date) -> None:
    """A typed price is dated the day it was seen: `set-price --date 2099-01-01` was kept and shown as
    'today', the newest price of the card."""
    if on > date.today():
        raise CatalogError(f"price date {on} is in the future; give the day the price was seen")
    if on < EARLIEST_PRICE:
        raise CatalogError(f"price date {on} is before {EARLIEST_PRICE}, earlier than any GPU price")


def default_market(condition: str, kind: str) -> str:
    if kind == "rent_hour":
        return "cloud_on_demand"
    return "retail" if condition == "new" else "used_market"


def all_prices(session: Session) -> dict[str, list[PriceRecord]]:
    """Every price of every card in one query, oldest first per card (ranking reads them all at once)."""
    found: dict[str, list[PriceRecord]] = defaultdict(list)
    query = select(Price, Card.name).join(Card).order_by(Price.date, Price.id)
    for price, name in session.execute(query):
        found[name].append(_price_record(price, name))
    return found


def price_history(session: Session, card_name: str) -> list[PriceRecord]:
    """Every price of a card, oldest first."""
    card = _require(session, card_name)
    query = select(Price).where(Price.card_id == card.id).order_by(Price.date, Price.id)
    return [_price_record(p, card.name) for p in session.scalars(query)]


def latest_price(
    session: Session, card_name: str, condition: str | None = None, currency: str | None = None
) -> PriceRecord | None:
    """The most recent price of a card (optionally only new or used, or one currency); None if none."""
    card = _require(session, card_name)
    query = select(Price).where(Price.card_id == card.id)
    if condition is not None:
        query = query.where(Price.condition == condition)
    if currency is not None:
        query = query.where(Price.currency == currency.upper())
    # Same day: the row entered last wins (a user correcting a price enters it after the first).
    price = session.scalar(query.order_by(Price.date.desc(), Price.id.desc()).limit(1))
    return None if price is None else _price_record(price, card.name)


# A stored price as a record, for catalog/update.py (which reports the feed prices it removed).
price_record = _price_record
