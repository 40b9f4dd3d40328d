"""A damaged catalog file: detect it at open, keep it aside, salvage the user's rows from it.

Detection is identity.examine (PRAGMA quick_check), which also makes sure the file is a catalog: only a
file carrying the catalog's marker is ever moved aside. Salvage reads the damaged copy with raw sqlite3 and
NOT INDEXED table scans, so a broken index does not hide the rows, and steps over a broken table page by
seeking past it, so a row on a later page is still salvaged.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from advisor.catalog.records import CardSpec

SIDE_FILES = ("-wal", "-shm")


def move_aside(path: Path) -> Path:
    """Rename the file (and its -wal/-shm, which belong to it) to <name>.damaged-<time>; -> new path."""
    stamp = datetime.now().strftime("%Y%m%dT%H%M%S%f")
    backup = path.with_name(f"{path.name}.damaged-{stamp}")
    path.rename(backup)
    for suffix in SIDE_FILES:
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(backup.with_name(backup.name + suffix))
    return backup


@dataclass
class Salvage:
    cards: list[CardSpec] = field(default_factory=list)
    aliases: list[tuple[str, str]] = field(default_factory=list)  # (card name, alias)
    prices: list[dict[str, Any]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.cards or self.aliases or self.prices)


def _scan(conn: sqlite3.Connection, table: str, after: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """(rowid, row) in rowid order from `after` on, until the end or a broken page raises."""
    cursor = conn.execute(
        f"SELECT rowid AS _rowid_, * FROM {table} NOT INDEXED WHERE rowid > ? ORDER BY rowid", (after,)
    )
    names = [d[0] for d in cursor.description]
    for row in cursor:
        values = dict(zip(names, row, strict=True))
        yield int(values.pop("_rowid_")), values


def _read(conn: sqlite3.Connection, table: str) -> Iterator[dict[str, Any]]:
    """Every readable row of a table, past broken pages: a scan that breaks restarts beyond the last row read,
    jumping ahead in growing steps (1, 2, 4, ... rowids) until a seek lands on a readable page again."""
    try:
        highest = conn.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0
    except sqlite3.DatabaseError:
        highest = 2**31  # the rightmost page is broken too; the probes below stop at the first clean end
    last, step = 0, 1
    while last < highest:
        try:
            for rowid, values in _scan(conn, table, last):
                last, step = rowid, 1
                yield values
            return
        except sqlite3.DatabaseError:
            last, step = last + step, step * 2


def _as_date(value: Any) -> date | None:
    try:
        return date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def _card(row: dict[str, Any]) -> CardSpec | None:
    known = set(CardSpec.__dataclass_fields__) - {"aliases"}
    values = {k: v for k, v in row.items() if k in known and v is not None}
    values["launch_date"] = _as_date(row.get("launch_date"))
    try:
        return CardSpec(**values)
    except TypeError:  # a required figure was on a broken page
        return None


@contextmanager
def _copy_of(backup: Path) -> Iterator[Path]:
    """Work on a copy so the backup stays exactly as it was found (opening it could replay its WAL)."""
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "damaged.db"
        shutil.copyfile(backup, copy)
        for suffix in SIDE_FILES:
            side = backup.with_name(backup.name + suffix)
            if side.exists():
                shutil.copyfile(side, copy.with_name(copy.name + suffix))
        yield copy


def salvage(backup: Path) -> Salvage:
    found = Salvage()
    try:
        with _copy_of(backup) as copy, closing(sqlite3.connect(copy)) as conn:
            cards = list(_read(conn, "cards"))
            names = {row["id"]: row["name"] for row in cards}
            user = [row for row in cards if row.get("origin") == "user"]
            found.cards = [card for card in map(_card, user) if card is not None]
            found.aliases = [
                (names[r["card_id"]], r["display"])
                for r in _read(conn, "aliases")
                if r.get("origin") == "user" and r.get("card_id") in names and r["display"] != names[r["card_id"]]
            ]
            found.prices = [
                {"card_name": names[r["card_id"]], **r}
                for r in _read(conn, "prices")
                if r.get("origin") == "user" and r.get("card_id") in names
            ]
    except (sqlite3.DatabaseError, OSError):
        pass  # nothing more can be read; what was read is kept
    return found
