"""Versioned schema upgrades, recorded in SQLite's PRAGMA user_version (on other databases, PostgreSQL, in
the meta table under `schema_version`, since they have no such pragma).

A new database is created from the ORM at the latest version. An older one is upgraded step by step inside
the caller's write transaction (SQLite DDL is transactional, so a failed upgrade leaves the old file as it
was). Each step only adds or reshapes; user rows are never dropped. tests/catalog/test_migrations.py opens
a database made by version 1 and checks that the user's rows survive.

History:
  1  cards, aliases, prices, meta.
  2  GPUs per board (devices); multi-card link per card (link_kind, link_detail,
     link_bandwidth_gbs); price condition (new / used).
  3  prices as facts: kind (purchase / rent_hour), market (msrp, retail, used_market, cloud_*), the
     source's url and read date; condition may be refurbished.
  4  cards: unified_memory_bytes (the memory a unified-memory machine's GPU shares with its CPU).
  5+ cards: the column of each figure declared with that `since` (records.CardSpec), added
     by a step derived from the declaration; a step is still written by hand where data moves (2, 3).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, delete, insert, inspect, select

from advisor.catalog.errors import ForeignFileError, NewerSchemaError
from advisor.catalog.figures import Kind
from advisor.catalog.identity import foreign_tables
from advisor.catalog.orm import Base, Meta, figure_column
from advisor.catalog.records import FIGURES

# Versions up to this one added their columns by hand (below); later figure columns come from their `since`.
_HAND_WRITTEN_UNTIL = 4
SCHEMA_VERSION = max(_HAND_WRITTEN_UNTIL, *(f.since for f in FIGURES))
_VERSION_KEY = "schema_version"


def _v1_to_v2(conn: Connection) -> None:
    for statement in (
        "ALTER TABLE cards ADD COLUMN devices INTEGER NOT NULL DEFAULT 1",
        "ALTER TABLE cards ADD COLUMN link_kind VARCHAR(16) NOT NULL DEFAULT 'none'",
        "ALTER TABLE cards ADD COLUMN link_detail VARCHAR(60) NOT NULL DEFAULT ''",
        "ALTER TABLE cards ADD COLUMN link_bandwidth_gbs FLOAT",
        # Every price before version 2 was a new-card price.
        "ALTER TABLE prices ADD COLUMN condition VARCHAR(4) NOT NULL DEFAULT 'new'",
        # The bundled link figures are new data: forget the seed digest so the next seed fills them in.
        "DELETE FROM meta WHERE key = 'bundled_digest'",
    ):
        conn.exec_driver_sql(statement)


def _v2_to_v3(conn: Connection) -> None:
    for statement in (
        "ALTER TABLE prices ADD COLUMN kind VARCHAR(16) NOT NULL DEFAULT 'purchase'",
        "ALTER TABLE prices ADD COLUMN market VARCHAR(24) NOT NULL DEFAULT 'retail'",
        "ALTER TABLE prices ADD COLUMN source_url TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE prices ADD COLUMN source_read_date DATE",
        # Before version 3 the only used prices were ones the user typed in from a used market.
        "UPDATE prices SET market = 'used_market' WHERE condition = 'used'",
        # Bundled prices now carry kind, market and source: forget the digest so the next seed reloads them.
        "DELETE FROM meta WHERE key = 'bundled_digest'",
    ):
        conn.exec_driver_sql(statement)


def _v3_to_v4(conn: Connection) -> None:
    conn.exec_driver_sql("ALTER TABLE cards ADD COLUMN unified_memory_bytes BIGINT")
    # The bundled unified-memory machines carry the new figure: re-seed them.
    conn.exec_driver_sql("DELETE FROM meta WHERE key = 'bundled_digest'")


def _add_declared_columns(version: int) -> Callable[[Connection], None]:
    """The step to `version`: ALTER TABLE for each figure declared `since=version`, typed and defaulted as
    orm.figure_column makes it for a new database."""

    def step(conn: Connection) -> None:
        for item in FIGURES:
            if item.since != version or item.kind is Kind.ALIASES:
                continue
            column = figure_column(item)
            default = "" if item.default is None else f" NOT NULL DEFAULT '{item.default}'"
            conn.exec_driver_sql(
                f"ALTER TABLE cards ADD COLUMN {column.name} {column.type.compile(conn.dialect)}{default}"
            )
        # The bundled cards carry the new figure: forget the seed digest so the next seed fills it in.
        conn.exec_driver_sql("DELETE FROM meta WHERE key = 'bundled_digest'")

    return step


# MIGRATIONS[v] upgrades a database at version v to v + 1.
MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    **{v - 1: _add_declared_columns(v) for v in range(_HAND_WRITTEN_UNTIL + 1, SCHEMA_VERSION + 1)},
}


def _sqlite(conn: Connection) -> bool:
    return conn.dialect.name == "sqlite"


def schema_version(conn: Connection) -> int:
    if _sqlite(conn):
        return int(conn.exec_driver_sql("PRAGMA user_version").scalar_one())
    if not inspect(conn).has_table("meta"):
        return 0
    found = conn.execute(select(Meta.value).where(Meta.key == _VERSION_KEY)).scalar()
    return int(found) if found is not None else 0


def _set_version(conn: Connection, version: int) -> None:
    if _sqlite(conn):
        conn.exec_driver_sql(f"PRAGMA user_version = {int(version)}")
        return
    conn.execute(delete(Meta).where(Meta.key == _VERSION_KEY))
    conn.execute(insert(Meta).values(key=_VERSION_KEY, value=str(int(version))))


def upgrade(conn: Connection, where: str) -> tuple[int, int]:
    """Bring the schema to SCHEMA_VERSION. -> (version found, version now); found 0 means created."""
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise NewerSchemaError(where, found, SCHEMA_VERSION)
    others = foreign_tables(conn) if found == 0 else []
    if others:  # a server database (or a file) with another program's tables and no catalog in it
        raise ForeignFileError(where, f"holds other tables ({', '.join(others[:5])}) and no advisor catalog")
    if found == 0 and not inspect(conn).has_table("cards"):
        Base.metadata.create_all(conn)
        _set_version(conn, SCHEMA_VERSION)
        return 0, SCHEMA_VERSION
    version = max(found, 1)  # a file with tables but no version predates versioning: it is version 1
    while version < SCHEMA_VERSION:
        MIGRATIONS[version](conn)
        version += 1
        _set_version(conn, version)
    return found, version
