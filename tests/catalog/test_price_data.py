"""The bundled price snapshot (advisor/data/prices.csv + sources.csv) checked as data, with the csv module
alone, so that it holds whatever the loader does with it: every row names a known card, a valid currency,
date, condition, kind and market, and a source with an address and the day it was read."""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "advisor" / "data"
PRICE_COLUMNS = ["card", "amount", "currency", "date", "condition", "kind", "market", "source"]
CONDITIONS = {"new", "used", "refurbished"}
KINDS = {"purchase", "rent_hour"}
MARKETS = {"msrp", "retail", "used_market", "cloud_on_demand", "cloud_spot", "cloud_reserved"}
# Which markets each kind and condition can come from: a rent is a cloud price, a used card is bought used.
RENT_MARKETS = {"cloud_on_demand", "cloud_spot", "cloud_reserved"}
# The date the snapshot was taken (README, "Price snapshot"): no price can be observed after it.
SNAPSHOT_DATE = date(2026, 12, 1)
# Price sources written before sources.csv had read dates (official price cuts of 2017-2024); each row of
# theirs is an MSRP. New sources must carry the day they were read.
LEGACY_SOURCES = {"nv-gdc2017", "nv-ces2020", "nv-super-2024", "amd-7900gre"}
# Sanity bounds per kind, in USD: a purchase between a used GT-class card and a datacenter module, a rent
# between a marketplace Pascal card (Akash lists a Tesla P4 at $0.03 per hour) and a rack-scale Blackwell GPU.
BOUNDS_USD = {"purchase": (20.0, 60_000.0), "rent_hour": (0.02, 20.0)}


