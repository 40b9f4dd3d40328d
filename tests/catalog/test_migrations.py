"""A database made by schema version 1 opens, upgrades to the current version, and keeps the user's rows."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from advisor.catalog import find_card, open_catalog, price_history
from advisor.catalog.bundled import BundledData
from advisor.catalog.errors import NewerSchemaError
from advisor.catalog.migrations import SCHEMA_VERSION

# Version 1 as it was shipped: no devices / link columns on cards, no condition on prices.
V1_SCHEMA = """
CREATE TABLE meta (key VARCHAR(64) PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE cards (
    id INTEGER PRIMARY KEY, name VARCHAR(120) NOT NULL UNIQUE, vendor VARCHAR(16) NOT NULL,
    architecture VARCHAR(40) NOT NULL, segment VARCHAR(16) NOT NULL, launch_date DATE,
    memory_bytes INTEGER NOT NULL, memory_type VARCHAR(16) NOT NULL, bus_width_bits INTEGER,
    bandwidth_gbs FLOAT NOT NULL, fp32_tflops FLOAT NOT NULL, tf32_tflops FLOAT, fp16_tflops FLOAT,
    bf16_tflops FLOAT, fp8_tflops FLOAT, int8_tops FLOAT, tdp_w INTEGER NOT NULL, pcie_gen INTEGER,
    msrp_usd FLOAT, source TEXT NOT NULL, origin VARCHAR(8) NOT NULL);
CREATE INDEX ix_cards_vendor_segment ON cards (vendor, segment);
CREATE INDEX ix_cards_memory_bytes ON cards (memory_bytes);
CREATE TABLE aliases (
    id INTEGER PRIMARY KEY, card_id INTEGER NOT NULL REFERENCES cards (id) ON DELETE CASCADE,
    alias VARCHAR(120) NOT NULL UNIQUE, display VARCHAR(120) NOT NULL, origin VARCHAR(8) NOT NULL);
CREATE INDEX ix_aliases_card_id ON aliases (card_id);
CREATE TABLE prices (
    id INTEGER PRIMARY KEY, card_id INTEGER NOT NULL REFERENCES cards (id) ON DELETE CASCADE,
    amount FLOAT NOT NULL, currency VARCHAR(3) NOT NULL, date DATE NOT NULL, source TEXT NOT NULL,
    origin VARCHAR(8) NOT NULL);
CREATE INDEX ix_prices_card_date ON prices (card_id, date);
INSERT INTO meta VALUES ('bundled_digest', 'digest of the data shipped with version 1');
-- a bundled card the user edited (their TDP), with their own price, and a card of their own
INSERT INTO cards VALUES (1, 'GeForce RTX 3090', 'NVIDIA', 'Ampere', 'consumer', '2020-09-24', 25769803776,
    'GDDR6X', 384, 936.0, 35.6, 35.6, 71.2, 71.2, NULL, 284.7, 280, 4, 1499.0, 'edited by the user', 'user');
INSERT INTO aliases VALUES (1, 1, 'geforce rtx 3090', 'GeForce RTX 3090', 'bundled');
INSERT INTO aliases VALUES (2, 1, 'my 3090', 'my 3090', 'user');
INSERT INTO prices VALUES (1, 1, 750.0, 'USD', '2023-05-01', 'eBay', 'user');
INSERT INTO cards VALUES (2, 'Lab Card', 'AMD', 'X', 'workstation', NULL, 17179869184, 'HBM2', NULL, 1000.0,
    10.0, NULL, NULL, NULL, NULL, NULL, 300, NULL, NULL, 'our lab', 'user');
INSERT INTO aliases VALUES (3, 2, 'lab card', 'Lab Card', 'user');
PRAGMA user_version = 1;
"""


def _v1_file(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(V1_SCHEMA)
    return path


def _columns(path: Path) -> dict[str, list[str]]:
    with sqlite3.connect(path) as conn:
        return {
            t: sorted(r[1] for r in conn.execute(f"PRAGMA table_info({t})"))
            for t in ("cards", "aliases", "prices", "meta")
        }


def test_v1_database_upgrades_and_keeps_user_rows(tmp_path: Path, bundled: BundledData) -> None:
    catalog = open_catalog(_v1_file(tmp_path / "v1.sqlite3"), bundled=bundled)
    assert catalog.messages == [f"catalog {tmp_path / 'v1.sqlite3'} upgraded from schema version 1 to {SCHEMA_VERSION}"]
    with catalog.read() as session:
        mine = find_card(session, "my 3090")
        assert (mine.name, mine.tdp_w, mine.user_owned) == ("GeForce RTX 3090", 280, True)  # bundled says 350
        assert mine.link_kind == "none" and mine.devices == 1  # user row: new columns take their defaults
        prices = price_history(session, "RTX 3090")
        # The bundled launch MSRP (the oldest price) joins the user's own price, which v1 stored without a
        # condition ("new"); the bundled snapshot's later street, used and rent prices follow.
        assert (prices[0].amount, prices[0].condition, prices[0].user_owned) == (1499.0, "new", False)
        assert [(p.amount, p.condition) for p in prices if p.user_owned] == [(750.0, "new")]
        assert find_card(session, "lab card").memory_bytes == 16 * 2**30
        # Bundled rows were re-seeded, with the link data version 2 added.
        assert find_card(session, "2080 Ti").link_bandwidth_gbs == 100
    with sqlite3.connect(tmp_path / "v1.sqlite3") as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def test_upgraded_schema_has_the_same_columns_as_a_new_one(
    tmp_path: Path, seeded_file: Path, bundled: BundledData
) -> None:
    upgraded = _v1_file(tmp_path / "v1.sqlite3")
    open_catalog(upgraded, bundled=bundled).close()
    assert _columns(upgraded) == _columns(seeded_file)


def test_a_newer_schema_is_refused_not_damaged(tmp_path: Path, bundled: BundledData) -> None:
    path = _v1_file(tmp_path / "future.sqlite3")
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(NewerSchemaError, match="newer than this advisor knows"):
        open_catalog(path, bundled=bundled)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM cards").fetchone() == (2,)
