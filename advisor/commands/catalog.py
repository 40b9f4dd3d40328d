"""`advisor catalog`: list, show, add, edit, set-price, prices, import-prices, update, import and export the
catalog.

Readable tables by default; --json prints one JSON object whose keys carry their units. Messages from
opening the database (rebuilt after damage, schema upgraded) go to stderr.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

from advisor.catalog import (
    SEGMENTS,
    SORT_KEYS,
    VENDORS,
    Catalog,
    CatalogError,
    add_card,
    add_price,
    edit_card,
    find_card,
    import_cards,
    list_cards,
    open_catalog,
    price_history,
)
from advisor.catalog.csvio import card_row, parse_card_row, read_cards_file, write_cards
from advisor.catalog.exchange import bundled_rates, price_problems
from advisor.catalog.figures import choice
from advisor.catalog.present import amount_text, card_detail, card_json, cards_table, price_json, prices_table
from advisor.catalog.price_import import import_prices, read_prices_file
from advisor.catalog.price_rows import PRICE_COLUMNS
from advisor.catalog.records import CONDITIONS, FIGURES, KINDS, MARKETS, CardRecord, PriceRecord
from advisor.catalog.repository import remove_card, spec_of
from advisor.catalog.update import FeedUnreachable, last_update, update_prices
from advisor.catalog.variants import variant_note
from advisor.commands import types
from advisor.core import jsontext
from advisor.core.files import write_atomic
from advisor.core.units import GIB

# Options of `add` / `edit`: one per declared card figure (records.FIGURES), named after its CSV column and
# parsed by the same parser (csvio), so a new figure gets its option without an edit here.
_FIELD_OF: dict[str, str] = {f.column: f.field for f in FIGURES}


def _session_catalog(args: argparse.Namespace) -> Catalog:
    catalog = open_catalog(args.catalog)
    for message in catalog.messages:
        print(f"advisor catalog: {message}", file=sys.stderr)
    return catalog


def _print_json(value: Any) -> None:
    print(jsontext.dumps(value, indent=2, ensure_ascii=False))


def cmd_list(args: argparse.Namespace) -> int:
    if args.segment and args.segment.lower() not in SEGMENTS:
        raise CatalogError(f"unknown segment {args.segment!r}; choose one of {', '.join(SEGMENTS)}")
    minimum = round(args.min_memory * GIB) if args.min_memory else None
    with _session_catalog(args).read() as session:
        cards = list_cards(
            session, vendor=args.vendor, segment=args.segment, min_memory_bytes=minimum, sort_by=args.sort
        )
    if args.json:
        _print_json({"cards": [card_json(c) for c in cards]})
    else:
        print(cards_table(cards) if cards else "no cards match")
    return 0


def _card_and_prices(args: argparse.Namespace) -> tuple[CardRecord, list[PriceRecord]]:
    with _session_catalog(args).read() as session:
        card = find_card(session, args.name)
        _say_variant(session, args.name)
        return card, price_history(session, card.name)


def _say_variant(session: Any, name: str) -> None:
    """On stderr, so that --json output stays one JSON object (catalog/variants.py)."""
    note = variant_note(session, name)
    if note:
        print(f"advisor catalog: {note}", file=sys.stderr)


def cmd_show(args: argparse.Namespace) -> int:
    card, prices = _card_and_prices(args)
    if args.json:
        _print_json({**card_json(card), "prices": [price_json(p) for p in prices]})
    else:
        print(card_detail(card, prices))
    return 0


def _figures(args: argparse.Namespace) -> dict[str, str]:
    return {k: str(v) for k in _FIELD_OF if (v := getattr(args, k, None)) is not None}


def _parsed(row: dict[str, str]) -> Any:
    try:
        return parse_card_row(row)
    except ValueError as error:
        raise CatalogError(str(error)) from error


def cmd_add(args: argparse.Namespace) -> int:
    spec = _parsed({"source": "entered by the user", **_figures(args)})
    card = _session_catalog(args).transact(lambda session: add_card(session, spec))
    print(json.dumps(card_json(card)) if args.json else f"added {card.name}")
    return 0


def cmd_edit(args: argparse.Namespace) -> int:
    given = _figures(args)
    if not given:
        raise CatalogError("say which figures to change, e.g. --tdp-w 350")

    def work(session: Any) -> Any:
        current = {k: v for k, v in _row_of(find_card(session, args.card)).items() if v}
        spec = _parsed({**current, **given})
        changes = {k: getattr(spec, k) for k in _spec_names(given)}
        return edit_card(session, args.card, **changes)

    card = _session_catalog(args).transact(work)
    print(json.dumps(card_json(card)) if args.json else f"edited {card.name}")
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    removed = _session_catalog(args).transact(lambda session: remove_card(session, args.card))
    print(json.dumps({"removed": removed}) if args.json else f"removed {removed}")
    return 0


def _row_of(card: Any) -> dict[str, str]:
    return card_row(spec_of(card))


def _spec_names(given: dict[str, str]) -> list[str]:
    return [_FIELD_OF[k] for k in given]


def cmd_set_price(args: argparse.Namespace) -> int:
    try:
        on = date.fromisoformat(args.date) if args.date else date.today()
    except ValueError as error:
        # 2026-02-30 is written YYYY-MM-DD and was told it was not; it is no day of the calendar
        raise CatalogError(f"--date {args.date!r} is not a calendar day written YYYY-MM-DD") from error
    condition = "used" if args.used else args.condition
    wrong = price_problems(args.amount, args.currency, args.kind, bundled_rates())
    if wrong:  # the same checks as import-prices: no 1e-7 USD card, no currency without a rate
        raise CatalogError(f"set-price: {'; '.join(wrong)}")
    with _session_catalog(args).read() as session:
        find_card(session, args.name)  # an unknown name fails here, before the note
        _say_variant(session, args.name)
    price = _session_catalog(args).transact(
        lambda session: add_price(
            session,
            args.name,
            args.amount,
            currency=args.currency,
            on=on,
            condition=condition,
            source=args.source,
            kind=args.kind,
            market=args.market,
            source_url=args.url or "",
        )
    )
    if args.json:
        _print_json(price_json(price))
    else:
        per = " per GPU-hour" if price.kind == "rent_hour" else ""
        print(
            f"{price.card_name}: {amount_text(price.amount)} {price.currency}{per} "
            f"({price.condition}, {price.market}) on {price.date}"
        )
    return 0


def cmd_prices(args: argparse.Namespace) -> int:
    card, prices = _card_and_prices(args)
    if args.json:
        _print_json({"card": card.name, "prices": [price_json(p) for p in prices]})
    else:
        print(
            f"{card.name}\n{prices_table(prices)}"
            if prices
            else f"{card.name}: no prices yet (set one with "
            f"`advisor catalog set-price` or `advisor catalog import-prices`)"
        )
        print(update_note(args))
    return 0


def update_note(args: argparse.Namespace) -> str:
    with _session_catalog(args).read() as session:
        info = last_update(session)
    when = (
        f"prices last updated {info.updated_on} from a feed of {info.feed_day}"
        if info
        else "prices as bundled with this release"
    )
    return f"{when}; `advisor catalog update` fetches newer ones"


def cmd_import_prices(args: argparse.Namespace) -> int:
    rows = read_prices_file(Path(args.file))  # every bad row is reported before anything is written
    summary = _session_catalog(args).transact(lambda session: import_prices(session, rows, args.file))
    print(summary.text(args.file))
    return 0


def cmd_update(args: argparse.Namespace) -> int:
    """Offline is one line and exit 0: the catalog is as it was, which is not an error (catalog/update.py)."""
    try:
        summary = update_prices(_session_catalog(args).transact, args.source)
    except FeedUnreachable as error:
        print(f"advisor catalog update: {error}", file=sys.stderr)
        return 0
    print(summary.text())
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    specs = read_cards_file(Path(args.file))  # every bad row is reported before anything is written
    added, edited, same = _session_catalog(args).transact(lambda session: import_cards(session, specs))
    print(f"imported {args.file}: {added} added, {edited} changed, {same} unchanged")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    with _session_catalog(args).read() as session:
        specs = [spec_of(c) for c in list_cards(session)]
    if args.file == "-":
        write_cards(specs, sys.stdout)
        return 0
    text = io.StringIO()
    count = write_cards(specs, text)
    # A failure keeps the old file; through a symbolic link the file written is the one it points at.
    written = write_atomic(args.file, text.getvalue().encode("utf-8"), CatalogError)
    print(f"exported {count} cards to {written}", file=sys.stderr)
    return 0


def _figure_options(parser: argparse.ArgumentParser, required: bool) -> None:
    for item in FIGURES:
        if item.column == "name" and not required:
            continue  # edit changes figures; the canonical name stays what reports already print
        needed = required and item.required and item.column != "source"
        parser.add_argument(f"--{item.column.replace('_', '-')}", dest=item.column, required=needed, help=item.help)


def _json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON with unit-carrying keys")


def _add(
    sub: Any, name: str, func: Callable[[argparse.Namespace], int], help_text: str, common: argparse.ArgumentParser
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text, parents=[common])
    parser.set_defaults(func=func)
    return parser


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 0


def register(catalog: argparse.ArgumentParser) -> None:
    """Configures the parser advisor/cli.py made; `func(args) -> int` runs the chosen command."""
    catalog.add_argument(
        "--catalog",
        metavar="PATH",
        default=None,
        help="catalog database file (default: $ADVISOR_CATALOG or the user data folder)",
    )
    catalog.set_defaults(func=lambda _args: _print_help(catalog))
    # The same option after the action too ("catalog list --catalog X"); SUPPRESS keeps the outer value.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--catalog", metavar="PATH", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    actions = catalog.add_subparsers(dest="action", parser_class=type(catalog))
    _register_reading(actions, common)
    _register_writing(actions, common)


def _register_reading(actions: Any, common: argparse.ArgumentParser) -> None:
    listing = _add(actions, "list", cmd_list, "cards, filtered and sorted", common)
    listing.add_argument("--vendor", type=types.argument(choice(VENDORS)), help=", ".join(VENDORS))
    listing.add_argument("--min-memory", type=types.memory_gib, metavar="GB", help="at least this much memory (GiB)")
    listing.add_argument("--segment", help=", ".join(SEGMENTS))
    listing.add_argument("--sort", default="name", choices=list(SORT_KEYS), help="sort key (default: name)")
    _json_option(listing)

    show = _add(actions, "show", cmd_show, "every figure and price of one card", common)
    show.add_argument("name", help="canonical name or any alias, e.g. 4090")
    _json_option(show)
    exporting = _add(actions, "export", cmd_export, "write every card to a CSV file ('-': stdout)", common)
    exporting.add_argument("file", type=types.csv_output)


def _register_writing(actions: Any, common: argparse.ArgumentParser) -> None:
    add = _add(actions, "add", cmd_add, "add your own card", common)
    _figure_options(add, required=True)
    _json_option(add)

    edit = _add(actions, "edit", cmd_edit, "change figures of a card (it becomes yours)", common)
    edit.add_argument("card", help="the card to change")
    _figure_options(edit, required=False)
    _json_option(edit)

    remove = _add(actions, "remove", cmd_remove, "delete a card you added or edited (bundled ones stay)", common)
    remove.add_argument("card", help="the card to delete")
    _json_option(remove)

    price = _add(actions, "set-price", cmd_set_price, "record a price of a card", common)
    price.add_argument("name", help="canonical name or any alias")
    price.add_argument("amount", type=types.money, help="the price")
    price.add_argument("--date", help="YYYY-MM-DD (default: today)")
    price.add_argument("--used", action="store_true", help="a used card's price (same as --condition used)")
    price.add_argument("--condition", choices=CONDITIONS, default="new", help="default: new")
    price.add_argument(
        "--kind",
        choices=KINDS,
        default="purchase",
        help="purchase (per card) or rent_hour (per GPU-hour); default: purchase",
    )
    price.add_argument(
        "--market",
        choices=MARKETS,
        default=None,
        help="default: retail, used_market for used, cloud_on_demand for rent_hour",
    )
    price.add_argument("--url", default=None, help="the address of the page the price is from")
    price.add_argument("--currency", type=types.currency_code, default="USD", help="ISO 4217 code (default: USD)")
    price.add_argument("--source", default="entered by the user", help="where the price was seen")
    _json_option(price)

    history = _add(actions, "prices", cmd_prices, "every price of one card, oldest first", common)
    history.add_argument("name", help="canonical name or any alias")
    _json_option(history)
    prices = _add(actions, "import-prices", cmd_import_prices, "add your prices from a CSV file", common)
    prices.add_argument(
        "file",
        type=types.csv_file,
        help="CSV with columns " + ",".join(PRICE_COLUMNS) + " (see README: Prices)",
    )

    update = _add(actions, "update", cmd_update, "bring prices up to date from the project's dated price feed", common)
    update.add_argument(
        "source",
        nargs="?",
        default=None,
        metavar="URL|FILE",
        help="a feed in the format of advisor/data/prices-feed.csv (default: $ADVISOR_PRICES_URL "
        "or the project's published feed)",
    )

    importing = _add(actions, "import", cmd_import, "add or change cards from a CSV file", common)
    importing.add_argument(
        "file",
        type=types.csv_file,
        help="CSV in the format of advisor/data/cards.csv (see advisor/data/README.md)",
    )
