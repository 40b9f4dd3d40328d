"""`catalog import-prices FILE.csv`: the user's own prices, in the prices.csv format (price_rows.py).

Every row is checked first (its fields, then that its card is in the catalog); one bad row means nothing
is written, and the error lists each bad row by line and field. Imported prices are the user's: they win
over bundled ones and a data update never touches them. A row equal to one of the user's prices already
in the catalog is counted as unchanged, so importing the same file twice adds nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from advisor.catalog.bundled import bundled_dir, load_sources
from advisor.catalog.csvio import MAX_CSV_BYTES, open_table
from advisor.catalog.errors import CatalogError, PriceImportError
from advisor.catalog.exchange import bundled_rates, price_problems
from advisor.catalog.orm import USER, Price
from advisor.catalog.price_rows import REQUIRED_PRICE_COLUMNS, Source, free_text_source, parse_price_row
from advisor.catalog.records import PriceRecord
from advisor.catalog.repository import price_orm, resolve_card
from advisor.core.files import read_text_capped


@dataclass(frozen=True)
class ImportSummary:
    added: int
    unchanged: int
    cards: tuple[str, ...]  # canonical names of the cards that got a new price

    def text(self, where: str) -> str:
        names = ", ".join(self.cards[:5]) + (f" and {len(self.cards) - 5} more" if len(self.cards) > 5 else "")
        return (
            f"imported {where}: {self.added} price{'s' if self.added != 1 else ''} added"
            + (f" for {len(self.cards)} card{'s' if len(self.cards) != 1 else ''} ({names})" if names else "")
            + f", {self.unchanged} unchanged"
        )


def _source_lookup() -> dict[str, Source]:
    try:
        return load_sources(bundled_dir())
    except (OSError, CatalogError):
        return {}


def read_prices(text: str, where: str) -> list[tuple[int, PriceRecord]]:
    """(line, price) of every row, or PriceImportError naming each bad row's line and field."""
    columns, table = open_table(text, where, PriceImportError)
    missing = [c for c in REQUIRED_PRICE_COLUMNS if c not in columns]
    if missing:
        raise PriceImportError(where, [f"line 1: missing column(s) {', '.join(missing)}"])
    known = _source_lookup()

    def source(text: str) -> Source:
        return known.get(text) or free_text_source(text)

    rates = bundled_rates()
    found: list[tuple[int, PriceRecord]] = []
    problems: list[str] = []
    for line, row in table:
        try:
            price = parse_price_row(dict(row), source, user_owned=True)
        except ValueError as error:
            problems.append(f"line {line}, {error}")
            continue
        wrong = price_problems(price.amount, price.currency, price.kind, rates)
        problems.extend(f"line {line}, {problem}" for problem in wrong)
        if not wrong:
            found.append((line, price))
    if problems:
        raise PriceImportError(where, problems)
    return found


def read_prices_file(path: Path) -> list[tuple[int, PriceRecord]]:
    """A user's prices file: a regular file of at most MAX_CSV_BYTES (not /dev/zero, not a pipe)."""
    return read_prices(read_text_capped(path, MAX_CSV_BYTES, CatalogError), str(path))


def _fact(card_id: int, p: PriceRecord | Price) -> tuple[object, ...]:
    """What makes two prices the same observation (the source's wording does not)."""
    return (card_id, round(p.amount, 6), p.currency, p.date, p.condition, p.kind, p.market)


def import_prices(session: Session, rows: Sequence[tuple[int, PriceRecord]], where: str) -> ImportSummary:
    """Add the rows as the user's prices (inside the caller's transaction); unknown cards are bad rows."""
    problems: list[str] = []
    resolved: list[tuple[int, PriceRecord]] = []
    for line, price in rows:
        try:
            card = resolve_card(session, price.card_name)
        except CatalogError as error:  # an ambiguous name
            problems.append(f"line {line}, card: {error}")
            continue
        if card is None:
            problems.append(f"line {line}, card: {price.card_name!r} is not in the catalog")
            continue
        resolved.append((card.id, replace(price, card_name=card.name)))
    if problems:
        raise PriceImportError(where, problems)
    mine = session.execute(select(Price).where(Price.origin == USER)).scalars()
    present = {_fact(p.card_id, p) for p in mine}
    added: list[str] = []
    unchanged = 0
    for card_id, price in resolved:
        key = _fact(card_id, price)
        if key in present:
            unchanged += 1
            continue
        present.add(key)
        session.add(price_orm(card_id, price, USER))
        added.append(price.card_name)
    session.flush()
    return ImportSummary(len(added), unchanged, tuple(dict.fromkeys(added)))


# What makes two prices the same observation, for catalog/update.py (a feed row equal to a bundled price).
price_fact = _fact
