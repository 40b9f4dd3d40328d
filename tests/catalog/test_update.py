"""`catalog update [URL|FILE]` against a feed served by a real HTTP server on 127.0.0.1 (urllib on the
client side, http.server on the other: no mock), the checksum, offline, and the published feed file."""

from __future__ import annotations

import csv
import hashlib
import http.server
import io
import json
import socket
import threading
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import pytest

from advisor.catalog import Catalog, price_history, update
from advisor.catalog.bundled import bundled_dir
from advisor.catalog.present import age_text
from advisor.catalog.update import apply_feed, bundled_feed, last_update, parse_feed
from tests.catalog.test_cli import Runner, run  # noqa: F401  (the fixture)

ROOT = Path(__file__).resolve().parents[2]
HEADER = "card,amount,currency,date,condition,kind,market,source\n"
# A price the bundled data has (prices.csv: RunPod's RTX 4090 of 2026-10-01) and one it has not.
KNOWN = "GeForce RTX 4090,0.34,USD,2026-10-01,new,rent_hour,cloud_on_demand,a feed <https://feed.example/a>\n"
NEW = "GeForce RTX 4090,1499,USD,2026-11-20,new,purchase,retail,a shop <https://shop.example/4090>\n"
# A feed may name a card by an alias; the change list names the card as reports do.
ALIAS = "rtx4090,1450,USD,2026-11-21,new,purchase,retail,another shop\n"


def feed(body: str, day: str = "2026-11-30") -> bytes:
    digest = hashlib.sha256(body.encode()).hexdigest()
    return f"# advisor prices feed\n# date: {day}\n# sha256: {digest}\n{body}".encode()


class Served:
    """Whatever `content` holds is the answer to GET /feed.csv."""

    def __init__(self) -> None:
        self.content = b""
        served = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200 if self.path == "/feed.csv" else 404)
                self.end_headers()
                self.wfile.write(served.content if self.path == "/feed.csv" else b"")

            def log_message(self, *_args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/feed.csv"


@contextmanager
def serving() -> Iterator[Served]:
    it = Served()
    thread = threading.Thread(target=it.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield it
    finally:
        it.server.shutdown()
        it.server.server_close()


@pytest.fixture
def served() -> Iterator[Served]:
    with serving() as it:
        yield it


def _rtx4090(run: Runner) -> list[dict[str, object]]:  # noqa: F811
    _code, out, _ = run("prices", "4090", "--json")
    return list(json.loads(out)["prices"])


def test_update_round_trip_shows_changes_and_keeps_the_users_prices(run: Runner, served: Served) -> None:  # noqa: F811
    assert run("set-price", "4090", "1700", "--date", "2026-11-01")[0] == 0  # the user's own price
    before = len(_rtx4090(run))
    served.content = feed(HEADER + KNOWN + NEW)
    code, out, err = run("update", served.url)
    assert code == 0, err
    # KNOWN is a bundled price already: 1 added (NEW), 1 unchanged; the user's one price kept.
    assert out.startswith(
        f"prices updated from {served.url} (data of 2026-11-30): 1 added, 0 removed, 1 unchanged; your 1 price kept"
    )
    assert "+ GeForce RTX 4090: 1499 USD (new, retail) on 2026-11-20" in out
    after = _rtx4090(run)
    assert len(after) == before + 1  # before + NEW; KNOWN not stored twice
    new = [p for p in after if p["amount"] == 1499.0]
    assert [(p["source"], p["source_url"], p["user_owned"]) for p in new] == [
        ("a shop", "https://shop.example/4090", False)
    ]
    _code, text, _ = run("prices", "4090")
    assert "prices last updated " in text and "from a feed of 2026-11-30" in text

    served.content = feed(HEADER + KNOWN + NEW.replace("1499", "1449"), day="2026-12-01")  # a newer feed
    code, out, _ = run("update", served.url)
    assert code == 0 and "1 added, 1 removed, 1 unchanged; your 1 price kept" in out
    assert "- GeForce RTX 4090: 1499 USD" in out and "+ GeForce RTX 4090: 1449 USD" in out
    amounts = sorted(float(str(p["amount"])) for p in _rtx4090(run) if p["market"] == "retail")
    assert 1449.0 in amounts and 1499.0 not in amounts and 1700.0 in amounts


def test_a_damaged_feed_changes_nothing_and_says_why_in_one_line(run: Runner, served: Served) -> None:  # noqa: F811
    before = _rtx4090(run)
    served.content = feed(HEADER + NEW).replace(b"1499", b"1399")  # edited after the checksum was written
    code, _out, err = run("update", served.url)
    assert code == 2
    assert "checksum mismatch" in err and "prices unchanged" in err and "Traceback" not in err
    served.content = (HEADER + NEW).encode()  # no header at all
    code, _out, err = run("update", served.url)
    assert code == 2 and "not an advisor prices feed" in err
    assert _rtx4090(run) == before


def test_offline_is_one_line_and_not_a_failure(run: Runner) -> None:  # noqa: F811
    with socket.socket() as probe:  # a port nobody listens on: bind, note the number, close
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/feed.csv"
    code, out, err = run("update", url)
    assert code == 0 and out == ""
    assert err.startswith(f"advisor catalog update: could not reach {url} (")  # (Connection refused)
    assert err.rstrip().endswith("prices unchanged") and err.count("\n") == 1


def test_a_feed_file_works_like_an_address(run: Runner, tmp_path: Path) -> None:  # noqa: F811
    path = tmp_path / "feed.csv"
    path.write_bytes(feed(HEADER + NEW + ALIAS + "No Such Card 9000,1,USD,2026-11-21,new,purchase,retail,x\n"))
    code, out, _ = run("update", str(path))
    assert code == 0 and "2 added" in out
    assert "+ GeForce RTX 4090: 1450 USD (new, retail) on 2026-11-21" in out  # 'rtx4090' in the feed
    assert "skipped 1 card(s) this catalog does not have: No Such Card 9000" in out
    code, _out, err = run("update", str(tmp_path / "missing.csv"))
    assert code == 2 and "cannot read" in err


def test_the_published_feed_is_the_bundled_prices() -> None:
    """advisor/data/prices-feed.csv is what `catalog update` fetches by default: it must be prices.csv as it
    is now (after editing prices.csv run `python -m advisor.catalog.update`)."""
    published = (bundled_dir() / "prices-feed.csv").read_text(encoding="utf-8")
    day = date.fromisoformat(published.split("\n")[1].removeprefix("# date: "))
    assert published == bundled_feed(bundled_dir(), day)


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        (date(2026, 12, 1), "today"),
        (date(2026, 11, 19), "12 days"),  # 30 + 1 - 19 = 12
        (date(2026, 9, 1), "3 months"),  # 91 days / 30.44 = 2.99
        (date(2024, 6, 1), "2.5 years"),  # 913 days / 365.25 = 2.50
    ],
)
def test_a_price_says_how_old_it_is(day: date, expected: str) -> None:
    assert age_text(day, date(2026, 12, 1)) == expected


