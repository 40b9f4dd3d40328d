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
import time
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
from advisor.catalog.errors import CatalogError, CatalogFileError, NewerSchemaError
from advisor.catalog.identity import Owner, Verdict, examine, mark, read_only, read_only_uri
from advisor.catalog.migrations import SCHEMA_VERSION, schema_version, upgrade
from advisor.catalog.orm import USER
from advisor.catalog.recovery import Salvage, move_aside, salvage
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
            add_price(
                session,
                row["card_name"],
                float(row["amount"]),
                currency=row.get("currency") or "USD",
                on=date.fromisoformat(str(row["date"])[:10]),
                condition=row.get("condition") or "new",
                source=row.get("source") or "salvaged",
                kind=row.get("kind") or "purchase",
                market=row.get("market") or None,
                source_url=row.get("source_url") or "",
            )


def _recover(path: Path, reason: str) -> tuple[Salvage, str]:
    backup = move_aside(path)
    found = salvage(backup)
    message = (
        f"catalog {path} was damaged ({reason}); kept it as {backup.name} and rebuilt it from the "
        f"bundled data, recovering {len(found.cards)} of your cards and {len(found.prices)} of your "
        f"prices"
    )
    log.info(message)  # info, not warning: the caller prints `messages`; a warning printed it a second time
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
        return bool(schema_version(session.connection()) == SCHEMA_VERSION and seeded_digest(session) == digest)


def _server_location(path: str | os.PathLike[str] | None) -> str | None:
    """The SQLAlchemy URL when --catalog or ADVISOR_CATALOG names a server (server.py), else None."""
    text = os.fspath(path) if path else os.environ.get(ENV_VAR, "")
    return text if is_url(text) else None


def _examined(target: Path) -> Verdict:
    """Whose file `target` is (identity.py), with SQLite's own failures (busy, unreadable) as one line."""
    start = time.monotonic()
    try:
        verdict = examine(target, sqlite_engine.BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as error:
        raise as_catalog_error(error, target, time.monotonic() - start) from None
    except OSError as error:  # the header could not be read (permissions)
        raise CatalogFileError(str(target), error.strerror or str(error)) from None
    if verdict.owner is Owner.DAMAGED and read_only(target):
        raise CatalogFileError(
            str(target), f"is damaged ({verdict.damage}) and read-only, so it cannot be repaired; nothing was changed"
        )
    return verdict


def _open_file(target: Path, messages: list[str]) -> tuple[Sessions, Salvage, Owner, bool]:
    """-> (sessions, rows salvaged from a damaged copy, whose file it was, whether it is read-only)."""
    _usable(target)
    verdict = _examined(target)
    owner, found = verdict.owner, Salvage()
    if owner is Owner.DAMAGED:
        found, message = _recover(target, verdict.damage)
        messages.append(message)
        owner = Owner.NEW
    locked = read_only(target)
    if locked and owner is Owner.NEW:
        raise CatalogFileError(str(target), "no catalog can be made there: it is read-only")
    engine = make_engine(target, read_only_uri(target) if locked else None)
    return Sessions(engine), found, owner, locked


def _as_it_is(sessions: Sessions, target: Path | str, digest: str, messages: list[str]) -> None:
    """A read-only catalog is read as it is: fine when its schema is current; its seed is not refreshed."""
    with sessions.read() as session:
        version = schema_version(session.connection())
        stale = seeded_digest(session) != digest
    if version > SCHEMA_VERSION:
        raise NewerSchemaError(str(target), version, SCHEMA_VERSION)
    if version < SCHEMA_VERSION:
        raise CatalogFileError(
            str(target),
            f"is read-only, and its schema version {version} needs an upgrade to {SCHEMA_VERSION}, which writes",
        )
    if stale:
        messages.append(
            f"catalog {target} is read-only: its bundled cards and prices were not refreshed to this advisor version's"
        )


def open_catalog(
    path: str | os.PathLike[str] | None = None, *, data_dir: Path | None = None, bundled: BundledData | None = None
) -> Catalog:
    """Open (creating, upgrading, re-seeding or rebuilding as needed) the catalog database: a file, or a
    server when `path` / ADVISOR_CATALOG is an SQLAlchemy URL (a server keeps its own data safe: no file
    damage check or salvage applies there). A file the catalog did not make is refused (identity.py); a
    read-only one is opened read-only."""
    messages: list[str] = []
    url = _server_location(path)
    if url is not None:
        target: Path | str = shown(url)
        sessions, found, owner, locked = Sessions(make_server_engine(url)), Salvage(), Owner.OURS, False
    else:
        target = catalog_path(path)
        sessions, found, owner, locked = _open_file(target, messages)
    data_dir = data_dir or bundled_dir()
    digest = bundled.digest if bundled else data_digest(data_dir)

    def prepare(session: Session) -> None:
        before, after = upgrade(session.connection(), str(target))
        mark(session.connection())  # a new or pre-marker catalog gets its marker in the same transaction
        if 0 < before < after:
            messages.append(f"catalog {target} upgraded from schema version {before} to {after}")
        if seeded_digest(session) != digest:
            apply_bundled(session, bundled or load_bundled(data_dir))
        if found:
            _restore(session, found)

    if locked:
        _as_it_is(sessions, target, digest, messages)
    elif found or owner is not Owner.OURS or not _up_to_date(sessions, digest):
        sessions.transact(prepare)
    return Catalog(target, sessions, messages)
