"""Each card figure is declared once (records.CardSpec's field metadata) and every piece derived from it exists:
the ORM column, the CSV column with its parser and writer, the `catalog add/edit` option, the detail view's
line and the migration that adds a figure declared after version 4 (issue 31, item 3)."""

from __future__ import annotations

import argparse
import sqlite3
from dataclasses import fields
from datetime import date
from pathlib import Path

import pytest

from advisor import cli
from advisor.catalog import find_card, open_catalog
from advisor.catalog.csvio import CARD_COLUMNS, REQUIRED, card_row, parse_card_row
from advisor.catalog.figures import Figure, Kind
from advisor.catalog.migrations import SCHEMA_VERSION
from advisor.catalog.orm import Card
from advisor.catalog.present import card_detail
from advisor.catalog.records import FIGURES, CardRecord, CardSpec

COLUMNS = Card.__table__.c
TABLE_FIGURES = [f for f in FIGURES if f.kind is not Kind.ALIASES]
# One value per kind, each different from the field's default so that a round trip that drops it shows.
SAMPLE_CELLS = {
    Kind.TEXT: "Sample text",
    Kind.DATE: "2026-11-30",
    Kind.RATE: "12.5",
    Kind.WHOLE: "7",
    Kind.MEMORY: "11.25",
    Kind.ALIASES: "Sample One; Sample Two",
}


def test_every_spec_field_is_a_declared_figure() -> None:
    assert [f.field for f in FIGURES] == [f.name for f in fields(CardSpec)]
    assert len({f.column for f in FIGURES}) == len(FIGURES)  # one CSV column / option each


def test_every_figure_has_an_orm_column_typed_and_nullable_as_declared() -> None:
    for item in TABLE_FIGURES:
        column = COLUMNS[item.field]
        assert column.nullable == (item.default is None and not item.required), item.field
        assert column.unique == item.unique, item.field
        wanted = {Kind.MEMORY: "BIGINT", Kind.RATE: "FLOAT", Kind.WHOLE: "INTEGER", Kind.DATE: "DATE"}
        if item.kind in wanted:
            assert str(column.type) == wanted[item.kind], item.field
    assert {c.name for c in COLUMNS} == {f.field for f in TABLE_FIGURES} | {"id", "origin"}


def _sample_row() -> dict[str, str]:
    row = {f.column: f.choices[-1] if f.kind is Kind.CHOICE else SAMPLE_CELLS[f.kind] for f in FIGURES}
    return {**row, "name": "Sample Card", "source": "sample source"}


def test_every_figure_has_a_csv_column_read_and_written_back_unchanged() -> None:
    assert tuple(f.column for f in FIGURES) == CARD_COLUMNS
    assert {f.column for f in FIGURES if f.required} == REQUIRED
    row = _sample_row()
    spec = parse_card_row(row)
    assert spec.memory_bytes == 12_079_595_520  # 11.25 x 2**30
    assert spec.launch_date == date(2026, 11, 30) and spec.aliases == ("Sample One", "Sample Two")
    for item in FIGURES:  # every figure took the sample, not its default
        assert getattr(spec, item.field) != item.default, item.field
    assert card_row(spec) == row


def _parsed(*argv: str) -> argparse.Namespace:
    return cli.build_parser(argv).parse_args(argv)


def _flags(row: dict[str, str], leave_out: str = "") -> list[str]:
    return [
        part for f in FIGURES if f.column != leave_out for part in (f"--{f.column.replace('_', '-')}", row[f.column])
    ]


def test_every_figure_has_an_add_option_and_every_figure_but_the_name_an_edit_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    row = _sample_row()
    added = _parsed("catalog", "add", *_flags(row))
    edited = _parsed("catalog", "edit", "RTX 4090", *_flags(row, leave_out="name"))
    for item in FIGURES:
        assert getattr(added, item.column) == row[item.column], item.column
        assert item.column == "name" or getattr(edited, item.column) == row[item.column], item.column
    with pytest.raises(SystemExit):
        _parsed("catalog", "edit", "RTX 4090", "--name", "renamed")
    for item in FIGURES:  # a figure `add` must have is refused when missing (the source has a default)
        if item.required and item.column != "source":
            with pytest.raises(SystemExit):
                _parsed("catalog", "add", *_flags(row, leave_out=item.column))
    with pytest.raises(SystemExit):
        _parsed("catalog", "add", "--help")
    shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the help text
    for item in FIGURES:
        assert f"--{item.column.replace('_', '-')}" in shown and " ".join(item.help.split()) in shown, item.column


def test_every_figure_has_a_line_in_the_detail_view() -> None:
    spec = parse_card_row(_sample_row())
    text = card_detail(CardRecord(**{f.field: getattr(spec, f.field) for f in FIGURES}), [])
    labels = [line.split("  ")[0] for line in text.splitlines()]
    assert labels[: len(FIGURES)] == [f.label for f in FIGURES]
    assert "11.25 GiB (12,079,595,520 bytes)" in text and "12.5 GB/s" in text and "7 W" in text


def test_a_figure_declared_after_version_4_gets_its_column_on_upgrade(db_path: Path) -> None:
    later = [f for f in TABLE_FIGURES if f.since > 4]
    assert max(4, *(f.since for f in FIGURES)) == SCHEMA_VERSION
    if not later:
        return
    with sqlite3.connect(db_path) as conn:  # back to version 4: the later columns were not there yet
        for item in later:
            conn.execute(f"ALTER TABLE cards DROP COLUMN {item.field}")
        conn.execute("PRAGMA user_version = 4")
    catalog = open_catalog(db_path)
    try:
        assert catalog.messages[-1].endswith(f"upgraded from schema version 4 to {SCHEMA_VERSION}")
        with catalog.read() as session:
            card = find_card(session, "RTX 4090")
        assert card.name == "GeForce RTX 4090"
    finally:
        catalog.close()
    with sqlite3.connect(db_path) as conn:
        present = {row[1] for row in conn.execute("PRAGMA table_info(cards)")}
    assert {f.field for f in later} <= present


@pytest.mark.parametrize(
    "item", [f for f in FIGURES if f.default is not None and f.kind is not Kind.ALIASES], ids=lambda f: f.field
)
def test_a_figure_with_a_default_takes_it_when_its_cell_is_empty(item: Figure) -> None:
    spec = parse_card_row({**_sample_row(), item.column: ""})
    assert getattr(spec, item.field) == item.default
    assert COLUMNS[item.field].server_default is not None  # a row inserted without it gets it too