def test_a_newer_feed_replaces_the_older_on_both_backends(catalog: Catalog) -> None:
    first, second = (parse_feed(feed(HEADER + NEW + extra).decode(), "feed") for extra in ("", ALIAS))
    catalog.transact(lambda s: apply_feed(s, first, "feed", today=date(2026, 12, 1)))
    summary = catalog.transact(lambda s: apply_feed(s, second, "feed", today=date(2026, 12, 2)))
    assert (len(summary.added), len(summary.removed), summary.unchanged) == (1, 0, 1)  # ALIAS new, NEW kept
    with catalog.read() as session:
        info = last_update(session)
        retail = [
            p.amount
            for p in price_history(session, "GeForce RTX 4090")
            if p.market == "retail" and p.date >= date(2026, 11, 20)
        ]
    assert info is not None and (info.feed_day, info.updated_on) == (date(2026, 11, 30), date(2026, 12, 2))
    assert sorted(retail) == [1450.0, 1499.0]


def test_the_default_address_is_the_projects_published_feed() -> None:
    """The default is the raw address of advisor/data/prices-feed.csv in the repository pyproject.toml names
    (README, 'Keeping prices current'): the file `python -m advisor.catalog.update` writes, on the main branch."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    repository = project["urls"]["Repository"].removeprefix("https://github.com/")
    assert repository == update.PROJECT_REPOSITORY
    expected = f"https://raw.githubusercontent.com/{repository}/main/advisor/data/prices-feed.csv"
    assert expected == update.DEFAULT_URL
    assert (ROOT / update.FEED_PATH).resolve() == (bundled_dir() / "prices-feed.csv").resolve()


def test_the_published_feed_served_on_127_0_0_1_updates_nothing_it_already_has(run: Runner, served: Served) -> None:  # noqa: F811
    """What the default address serves: the published file itself, checksum and all. Every row of it is a
    bundled price already, so an up-to-date catalog gains nothing and keeps every price."""
    published = (ROOT / update.FEED_PATH).read_bytes()
    served.content = published
    before = _rtx4090(run)
    code, out, err = run("update", served.url)
    assert code == 0, err
    # One fact per card, amount, currency, day, condition, kind and market: sources quoting the same price
    # are one price (439 rows, 433 facts on 2026-12-01).
    body = published.decode("utf-8").split("\n", 3)[3]
    columns = ("card", "currency", "date", "condition", "kind", "market")
    facts = {(*(r[c] for c in columns), float(r["amount"])) for r in csv.DictReader(io.StringIO(body))}
    assert f": 0 added, 0 removed, {len(facts)} unchanged; your 0 prices kept" in out
    assert _rtx4090(run) == before