def _read(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def prices() -> list[dict[str, str]]:
    return _read("prices.csv")


@pytest.fixture(scope="module")
def sources() -> dict[str, dict[str, str]]:
    return {row["key"]: row for row in _read("sources.csv")}


@pytest.fixture(scope="module")
def cards() -> dict[str, dict[str, str]]:
    return {row["name"]: row for row in _read("cards.csv")}


def _problems(row: dict[str, str], cards: dict[str, dict[str, str]]) -> Iterator[str]:
    if row["card"] not in cards:
        yield f"unknown card {row['card']!r}"
    if not re.fullmatch(r"[A-Z]{3}", row["currency"]):
        yield f"currency {row['currency']!r} is not an ISO 4217 code"
    if row["condition"] not in CONDITIONS or row["kind"] not in KINDS or row["market"] not in MARKETS:
        yield f"condition/kind/market {row['condition']}/{row['kind']}/{row['market']}"
    if (row["kind"] == "rent_hour") != (row["market"] in RENT_MARKETS):
        yield f"kind {row['kind']} with market {row['market']}"
    if (row["market"] == "used_market") != (row["condition"] == "used"):
        yield f"market {row['market']} with condition {row['condition']}"
    if date.fromisoformat(row["date"]) > SNAPSHOT_DATE:
        yield f"date {row['date']} after the snapshot"
    low, high = BOUNDS_USD.get(row["kind"], (0.0, 0.0))
    if row["currency"] == "USD" and not low <= float(row["amount"]) <= high:
        yield f"{row['amount']} USD outside {low}-{high} for {row['kind']}"


def test_every_price_row_is_well_formed(prices: list[dict[str, str]], cards: dict[str, dict[str, str]]) -> None:
    assert list(prices[0]) == PRICE_COLUMNS
    bad = [(row["card"], row["date"], problem) for row in prices for problem in _problems(row, cards)]
    assert bad == []


def test_no_price_row_is_repeated(prices: list[dict[str, str]]) -> None:
    """One source may quote several providers for the same card and day (different amounts); the same
    quote twice would count twice in any average."""
    keys = [tuple(row[c] for c in PRICE_COLUMNS) for row in prices]
    assert len(keys) == len(set(keys))


def test_every_price_names_a_source_with_an_address_and_a_read_date(
    prices: list[dict[str, str]], sources: dict[str, dict[str, str]]
) -> None:
    missing = []
    for row in prices:
        for key in row["source"].split("+"):
            source = sources.get(key)
            if source is None or not source["url"].startswith("https://"):
                missing.append((row["card"], key, "no source with an https address"))
            elif not source["read_date"] and not (key in LEGACY_SOURCES and row["market"] == "msrp"):
                missing.append((row["card"], key, "no read_date"))
            elif source["read_date"] and date.fromisoformat(source["read_date"]) > SNAPSHOT_DATE:
                missing.append((row["card"], key, "read after the snapshot"))
    assert missing == []


def test_every_source_row_has_the_four_columns(sources: dict[str, dict[str, str]]) -> None:
    assert all(list(row) == ["key", "title", "url", "read_date"] for row in sources.values())
    assert [key for key, row in sources.items() if not row["title"] or not row["url"]] == []


# Issue 28's targets are 95% of cards priced and 90% of datacenter cards with a rent of 2026; the snapshot
# of 2026-12-01 (201 cards, second pass of issue 28) reaches the floors below and no more (README, "Price
# snapshot", lists every card still missing). They guard against losing coverage; raise them as sourced prices
# are added. The RX 9060, Gaudi 3 PCIe and Instinct MI350P came without a price; GPU Poet's card data priced the
# B100 and V100 PCIe 32GB (186 -> 188). The cards pass of 2026-12-02 added seven cards, of which only the
# RTX 6000D has a price (a Vast.ai rent): 189 / 208. test_issue_28_targets states the targets themselves.
PRICED_SHARE_FLOOR = 0.908  # 189 / 208 = 0.9087
DATACENTER_RENT_SHARE_FLOOR = 0.76  # 46 / 60 = 0.767
DATACENTER_RENT_2026_SHARE_FLOOR = 0.75  # 45 / 60 = 0.750
PRICED_SHARE_TARGET = 0.95  # issue 28: 198 of 208 cards
DATACENTER_RENT_2026_SHARE_TARGET = 0.90  # issue 28: 54 of 60 datacenter cards


def _coverage(cards: dict[str, dict[str, str]], prices: list[dict[str, str]]) -> tuple[float, float]:
    """Share of cards with any dated, sourced price (a launch MSRP of cards.csv counts: the loader makes
    it the first price), and share of datacenter cards with a rent price."""
    priced = {n for n, c in cards.items() if c["msrp_usd"] and c["launch_date"]} | {p["card"] for p in prices}
    rented = {p["card"] for p in prices if p["kind"] == "rent_hour"}
    datacenter = [n for n, c in cards.items() if c["segment"] == "datacenter"]
    return len(priced & set(cards)) / len(cards), len(rented & set(datacenter)) / len(datacenter)


def test_coverage_does_not_fall_below_the_snapshot(
    cards: dict[str, dict[str, str]], prices: list[dict[str, str]]
) -> None:
    priced_share, rent_share = _coverage(cards, prices)
    assert priced_share >= PRICED_SHARE_FLOOR
    assert rent_share >= DATACENTER_RENT_SHARE_FLOOR
    recent = [p for p in prices if p["date"] >= "2026-01-01"]
    assert _coverage(cards, recent)[1] >= DATACENTER_RENT_2026_SHARE_FLOOR


# Cards sold new in 2025-2026 without any price dated 2026 (README, "Price snapshot"): no dated 2026 source
# names them. A card launched in 2025 or later that is not listed here must have one.
NO_2026_PRICE = {
    "GeForce RTX 5090 D",
    "GeForce RTX 5090 D V2",
    "RTX PRO 4000 Blackwell SFF",
    "RTX PRO 5000 Blackwell 72GB",
    "Radeon AI PRO R9700",
    "Radeon AI PRO R9700S",
    "Radeon AI PRO R9600D",
    "Radeon PRO W7900D",
    "Radeon RX 7650 GRE",
    "Radeon RX 7700",
}


def test_cards_sold_in_2025_and_2026_have_a_price_of_2026(
    cards: dict[str, dict[str, str]], prices: list[dict[str, str]]
) -> None:
    recent = {p["card"] for p in prices if p["date"] >= "2026-01-01"}
    launched = {n for n, c in cards.items() if c["launch_date"] >= "2025-01-01"}
    assert sorted(launched - recent - NO_2026_PRICE) == []
    assert sorted(NO_2026_PRICE & recent) == []  # a card that got one leaves the list


@pytest.mark.xfail(
    strict=True,
    reason="issue 28's targets are not met by any source found (README, 'Price "
    "snapshot'): 189 / 208 priced, 45 / 60 datacenter cards with a 2026 rent, 10 cards of 2025-2026 "
    "without a 2026 price; when this passes, make it a plain test and drop the floors",
)
def test_issue_28_targets(cards: dict[str, dict[str, str]], prices: list[dict[str, str]]) -> None:
    priced_share = _coverage(cards, prices)[0]
    rent_2026_share = _coverage(cards, [p for p in prices if p["date"] >= "2026-01-01"])[1]
    recent = {p["card"] for p in prices if p["date"] >= "2026-01-01"}
    launched = {n for n, c in cards.items() if c["launch_date"] >= "2025-01-01"}
    assert priced_share >= PRICED_SHARE_TARGET
    assert rent_2026_share >= DATACENTER_RENT_2026_SHARE_TARGET
    assert sorted(launched - recent) == []


def test_the_rtx_50_cards_have_a_new_price_at_most_three_months_old(prices: list[dict[str, str]]) -> None:
    """Issue 28: a new price no older than three months at the release of the data, met for the RTX 50 cards
    sold in shops (GPU Poet's September 2026 figures; README, 'How old the newest prices are')."""
    wanted = {
        "GeForce RTX 5060",
        "GeForce RTX 5060 Ti 16GB",
        "GeForce RTX 5070",
        "GeForce RTX 5070 Ti",
        "GeForce RTX 5080",
        "GeForce RTX 5090",
    }
    oldest_day = SNAPSHOT_DATE - timedelta(days=92)  # three months: 2026-09-01 is 91 days before 2026-12-01
    fresh = {
        p["card"]
        for p in prices
        if p["kind"] == "purchase" and p["condition"] == "new" and date.fromisoformat(p["date"]) >= oldest_day
    }
    assert sorted(wanted - fresh) == []


# An address that moves (a branch, a dataset without a revision) cannot be traced back to the figure.
_MOVING = re.compile(
    r"refs/heads/|/(?:blob|raw|tree|resolve)/(?:main|master)/|raw\.githubusercontent\.com/[^/]+/[^/]+/"
    r"(?:main|master)/"
)
_PINNED = re.compile(r"/(?:blob|resolve|commit|tree)/[0-9a-f]{7,40}/")
# A page's own date, a commit, or an undated page's read day, as its title states it.
_DATED = re.compile(r"\b(?:19|20)\d\d\b|dated the day it was read")


def test_every_price_source_is_pinned_or_dated(
    prices: list[dict[str, str]], sources: dict[str, dict[str, str]]
) -> None:
    """Issue 28: raw files on a branch, Hugging Face datasets without a revision and a generic news index were
    not traceable; such rows were pinned or removed."""
    untraceable = []
    for key in sorted({k for p in prices for k in p["source"].split("+")}):
        url, title = sources[key]["url"], sources[key]["title"]
        versioned = "github.com" in url or "huggingface.co/datasets/" in url
        if _MOVING.search(url) or (versioned and "/pull/" not in url and not _PINNED.search(url)):
            untraceable.append((key, url))
        elif not _DATED.search(f"{title} {url}"):  # tradingpedia.com/2026/01/08/...
            untraceable.append((key, "no date in the title"))
    assert untraceable == []


def test_a_row_dated_the_day_its_source_was_read_says_so(
    prices: list[dict[str, str]], sources: dict[str, dict[str, str]]
) -> None:
    """Issue 28: undated pages and catalogs carry the day they were read, which makes them look fresh; their
    titles must say that this is the read day, not a date the source states (23 rows of 15 sources on
    2026-12-01, README 'Price snapshot')."""
    stamped = {k for p in prices for k in p["source"].split("+") if p["date"] == sources[k]["read_date"]}
    assert sorted(k for k in stamped if "dated the day it was read" not in sources[k]["title"]) == []


def test_the_cards_people_rent_most_have_a_rent_price(prices: list[dict[str, str]]) -> None:
    """The datacenter cards a buyer compares against renting, and the consumer cards clouds rent out."""
    rented = {p["card"] for p in prices if p["kind"] == "rent_hour"}
    wanted = {
        "H100 SXM5",
        "H100 PCIe",
        "H200 SXM",
        "B200",
        "A100 SXM4 80GB",
        "A100 SXM4 40GB",
        "L40S",
        "L4",
        "Tesla T4",
        "A10",
        "A10G",
        "Instinct MI300X",
        "GeForce RTX 4090",
        "GeForce RTX 5090",
    }
    assert sorted(wanted - rented) == []


def test_rent_per_card_hour_is_below_the_card_price_over_a_year(prices: list[dict[str, str]]) -> None:
    """A rent that, kept up for a year (8,760 h), costs less than a tenth of the card's cheapest purchase
    price would mean a per-instance price was not divided by its GPU count (8 x H100 at $24/h is $3/GPU-h,
    x 8,760 = $26,280 > $25,000 / 10)."""
    cheapest: dict[str, float] = {}
    for p in prices:
        if p["kind"] == "purchase" and p["currency"] == "USD" and p["condition"] == "new":
            cheapest[p["card"]] = min(cheapest.get(p["card"], float("inf")), float(p["amount"]))
    too_cheap = [
        (p["card"], p["amount"])
        for p in prices
        if p["kind"] == "rent_hour" and p["card"] in cheapest and float(p["amount"]) * 8760 < cheapest[p["card"]] / 10
    ]
    assert too_cheap == []


# Issue 13 item 1 asks for used-market prices of the popular older cards and street prices of the cards
# sold new in 2025-2026. The snapshot of 2026-12-01 has a used price for 73 cards (9 before it): a guard
# against losing them, to be raised as sources are added (README, "Street and used-market prices").
USED_CARDS_FLOOR = 73


def _cards_in(prices: list[dict[str, str]], market: str) -> set[str]:
    return {p["card"] for p in prices if p["market"] == market}


def test_used_market_coverage_does_not_fall_below_the_snapshot(prices: list[dict[str, str]]) -> None:
    assert len(_cards_in(prices, "used_market")) >= USED_CARDS_FLOOR


def test_the_popular_older_cards_have_a_used_price(prices: list[dict[str, str]]) -> None:
    """One card per family the issue names (GTX 16, RTX 20/30/40, P40/P100/V100, A100): a buyer of a card
    that is no longer sold new compares its used price, not a launch MSRP of years ago."""
    wanted = {
        "GeForce GTX 1660 Super",
        "GeForce RTX 2080 Ti",
        "GeForce RTX 3060",
        "GeForce RTX 3080",
        "GeForce RTX 3090",
        "GeForce RTX 4090",
        "Tesla P40",
        "Tesla P100 PCIe 16GB",
        "Tesla V100 SXM2 16GB",
        "A100 PCIe 80GB",
    }
    assert sorted(wanted - _cards_in(prices, "used_market")) == []


def test_cards_sold_new_in_2025_and_2026_have_a_street_price(prices: list[dict[str, str]]) -> None:
    """RTX 50, RX 9060/9070, Arc B570/B580 and the RTX 40 Super cards still sold: what a shop asks, beside
    the launch MSRP (RX 9070 GRE: no dated street price found, README)."""
    wanted = {
        "GeForce RTX 5050",
        "GeForce RTX 5060",
        "GeForce RTX 5060 Ti",
        "GeForce RTX 5060 Ti 16GB",
        "GeForce RTX 5070",
        "GeForce RTX 5070 Ti",
        "GeForce RTX 5080",
        "GeForce RTX 5090",
        "Radeon RX 9060 XT",
        "Radeon RX 9060 XT 8GB",
        "Radeon RX 9070",
        "Radeon RX 9070 XT",
        "Arc B570",
        "Arc B580",
        "GeForce RTX 4070 Super",
        "GeForce RTX 4070 Ti Super",
    }
    street = {p["card"] for p in prices if p["market"] == "retail" and p["condition"] == "new"}
    assert sorted(wanted - street) == []


# The README's table of how old the newest price of each popular card is (issue 28): new (a launch MSRP of
# cards.csv counts on its launch day), used and rent, each "YYYY-MM-DD (N mo)" at SNAPSHOT_DATE or "none".
_AGE_KINDS: dict[str, Callable[[dict[str, str]], bool]] = {
    "new": lambda p: p["kind"] == "purchase" and p["condition"] == "new",
    "used": lambda p: p["market"] == "used_market",
    "rent": lambda p: p["kind"] == "rent_hour",
}


def _age_cell(card: dict[str, str], prices: list[dict[str, str]], kind: str) -> str:
    days = [date.fromisoformat(p["date"]) for p in prices if p["card"] == card["name"] and _AGE_KINDS[kind](p)]
    if kind == "new" and card["msrp_usd"] and card["launch_date"]:
        days.append(date.fromisoformat(card["launch_date"]))
    if not days:
        return "none"
    newest = max(days)
    return f"{newest} ({round((SNAPSHOT_DATE - newest).days / 30.44)} mo)"  # 30.44 days: a mean month


def test_the_readme_lists_how_old_the_newest_prices_are(
    cards: dict[str, dict[str, str]], prices: list[dict[str, str]]
) -> None:
    text = (DATA / "README.md").read_text(encoding="utf-8")
    section = text.split("### How old the newest prices are", 1)[1].split("\n### ", 1)[0]
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| ") and not line.startswith(("| card ", "| ---"))
    ]
    assert len(rows) >= 20
    stale = [
        (row[0], kind, row[1 + i], _age_cell(cards[row[0]], prices, kind))
        for row in rows
        for i, kind in enumerate(_AGE_KINDS)
        if row[1 + i] != _age_cell(cards[row[0]], prices, kind)
    ]
    assert stale == []
