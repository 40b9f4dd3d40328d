"""A damaged catalog file: detect it at open, keep it aside, salvage the user's rows from it.

Detection uses PRAGMA quick_check (https://sqlite.org/pragma.html#pragma_quick_check): it checks the
b-tree structure of every page in O(N), fast enough for every start; a file that is not SQLite at all
fails earlier with "file is not a database". Salvage reads the damaged copy with raw sqlite3 and
NOT INDEXED table scans, so a broken index does not hide the rows, and keeps whatever it read before a
broken page stops it.
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


def damage(path: Path) -> str | None:
    """Why the file is not a healthy SQLite database, or None if it is (or does not exist yet)."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    try:
        with closing(sqlite3.connect(path, timeout=10)) as conn:
            rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as error:
        return str(error)
    if rows == [("ok",)]:
        return None
    return "; ".join(str(row[0]) for row in rows[:3])


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


def _read(conn: sqlite3.Connection, sql: str) -> Iterator[dict[str, Any]]:
    """Rows until the end or the first broken page, whichever comes first."""
    try:
        cursor = conn.execute(sql)
        names = [d[0] for d in cursor.description]
        for row in cursor:
            yield dict(zip(names, row, strict=True))
    except sqlite3.DatabaseError:
        return


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
            rows = _read(conn, "SELECT * FROM cards NOT INDEXED WHERE origin = 'user'")
            found.cards = [card for card in map(_card, rows) if card is not None]
            found.aliases = [(r["name"], r["display"]) for r in _read(conn,
                "SELECT c.name, a.display FROM aliases AS a NOT INDEXED JOIN cards AS c ON c.id = a.card_id "
                "WHERE a.origin = 'user' AND a.display != c.name")]  # fmt: skip
            found.prices = list(_read(conn,
                "SELECT c.name AS card_name, p.* FROM prices AS p NOT INDEXED "
                "JOIN cards AS c ON c.id = p.card_id WHERE p.origin = 'user'"))  # fmt: skip
    except (sqlite3.DatabaseError, OSError):
        pass  # nothing more can be read; what was read is kept
    return found
