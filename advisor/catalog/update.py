"""`advisor catalog update [URL|FILE]`: bring the catalog's prices up to date from a dated price feed.

A feed is the import format of `catalog import-prices` (price_rows.py) after three header lines:

    # advisor prices feed
    # date: 2026-12-01
    # sha256: <64 hex digits: SHA-256 of the UTF-8 bytes after the third line's newline>

The project publishes one (advisor/data/prices-feed.csv, written from the bundled prices by `feed_text`);
any URL or file in the same format works. Feed prices are stored apart from the user's and from the
bundled ones (origin "update"): a new feed replaces the previous feed's rows, the user's prices are never
touched, and a feed row equal to a bundled price is not stored twice. The day of the feed and of the update
are kept in the meta table, so the app and `catalog prices` can say how old the data is.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from advisor.catalog.bundled import bundled_dir, load_sources
from advisor.catalog.csvio import rows as rows_of
from advisor.catalog.errors import CatalogError
from advisor.catalog.orm import BUNDLED, USER, Meta, Price
from advisor.catalog.price_import import price_fact, read_prices
from advisor.catalog.price_rows import PRICE_COLUMNS, Source
from advisor.catalog.records import PriceRecord
from advisor.catalog.repository import price_orm, price_record, resolve_card
from advisor.core.files import read_text_capped

FEED_ORIGIN = "update"
MAGIC = "# advisor prices feed"
UPDATED_KEY = "prices_updated"
URL_ENV_VAR = "ADVISOR_PRICES_URL"
# The project's published feed is its own file advisor/data/prices-feed.csv as committed on the main branch,
# served raw by GitHub (README, 'Keeping prices current', gives the pattern). PROJECT_REPOSITORY must name the
# repository pyproject.toml's [project.urls] Repository points at (tests/catalog/test_update.py checks both
# and that FEED_PATH is where `python -m advisor.catalog.update` writes the feed); a fork sets
# ADVISOR_PRICES_URL or passes its own address. The file carries its SHA-256 (_HEADER), so a damaged or
# edited copy is refused whichever address it came from.
PROJECT_REPOSITORY = "advisor/advisor"
FEED_BRANCH = "main"
FEED_PATH = "advisor/data/prices-feed.csv"
RAW_URL_PATTERN = "https://raw.githubusercontent.com/{repository}/{branch}/{path}"
DEFAULT_URL = RAW_URL_PATTERN.format(repository=PROJECT_REPOSITORY, branch=FEED_BRANCH, path=FEED_PATH)
MAX_FEED_BYTES = 8 * 2**20  # the published feed is about 265 kB; a far larger answer is not a price feed
TIMEOUT_S = 15.0
_HEADER = re.compile(r"# advisor prices feed\n# date: (\d{4}-\d\d-\d\d)\n# sha256: ([0-9a-f]{64})\n")


class FeedUnreachable(CatalogError):
    """The feed's address did not answer (offline, DNS, refused, HTTP error): nothing was changed."""


@dataclass(frozen=True)
class Feed:
    day: date
    rows: tuple[tuple[int, PriceRecord], ...]  # (line in the feed, price)


@dataclass(frozen=True)
class UpdateInfo:
    """When the catalog's prices were last brought up to date, and from where."""

    feed_day: date
    updated_on: date
    where: str


@dataclass(frozen=True)
class UpdateSummary:
    info: UpdateInfo
    added: tuple[PriceRecord, ...]
    removed: tuple[PriceRecord, ...]
    unchanged: int
    user_prices: int
    unknown_cards: tuple[str, ...]

    def text(self, listed: int = 15) -> str:
        head = (
            f"prices updated from {self.info.where} (data of {self.info.feed_day}): {len(self.added)} added, "
            f"{len(self.removed)} removed, {self.unchanged} unchanged; your {self.user_prices} "
            f"price{'s' if self.user_prices != 1 else ''} kept"
        )
        changes = [f"  + {_line(p)}" for p in self.added] + [f"  - {_line(p)}" for p in self.removed]
        more = [f"  ... and {len(changes) - listed} more"] if len(changes) > listed else []
        unknown = (
            [
                f"  skipped {len(self.unknown_cards)} card(s) this catalog does not have: "
                + ", ".join(self.unknown_cards[:5])
                + (" ..." if len(self.unknown_cards) > 5 else "")
            ]
            if self.unknown_cards
            else []
        )
        return "\n".join([head, *changes[:listed], *more, *unknown])


