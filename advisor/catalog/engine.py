"""Opening the SQLite file: WAL, a busy timeout, explicit transactions and a retry when the file is busy.

Why each setting:
- WAL lets readers (the UI) run while a writer commits, and a killed writer cannot damage committed data:
  a transaction is only visible once its commit frame is in the -wal file (https://sqlite.org/wal.html).
- synchronous=FULL in WAL mode makes a commit durable across a power cut as well, not just a crash; the
  catalog writes a handful of rows per user action, so the extra fsync costs nothing noticeable.
- busy_timeout makes a second process wait for the lock instead of failing at once
  (https://sqlite.org/c3ref/busy_timeout.html).
- Writes begin with BEGIN IMMEDIATE: a deferred transaction that reads and then writes can fail with
  SQLITE_BUSY without ever waiting (the busy handler is not called on a read-to-write upgrade in WAL), and
  taking the write lock up front makes read-modify-write edits serialize, so no update is lost.
- pysqlite's own implicit BEGIN is switched off (isolation_level=None) so that the BEGIN we emit is the one
  that runs; the SQLAlchemy docs describe this recipe under "Serializable isolation / Savepoints".
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from advisor.catalog.errors import CatalogBusyError, CatalogError, CatalogFileError

T = TypeVar("T")
BUSY_TIMEOUT_MS = 10_000
_IMMEDIATE = "advisor_begin_immediate"


def _on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    dbapi_connection.isolation_level = None
    for pragma in ("journal_mode=WAL", "synchronous=FULL", f"busy_timeout={BUSY_TIMEOUT_MS}", "foreign_keys=ON"):
        dbapi_connection.execute(f"PRAGMA {pragma}").fetchall()


def _on_connect_read_only(dbapi_connection: sqlite3.Connection, _record: object) -> None:
    # No journal_mode or synchronous: both would write to a file that cannot be written.
    dbapi_connection.isolation_level = None
    dbapi_connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}").fetchall()


def _on_begin(connection: Any) -> None:
    immediate = connection.get_execution_options().get(_IMMEDIATE, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def make_engine(path: Path, read_only_uri: str | None = None) -> Engine:
    """An engine for the catalog file; with `read_only_uri` (identity.read_only_uri) every connection opens
    the file read-only, so a catalog in a read-only file or folder can still be listed."""
    # NullPool: a desktop app and short CLI runs open few connections; not pooling means no file handle
    # outlives its use, so moving a damaged file aside or a test's cleanup never meets an open handle.
    timeout_s = BUSY_TIMEOUT_MS / 1000
    if read_only_uri is None:
        engine = create_engine(f"sqlite:///{path}", poolclass=NullPool, connect_args={"timeout": timeout_s})
        event.listen(engine, "connect", _on_connect)
    else:
        uri = read_only_uri
        engine = create_engine(
            f"sqlite:///{path}", poolclass=NullPool, creator=lambda: sqlite3.connect(uri, uri=True, timeout=timeout_s)
        )
        event.listen(engine, "connect", _on_connect_read_only)
    event.listen(engine, "begin", _on_begin)
    return engine


def is_busy(error: BaseException) -> bool:
    text = str(getattr(error, "orig", error)).lower()
    # The last one is PostgreSQL's lock_timeout (server.py): the server's "busy".
    return "database is locked" in text or "database is busy" in text or "lock timeout" in text


def as_catalog_error(error: BaseException, where: object, waited_s: float) -> CatalogError:
    """An SQLite failure as one line for the user: busy (the file is fine, wait) or the file's own problem.
    `waited_s` is how long the failed operation really waited, which the busy message states."""
    if is_busy(error):
        return CatalogBusyError(str(where), waited_s)
    reason = str(getattr(error, "orig", error)).splitlines()[0]
    if "unable to open" in reason:  # SQLite also needs to create <name>-wal and -shm beside the file
        reason += " (can its folder be written to?)"
    return CatalogFileError(str(where), reason)


@contextmanager
def _one_line(engine: Engine) -> Iterator[None]:
    start = time.monotonic()
    try:
        yield
    except OperationalError as error:
        raise as_catalog_error(error, engine.url.database, time.monotonic() - start) from None


class Sessions:
    """Short transactions over one engine: read() for queries, write() and transact() for changes."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._reader = sessionmaker(engine, expire_on_commit=False)
        self._writer = sessionmaker(engine.execution_options(**{_IMMEDIATE: True}), expire_on_commit=False)

    @contextmanager
    def read(self) -> Iterator[Session]:
        with _one_line(self.engine), self._reader() as session, session.begin():
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One write transaction (BEGIN IMMEDIATE); commits when the block ends, rolls back on error."""
        with _one_line(self.engine), self._writer() as session, session.begin():
            yield session

    def transact(self, work: Callable[[Session], T], attempts: int = 3) -> T:
        """Run `work` in a write transaction, again from the start if SQLite stays busy past its timeout.
        Each attempt already waits BUSY_TIMEOUT_MS, so three keep a user's wait for a stuck lock near half a
        minute before CatalogBusyError says so (eight made it 80 s), and the message states the whole wait
        (it used to say "over 10 s" after 31 s of waiting)."""
        start = time.monotonic()
        for attempt in range(attempts):
            try:
                with self.write() as session:
                    return work(session)
            except CatalogBusyError as error:
                if attempt == attempts - 1:
                    raise CatalogBusyError(error.where, time.monotonic() - start) from None
                # Jittered backoff so two waiting processes do not retry in lock step.
                time.sleep(min(0.05 * 2**attempt, 1.0) * random.uniform(0.5, 1.5))
        raise AssertionError("unreachable: the loop returns or raises")
