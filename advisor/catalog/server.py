"""A team's catalog on a database server (PostgreSQL through psycopg 3): the same ORM, migrations and
repository as the SQLite file, with the same concurrency rule, one writer at a time.

`--catalog` / ADVISOR_CATALOG may be an SQLAlchemy URL instead of a path, e.g.
    postgresql+psycopg://advisor:secret@db.example.org:5432/advisor
Why each setting:
- Writes take a transaction-scoped advisory lock first (pg_advisory_xact_lock), the server's counterpart of
  SQLite's BEGIN IMMEDIATE: read-modify-write edits from several programs serialize, so none is lost, and
  the lock goes with the transaction when it commits, rolls back or its connection dies
  (https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS).
- lock_timeout bounds the wait like SQLite's busy_timeout; the error it raises counts as busy, so
  Sessions.transact retries it and the user sees the same one-line "busy" message.
- READ COMMITTED, PostgreSQL's default: readers never wait for the writer.
- NullPool, as for SQLite: short-lived CLI runs and a desktop app keep no idle server connections.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlalchemy.pool import NullPool

from advisor.catalog.engine import _IMMEDIATE, BUSY_TIMEOUT_MS
from advisor.catalog.errors import CatalogFileError

# Any constant serves: every advisor catalog on a server takes the same lock (in its own database).
_WRITE_LOCK_KEY = 0x41445649  # "ADVI"
SCHEMES = ("postgresql",)


def is_url(location: str) -> bool:
    """True when `location` (a --catalog or ADVISOR_CATALOG value) names a server, not a file."""
    return "://" in location


def _on_begin(connection: Any) -> None:
    if connection.get_execution_options().get(_IMMEDIATE, False):
        connection.exec_driver_sql(f"SET LOCAL lock_timeout = '{BUSY_TIMEOUT_MS}ms'")
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_WRITE_LOCK_KEY})")


def make_server_engine(url: str) -> Engine:
    """An engine for a server URL; a URL advisor does not support is one clear line."""
    scheme = url.split("://", 1)[0].split("+", 1)[0]
    if scheme not in SCHEMES:
        raise CatalogFileError(
            url.split("@")[-1],
            f"{scheme!r} databases are not supported; use a file path or a postgresql+psycopg:// URL",
        )
    try:
        engine = create_engine(url, poolclass=NullPool, isolation_level="READ COMMITTED")
    except (ArgumentError, NoSuchModuleError, ValueError) as error:  # ValueError: a port or host that is no number
        raise CatalogFileError(url.split("@")[-1], f"not a usable database URL ({error})") from None
    except ImportError as error:  # the dialect is known but its driver is not installed, e.g. +pg8000
        raise CatalogFileError(
            url.split("@")[-1], f"the database driver {error.name or error} is not installed; use postgresql+psycopg://"
        ) from None
    event.listen(engine, "begin", _on_begin)
    return engine


def shown(url: str) -> str:
    """The URL as messages print it: without the password."""
    head, _, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    return f"{head}://{credentials.split(':')[0]}@{host}" if at else url