def _line(p: PriceRecord) -> str:
    per = " per GPU-hour" if p.kind == "rent_hour" else ""
    return f"{p.card_name}: {p.amount:g} {p.currency}{per} ({p.condition}, {p.market}) on {p.date}"


def feed_text(rows: Iterable[Mapping[str, str]], sources: Mapping[str, Source], day: date) -> str:
    """The feed of prices.csv rows (source keys of sources.csv written out as "title <url>"), dated `day`."""
    body = io.StringIO()
    body.write(",".join(PRICE_COLUMNS) + "\n")
    for row in rows:
        cited = " + ".join(f"{sources[k].title} <{sources[k].url}>" for k in row["source"].split("+"))
        body.write(_csv_line([row[c] for c in PRICE_COLUMNS[:-1]] + [cited]))
    text = body.getvalue()
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return f"{MAGIC}\n# date: {day.isoformat()}\n# sha256: {digest}\n{text}"


def bundled_feed(directory: Path, day: date) -> str:
    """The feed the project publishes: advisor/data/prices.csv with its sources written out (README,
    'Keeping prices current': `python -m advisor.catalog.update` rewrites advisor/data/prices-feed.csv)."""
    rows = [row for _line, row in rows_of((directory / "prices.csv").read_text(encoding="utf-8"))]
    return feed_text(rows, load_sources(directory), day)


def _csv_line(cells: list[str]) -> str:
    quoted = ['"' + c.replace('"', '""') + '"' if any(ch in c for ch in ',"\n') else c for c in cells]
    return ",".join(quoted) + "\n"


def parse_feed(text: str, where: str) -> Feed:
    """Check the header and checksum, then every row (PriceImportError lists bad rows by line and field)."""
    found = _HEADER.match(text.replace("\r\n", "\n"))
    if found is None:
        raise CatalogError(
            f"{where}: not an advisor prices feed (it must start with '{MAGIC}', a date and a "
            f"sha256 line; see advisor/data/README.md, 'Keeping prices current')"
        )
    body = text.replace("\r\n", "\n")[found.end() :]
    if hashlib.sha256(body.encode("utf-8")).hexdigest() != found.group(2):
        raise CatalogError(
            f"{where}: checksum mismatch (the file is damaged or was changed after it was published); prices unchanged"
        )
    day = date.fromisoformat(found.group(1))
    rows = [(line + 3, price) for line, price in read_prices(body, where)]  # +3: the header lines
    return Feed(day, tuple(rows))


def fetch(source: str | None) -> tuple[str, str]:
    """(text, where) of a feed: an http(s) address (default: $ADVISOR_PRICES_URL or the project's), or a file.
    An address that does not answer raises FeedUnreachable; a file that cannot be read, CatalogError."""
    where = source or os.environ.get(URL_ENV_VAR) or DEFAULT_URL
    if not where.startswith(("http://", "https://")):
        path = Path(where.removeprefix("file://"))
        # the imports' reader: /dev/zero or a pipe given as the feed was read without end, and a missing file
        # said "cannot read: [Errno 2] No such file or directory: '<the path again>'"
        return read_text_capped(path, MAX_FEED_BYTES, CatalogError), str(path)
    try:
        request = urllib.request.Request(where, headers={"User-Agent": "advisor"})
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            data: bytes = answer.read(MAX_FEED_BYTES + 1)
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", None) or error
        raise FeedUnreachable(f"could not reach {where} ({reason}), prices unchanged") from None
    if len(data) > MAX_FEED_BYTES:
        raise CatalogError(f"{where}: more than {MAX_FEED_BYTES // 2**20} MiB, not a prices feed; prices unchanged")
    try:
        return data.decode("utf-8-sig"), where
    except UnicodeDecodeError as error:
        raise CatalogError(f"{where}: not UTF-8 text ({error.reason}); prices unchanged") from None


