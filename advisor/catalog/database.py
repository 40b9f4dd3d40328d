"""Where the catalog lives and how it is opened: create on first run, upgrade, re-seed, or recover.

Path: an explicit --catalog PATH, else $ADVISOR_CATALOG, else <user data dir>/catalog.sqlite3 as
platformdirs names it (~/.local/share/advisor on Linux, %LOCALAPPDATA%\\advisor on Windows,
~/Library/Application Support/advisor on macOS). Either may instead be a server URL (server.py).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from contextlib import suppress
from dataclasses import fields
from datetime import date
from pathlib import Path

import platformdirs
from sqlalchemy.orm import Session

from advisor.catalog import engine as sqlite_engine
from advisor.catalog.bundled import (
    BundledData,
    apply_bundled,
    bundled_dir,
    data_digest,
    load_bundled,
    seeded_digest,
)
from advisor.catalog.engine import Sessions, as_catalog_error, make_engine
from advisor.catalog.errors import CatalogError, CatalogFileError
from advisor.catalog.migrations import SCHEMA_VERSION, schema_version, upgrade
from advisor.catalog.orm import USER
from advisor.catalog.recovery import Salvage, damage, move_aside, salvage
from advisor.catalog.repository import add_price, attach_aliases, edit_card, insert_card, orm_card
from advisor.catalog.server import is_url, make_server_engine, shown

ENV_VAR = "ADVISOR_CATALOG"
FILE_NAME = "catalog.sqlite3"
log = logging.getLogger(__name__)


def catalog_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR]).expanduser()
    return Path(platformdirs.user_data_dir("advisor")) / FILE_NAME


class Catalog(Sessions):
    """An open catalog. `messages` says what opening it did that the user should know (printed to stderr)."""

    def __init__(self, path: Path | str, sessions: Sessions, messages: list[str]) -> None:
        super().__init__(sessions.engine)
        self.path = path
        self.messages = messages

    def close(self) -> None:
        self.engine.dispose()


def _restore(session: Session, found: Salvage) -> None:
    """Put salvaged user rows back: their cards (over bundled ones of the same name), aliases, prices."""
    for spec in found.cards:
        if orm_card(session, spec.name) is None:
            insert_card(session, spec, USER)
        else:
            skip = ("aliases", "name")
            figures = {f.name: getattr(spec, f.name) for f in fields(spec) if f.name not in skip}
            edit_card(session, spec.name, **figures)
    for card_name, alias in found.aliases:
        card = orm_card(session, card_name)
        if card is not None:
            with suppress(CatalogError):  # another card took this alias meanwhile: it stays with that card
                attach_aliases(session, card, [alias], USER)
    for row in found.prices:
        if orm_card(session, row["card_name"]) is not None and row.get("amount"):
            add_price(session, row["card_name"], float(row["amount"]), currency=row.get("currency") or "USD",
                      on=date.fromisoformat(str(row["date"])[:10]), condition=row.get("condition") or "new",
                      source=row.get("source") or "salvaged", kind=row.get("kind") or "purchase",
                      market=row.get("market") or None, source_url=row.get("source_url") or "")  # fmt: skip


def _recover(path: Path, reason: str) -> tuple[Salvage, str]:
    backup = move_aside(path)
    found = salvage(backup)
    message = (f"catalog {path} was damaged ({reason}); kept it as {backup.name} and rebuilt it from the "
               f"bundled data, recovering {len(found.cards)} of your cards and {len(found.prices)} of your "
               f"prices")  # fmt: skip
    log.warning(message)
    return found, message


def _usable(target: Path) -> None:
    """Refuse, in one line, a path that cannot hold the catalog, before SQLite (or recovery) touches it."""
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CatalogFileError(str(target), f"cannot create its folder: {error.strerror}") from None
        mode = None
    except OSError as error:  # ENAMETOOLONG, ENOTDIR (a path under a file), EACCES, ELOOP
        raise CatalogFileError(str(target), error.strerror or str(error)) from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise CatalogFileError(str(target), f"is {kind}")
    if mode is None and len(os.fsencode(target.name)) + len("-journal") > 255:
        # SQLite keeps <name>-wal and <name>-shm beside the file; they must fit the name limit too.
        raise CatalogFileError(str(target), "the file name is too long (at most 247 bytes)")


def _up_to_date(sessions: Sessions, digest: str) -> bool:
    """True when opening needs no write at all: so a reader never waits for (or takes) the write lock."""
    with sessions.read() as session:
        return bool(schema_version(session.connection()) == SCHEMA_VERSION
                    and seeded_digest(session) == digest)  # fmt: skip


def _server_location(path: str | os.PathLike[str] | None) -> str | None:
    """The SQLAlchemy URL when --catalog or ADVISOR_CATALOG names a server (server.py), else None."""
    text = os.fspath(path) if path else os.environ.get(ENV_VAR, "")
    return text if is_url(text) else None


def _open_file(target: Path, messages: list[str]) -> tuple[Sessions, Salvage]:
    _usable(target)
    found = Salvage()
    try:
        reason = damage(target, sqlite_engine.BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as error:
        raise as_catalog_error(error, target) from None
    if reason is not None:
        found, message = _recover(target, reason)
        messages.append(message)
    return Sessions(make_engine(target)), found


def open_catalog(path: str | os.PathLike[str] | None = None, *, data_dir: Path | None = None,
                 bundled: BundledData | None = None) -> Catalog:  # fmt: skip
    """Open (creating, upgrading, re-seeding or rebuilding as needed) the catalog database: a file, or a
    server when `path` / ADVISOR_CATALOG is an SQLAlchemy URL (a server keeps its own data safe: no file
    damage check or salvage applies there)."""
    messages: list[str] = []
    url = _server_location(path)
    if url is not None:
        target: Path | str = shown(url)
        sessions, found = Sessions(make_server_engine(url)), Salvage()
    else:
        target = catalog_path(path)
        sessions, found = _open_file(target, messages)
    data_dir = data_dir or bundled_dir()
    digest = bundled.digest if bundled else data_digest(data_dir)

    def prepare(session: Session) -> None:
        before, after = upgrade(session.connection(), str(target))
        if 0 < before < after:
            messages.append(f"catalog {target} upgraded from schema version {before} to {after}")
        if seeded_digest(session) != digest:
            apply_bundled(session, bundled or load_bundled(data_dir))
        if found:
            _restore(session, found)

    if found or not _up_to_date(sessions, digest):
        sessions.transact(prepare)
    return Catalog(target, sessions, messages)
