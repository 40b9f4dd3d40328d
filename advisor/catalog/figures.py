"""What a card figure is, declared once: the CardSpec field carries a Figure in its metadata (records.py), and
the ORM column (orm.py), the schema migration that adds it (migrations.py), the CSV column with its parser
and writer (csvio.py), the `catalog add/edit` option (commands/catalog.py) and the detail view (present.py)
are derived from it (issue 31, item 3). Adding a figure is one field in records.py plus its data.

Pure Python: the kinds say how a CSV cell becomes a value and back; orm.py maps them to column types.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import MISSING, Field, dataclass, fields, replace
from datetime import date
from enum import Enum
from typing import Any

from advisor.core.units import GIB

METADATA_KEY = "figure"


class Kind(Enum):
    """How a figure is written in a CSV cell and stored."""

    TEXT = "text"  # free text, stripped
    CHOICE = "choice"  # one of Figure.choices, matched case-insensitively
    DATE = "date"  # YYYY-MM-DD
    RATE = "rate"  # a finite number above 0 and at most Figure.high (GB/s, TFLOPS, USD)
    WHOLE = "whole"  # a whole number from 1 to Figure.high
    MEMORY = "memory"  # GiB in the file (the vendor's "GB"), bytes in the record and the database
    ALIASES = "aliases"  # names separated by ';' (stored in their own table, not as a column)


@dataclass(frozen=True, slots=True)
class Figure:
    """One card figure. `field` (the CardSpec field, whose name carries the stored unit) is filled in by
    `declared`; `column` is the CSV column and, with dashes, the `catalog add/edit` option."""

    column: str
    kind: Kind
    unit: str  # unit of the CSV column and the option ("" for words)
    label: str  # the detail view's label
    help: str  # the option's help text
    rule: str  # where the figure comes from and how it is counted (advisor/data/README.md, Conventions)
    required: bool = False  # a CSV row and `catalog add` must give it
    high: float = 1e6  # ceiling of a RATE or WHOLE figure: a typo (1e12 GB, 1e23 W) is refused
    choices: tuple[str, ...] = ()
    length: int | None = None  # VARCHAR length of a TEXT/CHOICE column; None: TEXT
    unique: bool = False
    since: int = 1  # the schema version whose migration added the column (migrations.py)
    field: str = ""
    default: Any = None  # the field's default: None makes the column nullable, a value its server default


def figure(column: str, kind: Kind, unit: str, label: str, help: str, rule: str, **more: Any) -> dict[str, Figure]:
    """The metadata of a CardSpec field: `field(metadata=figure(...))`."""
    return {METADATA_KEY: Figure(column, kind, unit, label, help, rule, **more)}


def declared(record: type) -> tuple[Figure, ...]:
    """Every figure of a dataclass whose fields carry `figure` metadata, in field order, each told its field."""
    return tuple(_named(f) for f in fields(record) if METADATA_KEY in f.metadata)


def _named(spec_field: Field[Any]) -> Figure:
    default = None if spec_field.default is MISSING else spec_field.default
    item: Figure = spec_field.metadata[METADATA_KEY]
    return replace(item, field=spec_field.name, default=default)


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


def _memory_bytes(text: str) -> int:
    """From 1 MiB (2**-10 GiB: smaller is a typo, and rounds to a 0-byte card) to 1 PiB per card."""
    value = _number(2.0**20)(text)
    if value < 2.0**-10:
        raise ValueError(f"{text!r} GiB is less than 1 MiB")
    return round(value * GIB)


def choice(options: tuple[str, ...]) -> Callable[[str], str]:
    """A word of `options` in any case, as the options spell it ("nvidia" -> "NVIDIA")."""

    def parse(text: str) -> str:
        for option in options:
            if text.lower() == option.lower():
                return option
        raise ValueError(f"{text!r} is not one of {', '.join(options)}")

    return parse


def _aliases(text: str) -> tuple[str, ...]:
    return tuple(a.strip() for a in text.split(";") if a.strip())


def parser(item: Figure) -> Callable[[str], Any]:
    """CSV cell (stripped, not empty) -> the record's value; ValueError says why not."""
    match item.kind:
        case Kind.TEXT:
            return str.strip
        case Kind.CHOICE:
            return choice(item.choices)
        case Kind.DATE:
            return date.fromisoformat
        case Kind.RATE:
            return _number(item.high)
        case Kind.WHOLE:
            return _whole(int(item.high))
        case Kind.MEMORY:
            return _memory_bytes
        case Kind.ALIASES:
            return _aliases


def cell(item: Figure, value: object) -> str:
    """The record's value -> CSV cell (memory back in GiB, as the file convention says); '' for none."""
    if value is None:
        return ""
    if item.kind is Kind.MEMORY and isinstance(value, int):
        value = value / GIB
    if isinstance(value, float):
        return f"{value:g}" if value == round(value, 6) else repr(value)
    if isinstance(value, tuple):
        return "; ".join(value)
    return str(value)


def shown(item: Figure, value: object) -> str:
    """The detail view's text of a value: '-' for none, memory in GiB with its bytes, numbers with the unit."""
    if value is None or value == "" or value == ():
        return "-"
    if item.kind is Kind.MEMORY and isinstance(value, int):
        return f"{value / GIB:g} GiB ({value:,} bytes)"
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value)
    text = cell(item, value)
    return f"{text} {item.unit}" if item.unit and item.kind in (Kind.RATE, Kind.WHOLE) else text
