"""The catalog's CSV format, shared by the bundled data in advisor/data/, `catalog import` and `catalog export`.

One format everywhere so that an export can be edited and imported again. Memory is written in the vendor's
"GB", which for memory means GiB (2**30 bytes, see advisor/data/README.md); the database stores bytes.
A bad file is reported whole: every bad row with its line number, and nothing is imported.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from advisor.catalog.errors import CatalogDataError, CatalogError
from advisor.catalog.figures import Figure, cell, parser
from advisor.catalog.names import normalize
from advisor.catalog.records import FIGURES, CardSpec
from advisor.core.files import read_text_capped

# A user's CSV file (cards or prices) is read whole, so it is capped: the bundled cards.csv is about 40 KB
# and 100,000 price rows about 7 MB; 64 MiB leaves room for any real file and bounds the memory it takes.
MAX_CSV_BYTES = 64 * 2**20

# Derived from the figures CardSpec declares (records.FIGURES): one column each, in field order.
CARD_COLUMNS: tuple[str, ...] = tuple(f.column for f in FIGURES)
REQUIRED = frozenset(f.column for f in FIGURES if f.required)
_BY_COLUMN: dict[str, Figure] = {f.column: f for f in FIGURES}


# A spreadsheet runs a cell that begins with one of these as a formula ("=cmd|' /C calc'!A0"); OWASP's CSV
# Injection page (https://owasp.org/www-community/attacks/CSV_Injection, read 2026-12-01) says to prefix such
# a cell with a single quote, which spreadsheets take as "this is text". A cell that already begins with a
# quote gets one more, so that reading back (unescape_cell) returns exactly the text that was exported.
FORMULA_LEADS: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
_ESCAPED_LEADS = (*FORMULA_LEADS, "'")


def escape_cell(text: str) -> str:
    return "'" + text if text.startswith(_ESCAPED_LEADS) else text


def unescape_cell(text: str) -> str:
    return text[1:] if text.startswith("'") and text[1:].startswith(_ESCAPED_LEADS) else text


_PARSERS: dict[str, Callable[[str], Any]] = {f.column: parser(f) for f in FIGURES}


def parse_fields(
    row: Mapping[str, str | None],
    parsers: Mapping[str, Callable[[str], Any]],
    required: Collection[str],
    defaults: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Parse each column of a CSV row: -> (values of the filled columns, "column: why" per bad one)."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for column, parse in parsers.items():
        text = (row.get(column) or "").strip() or (defaults or {}).get(column, "")
        if not text:
            if column in required:
                problems.append(f"{column} is missing")
            continue
        try:
            values[column] = parse(text)
        except ValueError as error:
            problems.append(f"{column}: {error}")
    return values, problems


def parse_card_row(row: dict[str, str], source_map: Callable[[str], str] | None = None) -> CardSpec:
    """One CSV row -> CardSpec; raises ValueError naming every bad field of the row."""
    values, problems = parse_fields(row, _PARSERS, REQUIRED)
    if source_map is not None and "source" in values:
        try:
            values["source"] = source_map(values["source"])
        except KeyError as error:
            problems.append(f"source: unknown source key {error}")
    if problems:
        raise ValueError("; ".join(problems))
    return CardSpec(**{_BY_COLUMN[column].field: value for column, value in values.items()})


def _rows_of(
    reader: csv.DictReader[str], where: str, error: type[CatalogDataError]
) -> Iterator[tuple[int, dict[str, str]]]:
    try:
        for row in reader:
            yield reader.line_num, {k: unescape_cell(v) if isinstance(v, str) else v for k, v in row.items()}
    except csv.Error as failure:  # line_num counts the lines read before the one that failed
        raise error(where, [f"line {reader.line_num + 1}: {failure}"]) from None


def open_table(
    text: str,
    where: str,
    error: type[CatalogDataError] = CatalogDataError,
) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:
    """(column names, (line, row) pairs) of a CSV text, cells unescaped (escape_cell). A malformed file, e.g.
    a cell over the csv module's 128 KiB field limit, is `error` naming its line, not a csv.Error traceback."""
    reader = csv.DictReader(io.StringIO(text))
    try:
        columns = list(reader.fieldnames or [])
    except csv.Error as failure:  # line_num counts the lines read before the one that failed
        raise error(where, [f"line {reader.line_num + 1}: {failure}"]) from None
    return columns, _rows_of(reader, where, error)


def read_cards(text: str, where: str, source_map: Callable[[str], str] | None = None) -> list[CardSpec]:
    """Every card of a CSV text, or CatalogDataError listing every bad row ("line N: ...")."""
    columns, table = open_table(text, where)
    missing = [c for c in sorted(REQUIRED) if c not in columns]
    if missing:
        raise CatalogDataError(where, [f"line 1: missing column(s) {', '.join(missing)}"])
    cards: list[CardSpec] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for line, row in table:
        try:
            card = parse_card_row(row, source_map)
        except ValueError as error:
            problems.append(f"line {line}: {error}")
            continue
        clash = [n for n in (card.name, *card.aliases) if normalize(n) in seen]
        if clash:
            problems.append(f"line {line}: {clash[0]!r} already used on line {seen[normalize(clash[0])]}")
            continue
        seen.update({normalize(n): line for n in (card.name, *card.aliases)})
        cards.append(card)
    if problems:
        raise CatalogDataError(where, problems)
    return cards


def read_cards_file(path: Path, source_map: Callable[[str], str] | None = None) -> list[CardSpec]:
    # A file that is not there, not a regular file or too big is one line, not "1 bad row".
    return read_cards(read_text_capped(path, MAX_CSV_BYTES, CatalogError), str(path), source_map)


def card_row(card: CardSpec) -> dict[str, str]:
    """CardSpec -> CSV row (memory back in GiB, as the file convention says)."""
    return {f.column: cell(f, getattr(card, f.field)) for f in FIGURES}


def write_cards(cards: Iterable[CardSpec], out: io.TextIOBase | Any) -> int:
    writer = csv.DictWriter(out, fieldnames=CARD_COLUMNS, lineterminator="\n")
    writer.writeheader()
    count = 0
    for card in cards:
        writer.writerow({column: escape_cell(text) for column, text in card_row(card).items()})
        count += 1
    return count


def rows(text: str, where: str = "CSV text") -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) pairs of a CSV text, for the small files (sources, prices)."""
    return open_table(text, where)[1]
