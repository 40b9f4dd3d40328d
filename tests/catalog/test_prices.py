"""Prices as facts: the schema 2 -> 3 upgrade, the prices.csv format, and user prices surviving data updates."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import date
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from advisor.catalog import add_price, open_catalog, price_history
from advisor.catalog.bundled import BundledData, bundled_dir, load_bundled
from advisor.catalog.errors import CatalogDataError
from advisor.catalog.migrations import MIGRATIONS, SCHEMA_VERSION
from tests.catalog.test_migrations import _v1_file

HEADER = "card,amount,currency,date,condition,kind,market,source\n"


def _v2_file(path: Path) -> Path:
    _v1_file(path)
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        MIGRATIONS[1](conn)
        conn.exec_driver_sql("PRAGMA user_version = 2")
        conn.exec_driver_sql(
            "INSERT INTO prices (card_id, amount, currency, date, condition, source, origin) "
            "VALUES (1, 640.0, 'USD', '2024-02-01', 'used', 'eBay', 'user')"
        )
    engine.dispose()
    return path


def test_v2_prices_upgrade_to_facts_and_keep_the_users(tmp_path: Path, bundled: BundledData) -> None:
    catalog = open_catalog(_v2_file(tmp_path / "v2.sqlite3"), bundled=bundled)
    assert catalog.messages == [f"catalog {tmp_path / 'v2.sqlite3'} upgraded from schema version 2 to {SCHEMA_VERSION}"]
    with catalog.read() as session:
        mine = [p for p in price_history(session, "RTX 3090") if p.user_owned]
    catalog.close()
    assert [(p.amount, p.condition, p.kind, p.market) for p in mine] == [
        (750.0, "new", "purchase", "retail"),
        (640.0, "used", "purchase", "used_market"),
    ]
    with sqlite3.connect(tmp_path / "v2.sqlite3") as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def _data_copy(tmp_path: Path, prices: str, sources_extra: str = "") -> Path:
    data = tmp_path / "data"
    shutil.copytree(bundled_dir(), data, dirs_exist_ok=True)
    (data / "prices.csv").write_text(HEADER + prices, encoding="utf-8")
    if sources_extra:
        with (data / "sources.csv").open("a", encoding="utf-8") as out:
            out.write(sources_extra)
    return data


def _add_read_date_column(data: Path) -> None:
    lines = (data / "sources.csv").read_text(encoding="utf-8").splitlines()
    if "read_date" in lines[0]:
        return
    (data / "sources.csv").write_text("\n".join([lines[0] + ",read_date", *lines[1:]]) + "\n", encoding="utf-8")


def test_user_prices_win_and_survive_a_data_update(tmp_path: Path) -> None:
    shop = "shop,A shop's GPU page,https://shop.example/gpus,2026-05-02\n"
    data = _data_copy(
        tmp_path,
        "GeForce RTX 4090,1999,USD,2026-05-01,new,purchase,retail,shop\n"
        "H100 SXM5,2.49,USD,2026-05-01,new,rent_hour,cloud_on_demand,shop\n",
    )
    _add_read_date_column(data)
    with (data / "sources.csv").open("a", encoding="utf-8") as out:
        out.write(shop)
    path = tmp_path / "c.sqlite3"
    catalog = open_catalog(path, data_dir=data)
    catalog.transact(lambda s: add_price(s, "4090", 1750.0, on=date(2026, 4, 1), source="my receipt"))
    catalog.close()
    # The data update: the shop's price changes and the rent row goes.
    (data / "prices.csv").write_text(
        HEADER + "GeForce RTX 4090,2099,USD,2026-06-01,new,purchase,retail,shop\n", encoding="utf-8"
    )
    catalog = open_catalog(path, data_dir=data)
    with catalog.read() as session:
        history = price_history(session, "GeForce RTX 4090")
        rents = [p for p in price_history(session, "H100 SXM5") if p.kind == "rent_hour"]
    catalog.close()
    shop_prices = [(p.amount, p.source, p.source_url, p.source_read_date) for p in history if p.market == "retail"]
    assert (2099.0, "A shop's GPU page", "https://shop.example/gpus", date(2026, 5, 2)) in shop_prices
    assert not any(p.amount == 1999.0 for p in history) and rents == []  # bundled rows follow the data
    assert [(p.amount, p.source) for p in history if p.user_owned] == [(1750.0, "my receipt")]


def test_the_first_price_format_reads_as_launch_prices(tmp_path: Path) -> None:
    data = _data_copy(tmp_path, "")
    (data / "prices.csv").write_text(
        "card,amount,currency,date,condition,source\nGeForce GTX 1080,499,USD,2017-03-01,new,nv-gdc2017\n",
        encoding="utf-8",
    )
    loaded = load_bundled(data)
    cut = [p for p in loaded.prices if p.card_name == "GeForce GTX 1080" and p.date == date(2017, 3, 1)]
    assert [(p.amount, p.kind, p.market) for p in cut] == [(499.0, "purchase", "msrp")]
    assert cut[0].source_url.startswith("https://nvidianews.nvidia.com/")
    launch = [p for p in loaded.prices if p.source.startswith("launch MSRP")]
    assert launch and all((p.kind, p.market, p.condition) == ("purchase", "msrp", "new") for p in launch)


def test_bad_bundled_price_rows_name_line_and_field(tmp_path: Path) -> None:
    data = _data_copy(
        tmp_path,
        "GeForce RTX 4090,-5,USD,2026-05-01,new,purchase,retail,tpu\n"
        "GeForce RTX 4090,5,USD,2026-05-01,new,rent_hour,retail,nowhere\n",
    )
    with pytest.raises(CatalogDataError) as caught:
        load_bundled(data)
    assert caught.value.problems == (
        "line 2: amount: '-5' is not a positive amount",
        "line 3: source: unknown source key 'nowhere'; market: a rent_hour price comes from a cloud market, "
        "not 'retail'",
    )


def test_a_salvaged_rent_price_keeps_its_kind_market_and_address(db_path: Path, bundled: BundledData) -> None:
    catalog = open_catalog(db_path, bundled=bundled)
    catalog.transact(
        lambda s: add_price(
            s,
            "H100 SXM5",
            2.49,
            on=date(2026, 5, 1),
            kind="rent_hour",
            market="cloud_spot",
            source_url="https://cloud.example/p",
        )
    )
    catalog.close()
    with sqlite3.connect(db_path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'ix_prices_card_date'").fetchone()
    with open(db_path, "r+b") as file:  # a broken index: the file is rebuilt and the user's rows salvaged
        file.seek((root - 1) * page_size)
        file.write(b"\xff" * page_size)
    catalog = open_catalog(db_path, bundled=bundled)
    assert "recovering 0 of your cards and 1 of your prices" in catalog.messages[0]
    with catalog.read() as session:
        mine = [p for p in price_history(session, "H100 SXM5") if p.user_owned]
    catalog.close()
    assert [(p.amount, p.kind, p.market, p.source_url) for p in mine] == [
        (2.49, "rent_hour", "cloud_spot", "https://cloud.example/p")
    ]