def last_update(session: Session) -> UpdateInfo | None:
    raw = session.scalar(select(Meta.value).where(Meta.key == UPDATED_KEY))
    if raw is None:
        return None
    try:
        values = json.loads(raw)
        return UpdateInfo(
            date.fromisoformat(values["feed_day"]), date.fromisoformat(values["updated_on"]), str(values["where"])
        )
    except (ValueError, KeyError, TypeError):
        return None  # a damaged note is no reason to refuse the catalog; the next update rewrites it


def apply_feed(session: Session, feed: Feed, where: str, today: date | None = None) -> UpdateSummary:
    """Replace the previous feed's prices with this feed's (inside the caller's transaction)."""
    ids, unknown = _card_ids(session, {p.card_name for _, p in feed.rows})
    bundled = {price_fact(p.card_id, p) for p in session.scalars(select(Price).where(Price.origin == BUNDLED))}
    before = {price_fact(p.card_id, p): p for p in session.scalars(select(Price).where(Price.origin == FEED_ORIGIN))}
    wanted: dict[tuple[object, ...], tuple[int, PriceRecord]] = {}
    for _line_no, price in feed.rows:
        if price.card_name in ids:
            card_id, canonical = ids[price.card_name]
            wanted.setdefault(
                price_fact(card_id, price), (card_id, replace(price, card_name=canonical, user_owned=False))
            )
    stored = {k: v for k, v in wanted.items() if k not in bundled}
    removed = tuple(price_record(p, p.card.name) for k, p in before.items() if k not in stored)  # before the delete
    session.execute(delete(Price).where(Price.origin == FEED_ORIGIN))
    session.add_all(price_orm(card_id, p, FEED_ORIGIN) for card_id, p in stored.values())
    info = UpdateInfo(feed.day, today or date.today(), where)
    session.merge(
        Meta(
            key=UPDATED_KEY,
            value=json.dumps(
                {"feed_day": info.feed_day.isoformat(), "updated_on": info.updated_on.isoformat(), "where": where}
            ),
        )
    )
    session.flush()
    mine = session.scalar(select(func.count()).select_from(Price).where(Price.origin == USER)) or 0
    added = tuple(p for k, (_cid, p) in stored.items() if k not in before)
    return UpdateSummary(info, added, removed, len(wanted) - len(added), int(mine), tuple(sorted(unknown)))


def _card_ids(session: Session, names: Iterable[str]) -> tuple[dict[str, tuple[int, str]], set[str]]:
    """(card id, canonical name) per name the feed uses; names this catalog lacks (an older release) are
    skipped, not fatal."""
    ids: dict[str, tuple[int, str]] = {}
    unknown: set[str] = set()
    for name in names:
        try:
            card = resolve_card(session, name)
        except CatalogError:  # ambiguous here: the feed names canonical cards, so skip rather than guess
            card = None
        if card is None:
            unknown.add(name)
        else:
            ids[name] = (card.id, card.name)
    return ids, unknown


def update_prices(
    catalog_transact: Callable[[Callable[[Session], UpdateSummary]], UpdateSummary], source: str | None
) -> UpdateSummary:
    """Fetch, check and apply a feed: nothing is written unless the whole feed is good."""
    text, where = fetch(source)
    feed = parse_feed(text, where)
    return catalog_transact(lambda session: apply_feed(session, feed, where))


def _publish() -> None:
    """Rewrite advisor/data/prices-feed.csv from prices.csv, dated today (run before a release)."""
    directory = bundled_dir()
    (directory / Path(FEED_PATH).name).write_text(bundled_feed(directory, date.today()), encoding="utf-8")


if __name__ == "__main__":
    _publish()
