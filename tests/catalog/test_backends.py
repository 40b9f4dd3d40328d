"""The catalog on both backends, SQLite files and a real PostgreSQL server: the same code, migrations,
concurrency rule and answers (the server is started by the `postgres` fixture in conftest.py)."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest
from sqlalchemy import update

from advisor.catalog import CardSpec, add_card, add_price, find_card, open_catalog, price_history
from advisor.catalog.bundled import BundledData, bundled_dir
from advisor.catalog.errors import AmbiguousCardError, NewerSchemaError
from advisor.catalog.migrations import SCHEMA_VERSION, schema_version
from advisor.catalog.orm import Meta
from advisor.catalog.price_import import import_prices, read_prices
from advisor.core import zoo
from advisor.core.workload import Workload
from advisor.recommend.prepare import prepare_graph
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.service import CardFilter, recommend
from tests.catalog.test_reliability import _writer

MINE = CardSpec(
    name="Lab Card",
    vendor="AMD",
    architecture="X",
    segment="workstation",
    memory_bytes=96 * 2**30,
    memory_type="HBM3",
    bandwidth_gbs=1000.0,
    fp32_tflops=10.0,
    tdp_w=300,
    source="our lab",
)


def test_seeded_catalog_finds_cards_by_any_name(location: str, bundled: BundledData) -> None:
    catalog = open_catalog(location, bundled=bundled)
    with catalog.read() as session:
        assert schema_version(session.connection()) == SCHEMA_VERSION
        assert find_card(session, "sxm4 a100 80gb").memory_bytes == 80 * 2**30  # 85,899,345,920: a BIGINT
        with pytest.raises(AmbiguousCardError):
            find_card(session, "pcie a100")
    catalog.close()


def test_user_rows_survive_a_data_update(location: str, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(bundled_dir(), data)
    catalog = open_catalog(location, data_dir=data)
    catalog.transact(lambda s: add_card(s, MINE))
    catalog.transact(lambda s: add_price(s, "Lab Card", 9000.0, on=date(2026, 1, 2)))
    catalog.transact(lambda s: add_price(s, "4090", 1650.0, on=date(2026, 1, 3), condition="used"))
    catalog.close()
    with (data / "prices.csv").open("a", encoding="utf-8") as out:  # the data update: one more bundled price
        out.write("GeForce RTX 4090,1999,USD,2026-02-01,new,purchase,msrp,nv-gdc2017\n")
    catalog = open_catalog(location, data_dir=data)
    with catalog.read() as session:
        assert [p.amount for p in price_history(session, "Lab Card")] == [9000.0]
        history = price_history(session, "GeForce RTX 4090")
        assert [(p.amount, p.condition) for p in history if p.user_owned] == [(1650.0, "used")]
        assert any(p.amount == 1999.0 and not p.user_owned for p in history)
        assert find_card(session, "Lab Card").user_owned
    catalog.close()


def test_import_prices_and_the_same_ranking(location: str, bundled: BundledData) -> None:
    catalog = open_catalog(location, bundled=bundled)
    rows = read_prices(
        "card,amount,currency,date,condition,kind,market,source\n"
        "rtx 4090,1700,USD,2026-05-01,new,purchase,retail,a shop\n"
        "a100 pcie 80gb,1.5,USD,2026-05-01,new,rent_hour,cloud_on_demand,a cloud\n",
        "mine.csv",
    )
    summary = catalog.transact(lambda s: import_prices(s, rows, "mine.csv"))
    assert (summary.added, summary.unchanged) == (2, 0)
    job = prepare_graph(zoo.build("resnet18"), Workload("train", 64, "fp32", "adam"))
    with catalog.read() as session:
        entries = recommend(session, job, CardFilter(vendor="NVIDIA", segment="consumer"), RankingOptions(max_gpus=1))
    catalog.close()
    best = next(e for e in entries if e.card == "GeForce RTX 4090")
    assert best.price_usd == 1700.0 and best.price_date == date(2026, 5, 1)


def test_a_newer_schema_is_refused(location: str, bundled: BundledData) -> None:
    catalog = open_catalog(location, bundled=bundled)
    if location.startswith("postgresql"):
        catalog.transact(lambda s: s.execute(update(Meta).where(Meta.key == "schema_version").values(value="99")))
    else:
        catalog.transact(lambda s: s.connection().exec_driver_sql("PRAGMA user_version = 99"))
    catalog.close()
    with pytest.raises(NewerSchemaError, match="99 is newer"):
        open_catalog(location, bundled=bundled)


def test_two_writers_at_once_lose_no_update(location: str, bundled: BundledData) -> None:
    catalog = open_catalog(location, bundled=bundled)
    catalog.transact(
        lambda s: add_card(
            s,
            CardSpec(
                name="Counter",
                vendor="NVIDIA",
                architecture="test",
                segment="consumer",
                memory_bytes=2**30,
                memory_type="GDDR6",
                bandwidth_gbs=100.0,
                fp32_tflops=1.0,
                tdp_w=1,
                source="test",
            ),
        )
    )
    catalog.close()
    per_process = 25
    writers = [_writer(location, "increment", per_process) for _ in range(2)]  # type: ignore[arg-type]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    catalog = open_catalog(location, bundled=bundled)
    with catalog.read() as session:
        # read-modify-write increments: start 1, plus 2 processes x 25 = 51 if none was lost
        assert find_card(session, "Counter").tdp_w == 1 + 2 * per_process
        assert len(price_history(session, "Counter")) == 2 * per_process
    catalog.close()
