"""The catalog's CSV format, shared by the bundled data in advisor/data/, `catalog import` and `catalog export`.

One format everywhere so that an export can be edited and imported again. Memory is written in the vendor's
"GB", which for memory means GiB (2**30 bytes, see advisor/data/README.md); the database stores bytes.
A bad file is reported whole: every bad row with its line number, and nothing is imported.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import fields
from datetime import date
from pathlib import Path
from typing import Any

from advisor.catalog.errors import CatalogDataError, CatalogError
from advisor.catalog.names import normalize
from advisor.catalog.records import LINK_KINDS, SEGMENTS, VENDORS, CardSpec
from advisor.core.files import read_text_capped

GIB = 2**30
# A user's CSV file (cards or prices) is read whole, so it is capped: the bundled cards.csv is about 40 KB
# and 100,000 price rows about 7 MB; 64 MiB leaves room for any real file and bounds the memory it takes.
MAX_CSV_BYTES = 64 * 2**20

CARD_COLUMNS: tuple[str, ...] = (
    "name", "aliases", "vendor", "architecture", "segment", "launch_date", "memory_gb", "memory_type",
    "bus_width_bits", "bandwidth_gbs", "fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops",
    "fp8_tflops", "int8_tops", "tdp_w", "pcie_gen", "devices", "link_kind", "link_detail",
    "link_bandwidth_gbs", "msrp_usd", "source", "unified_memory_gb",
)  # fmt: skip
REQUIRED = frozenset({"name", "vendor", "architecture", "segment", "memory_gb", "memory_type",
                      "bandwidth_gbs", "fp32_tflops", "tdp_w", "source"})  # fmt: skip


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


def _number(high: float) -> Callable[[str], float]:
    """A finite figure above 0 and at most `high`: NaN, infinity and absurd sizes stop here, where a figure
    enters the catalog (a CSV row, `catalog add/edit`), not in each command that reads it."""

    def parse(text: str) -> float:
        value = float(text)
        if not (math.isfinite(value) and 0 < value <= high):
            raise ValueError(f"{text!r} is not a number above 0 and at most {high:g}")
        return value

    return parse


def _whole(high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if not 0 < value <= high:
            raise ValueError(f"{text!r} is not a whole number from 1 to {high}")
        return value

    return parse


def _memory_gib(text: str) -> float:
    """From 1 MiB (2**-10 GiB: smaller is a typo, and rounds to a 0-byte card) to 1 PiB per card."""
    value = _number(2.0**20)(text)
    if value < 2.0**-10:
        raise ValueError(f"{text!r} GiB is less than 1 MiB")
    return value


# Ceilings far above any real card, so that a typo (1e12 GB, 1e23 W) is refused instead of overflowing
# SQLite's 64-bit integers or ranking a card that cannot exist.
_RATE = _number(1e6)  # TFLOPS, TOPS, GB/s: today's fastest parts are in the thousands


def _choice(options: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        for option in options:
            if text.lower() == option.lower():
                return option
        raise ValueError(f"{text!r} is not one of {', '.join(options)}")

    return parse


def _aliases(text: str) -> tuple[str, ...]:
    return tuple(a.strip() for a in text.split(";") if a.strip())


_PARSERS: dict[str, Callable[[str], Any]] = {
    "name": str.strip, "aliases": _aliases, "vendor": _choice(VENDORS), "architecture": str.strip,
    "segment": _choice(SEGMENTS), "launch_date": date.fromisoformat, "memory_gb": _memory_gib,
    "memory_type": str.strip, "bus_width_bits": _whole(65_536), "bandwidth_gbs": _RATE,
    "fp32_tflops": _RATE, "tf32_tflops": _RATE, "fp16_tflops": _RATE,
    "bf16_tflops": _RATE, "fp8_tflops": _RATE, "int8_tops": _RATE,
    "tdp_w": _whole(100_000), "pcie_gen": _whole(64), "devices": _whole(1024),
    "link_kind": _choice(LINK_KINDS), "link_detail": str.strip, "link_bandwidth_gbs": _RATE,
    "msrp_usd": _number(1e9),
    "source": str.strip, "unified_memory_gb": _memory_gib,
}  # fmt: skip


def parse_fields(row: Mapping[str, str | None], parsers: Mapping[str, Callable[[str], Any]],
                 required: Collection[str], defaults: Mapping[str, str] | None = None,
                 ) -> tuple[dict[str, Any], list[str]]:  # fmt: skip
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
    values["memory_bytes"] = round(values.pop("memory_gb") * GIB)
    if "unified_memory_gb" in values:
        values["unified_memory_bytes"] = round(values.pop("unified_memory_gb") * GIB)
    return CardSpec(**values)


def _rows_of(reader: csv.DictReader[str], where: str,
             error: type[CatalogDataError]) -> Iterator[tuple[int, dict[str, str]]]:  # fmt: skip
    try:
        for row in reader:
            yield reader.line_num, {k: unescape_cell(v) if isinstance(v, str) else v for k, v in row.items()}
    except csv.Error as failure:  # line_num counts the lines read before the one that failed
        raise error(where, [f"line {reader.line_num + 1}: {failure}"]) from None


def open_table(text: str, where: str, error: type[CatalogDataError] = CatalogDataError,
               ) -> tuple[list[str], Iterator[tuple[int, dict[str, str]]]]:  # fmt: skip
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


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}" if value == round(value, 6) else repr(value)
    if isinstance(value, tuple):
        return "; ".join(value)
    return str(value)


def card_row(card: CardSpec) -> dict[str, str]:
    """CardSpec -> CSV row (memory back in GiB, as the file convention says)."""
    values = {f.name: getattr(card, f.name) for f in fields(card)}
    values["memory_gb"] = card.memory_bytes / GIB
    values["unified_memory_gb"] = card.unified_memory_bytes / GIB if card.unified_memory_bytes else None
    return {column: _cell(values.get(column)) for column in CARD_COLUMNS}


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
