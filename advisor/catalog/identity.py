"""Whose file is this? The catalog opens, upgrades or repairs only a file it made itself.

SQLite keeps a 32-bit "application ID" in the database header (offset 68) for exactly this: a program marks
its own files and recognises them, as file(1) does (https://sqlite.org/pragma.html#pragma_application_id,
https://sqlite.org/fileformat.html#application_id). A catalog carries APPLICATION_ID from its first write.
A catalog made before the marker existed is recognised by its tables (only ours, at least cards, prices and
meta) and marked on its next write.

Everything else is someone else's file and is refused in one line, untouched: a file that is not SQLite
(it used to be renamed to *.damaged-<time> and replaced), another program's SQLite database (it used to
get our tables and be switched to WAL), or a damaged SQLite file without our marker (nothing says its rows
are ours to salvage). Only a damaged file whose header still carries the marker is repaired (recovery.py).
An empty file (0 bytes) or an SQLite database with no tables holds nothing to lose and becomes a catalog.

The checks read the file through a read-only connection (and the first 100 bytes directly), so nothing
is created or changed until the file is known to be ours.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from sqlalchemy import Connection, inspect

from advisor.catalog.errors import ForeignFileError

APPLICATION_ID = 0x41445643  # "ADVC": the bytes A D V C, read as a big-endian 32-bit number
OUR_TABLES = frozenset({"meta", "cards", "aliases", "prices"})
LEGACY_TABLES = frozenset({"meta", "cards", "prices"})  # a catalog before the marker had at least these
SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_BYTES = 100
# Only these result codes mean the bytes themselves are bad (https://sqlite.org/rescode.html); anything else
# (busy, locked, cannot open, read-only, I/O error) is about access, and the file must be left alone.
DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})


class Owner(Enum):
    NEW = "new"  # absent, empty, or SQLite without tables: becomes a catalog
    OURS = "ours"  # carries the marker
    LEGACY = "legacy"  # our tables, made before the marker: marked on the next write
    DAMAGED = "damaged"  # carries the marker, but SQLite finds the file damaged: repair it


@dataclass(frozen=True)
class Verdict:
    owner: Owner
    damage: str = ""  # why SQLite finds it damaged (Owner.DAMAGED only)


def read_only(path: Path) -> bool:
    """True when the catalog cannot be written: the file, or its folder (SQLite creates -wal and -shm there)."""
    folder = path.parent if str(path.parent) else Path(".")
    return (path.exists() and not os.access(path, os.W_OK)) or not os.access(folder, os.W_OK)


def immutable(path: Path) -> bool:
    """Open with SQLite's immutable flag: the folder is read-only and no -wal beside the file means no writer,
    and without it SQLite cannot open a WAL file there at all ("unable to open database file")."""
    folder = path.parent if str(path.parent) else Path(".")
    return not os.access(folder, os.W_OK) and not path.with_name(path.name + "-wal").exists()


def read_only_uri(path: Path) -> str:
    uri = f"{path.absolute().as_uri()}?mode=ro"  # checking must not create or change anything
    return uri + ("&immutable=1" if immutable(path) else "")


def _header_id(path: Path) -> int | None:
    """The application ID in the file's header, or None when the file does not start as SQLite."""
    with open(path, "rb") as file:
        head = file.read(HEADER_BYTES)
    if not head.startswith(SQLITE_MAGIC) or len(head) < 72:
        return None
    return int.from_bytes(head[68:72], "big", signed=True)


def _owner(found: int, tables: frozenset[str]) -> Owner | None:
    """Whose a healthy file is, from its application ID and tables; None: another program's."""
    if found == APPLICATION_ID:
        return Owner.OURS
    if found == 0 and not tables:
        return Owner.NEW
    if found == 0 and LEGACY_TABLES <= tables <= OUR_TABLES:
        return Owner.LEGACY
    return None


def _look(path: Path, timeout_s: float) -> tuple[Owner | None, str, int, frozenset[str]]:
    """(owner, quick_check's verdict or "" when healthy, application ID, table names), read through a
    read-only connection. PRAGMA quick_check checks every page's b-tree structure in O(N)
    (https://sqlite.org/pragma.html#pragma_quick_check); it runs only on a file that may be ours, so another
    program's large database is refused without being read through."""
    with closing(sqlite3.connect(read_only_uri(path), uri=True, timeout=timeout_s)) as conn:
        found = int(conn.execute("PRAGMA application_id").fetchone()[0])
        tables = frozenset(
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        )
        owner = _owner(found, tables)
        rows = conn.execute("PRAGMA quick_check").fetchall() if owner is not None else [("ok",)]
    problem = "" if rows == [("ok",)] else "; ".join(str(row[0]) for row in rows[:3])
    return owner, problem, found, tables


def _damaged(where: Path, header: int, reason: str) -> Verdict:
    if header != APPLICATION_ID:
        raise ForeignFileError(
            str(where),
            f"is a damaged SQLite file ({reason}) without advisor's catalog marker, so it is not repaired or renamed",
        )
    return Verdict(Owner.DAMAGED, reason)


def examine(path: Path, timeout_s: float) -> Verdict:
    """Whose file `path` is (see the module text); ForeignFileError when it is not ours.

    Raises the sqlite3 error when SQLite cannot tell (busy past `timeout_s`, unreadable): the caller reports
    it in one line rather than judging a healthy file."""
    if not path.is_file() or path.stat().st_size == 0:
        return Verdict(Owner.NEW)
    header = _header_id(path)
    if header is None:
        raise ForeignFileError(str(path), "is not an SQLite database, so not a catalog advisor made")
    try:
        owner, problem, found, tables = _look(path, timeout_s)
    except sqlite3.DatabaseError as error:
        if getattr(error, "sqlite_errorcode", None) in DAMAGE_CODES:
            return _damaged(path, header, str(error))
        raise
    if problem:
        return _damaged(path, header, problem)
    if owner is not None:
        return Verdict(owner)
    listed = ", ".join(sorted(tables)[:5]) or "none"
    raise ForeignFileError(
        str(path), f"is another program's SQLite database (application_id {found:#x}, tables: {listed})"
    )


def foreign_tables(conn: Connection) -> list[str]:
    """Tables in the database that are not the catalog's, for a server database (which has no header): a
    database holding other tables and no catalog belongs to another program."""
    return sorted(set(inspect(conn).get_table_names()) - OUR_TABLES)


def mark(conn: Connection) -> None:
    """Stamp an SQLite catalog with APPLICATION_ID, inside the caller's write transaction."""
    if conn.dialect.name != "sqlite":
        return  # a server database has no header; its marker is the meta table's schema_version
    if int(conn.exec_driver_sql("PRAGMA application_id").scalar_one()) != APPLICATION_ID:
        conn.exec_driver_sql(f"PRAGMA application_id = {APPLICATION_ID}")
