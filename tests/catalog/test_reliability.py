"""Reliability with a real database file and real processes: concurrent writers, a killed writer, damaged
files, and an all-or-nothing CSV import."""

from __future__ import annotations

import errno
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.catalog import (
    CardSpec,
    Catalog,
    CatalogDataError,
    add_card,
    add_price,
    edit_card,
    find_card,
    list_cards,
    open_catalog,
    price_history,
)
from advisor.catalog.bundled import BundledData
from advisor.catalog.csvio import read_cards
from advisor.catalog.errors import CatalogBusyError, CatalogFileError
from tests.catalog.readonly import read_only, reads_and_refuses_writes

REPO = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).with_name("writer.py")
COUNTER = CardSpec(
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
)


def _writer(db: Path, mode: str, count: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(db), mode, str(count)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _with_counter(db_path: Path, bundled: BundledData) -> None:
    catalog = open_catalog(db_path, bundled=bundled)
    catalog.transact(lambda s: add_card(s, COUNTER))
    catalog.close()


# Two writers at once, on SQLite and PostgreSQL alike: tests/catalog/test_backends.py.


def test_a_killed_writer_leaves_every_committed_edit(db_path: Path, bundled: BundledData) -> None:
    _with_counter(db_path, bundled)
    writer = _writer(db_path, "prices", 100_000)
    assert writer.stdout is not None
    committed = [int(writer.stdout.readline()) for _ in range(30)]
    os.kill(writer.pid, signal.SIGKILL)  # mid-loop: very likely inside a transaction
    writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    catalog = open_catalog(db_path, bundled=bundled)
    assert catalog.messages == []  # not damaged: nothing to recover
    with catalog.read() as session:
        amounts = {int(p.amount) for p in price_history(session, "Counter")}
    assert set(committed) <= amounts
    assert amounts == set(range(1, max(amounts) + 1))  # no gaps: whole transactions or nothing


def _user_rows(catalog_path: Path, bundled: BundledData) -> None:
    catalog = open_catalog(catalog_path, bundled=bundled)
    catalog.transact(lambda s: add_card(s, COUNTER))
    catalog.transact(lambda s: add_price(s, "Counter", 123.0, condition="used"))
    catalog.transact(lambda s: add_price(s, "4090", 1450.0, condition="used"))
    catalog.close()


def _assert_rebuilt(path: Path, bundled: BundledData) -> list[str]:
    catalog = open_catalog(path, bundled=bundled)
    assert len(catalog.messages) == 1 and "damaged" in catalog.messages[0]
    backups = [p for p in path.parent.glob(path.name + ".damaged-*") if not p.name.endswith(("-wal", "-shm"))]
    assert len(backups) == 1 and backups[0].name in catalog.messages[0]
    with catalog.read() as session:
        assert len([c for c in list_cards(session) if not c.user_owned]) == len(bundled.cards)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    return catalog.messages


# A file that is not SQLite at all is someone else's, refused and left alone: tests/catalog/test_ownership.py.


def test_a_truncated_file_is_detected_and_rebuilt(db_path: Path, bundled: BundledData) -> None:
    _user_rows(db_path, bundled)
    with sqlite3.connect(db_path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = db_path.stat().st_size
    with open(db_path, "r+b") as file:
        file.truncate(size // 2)
    messages = _assert_rebuilt(db_path, bundled)
    assert "recovering" in messages[0]


def test_a_broken_index_is_detected_and_user_rows_are_salvaged(db_path: Path, bundled: BundledData) -> None:
    _user_rows(db_path, bundled)
    with sqlite3.connect(db_path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        roots = [
            r
            for (r,) in conn.execute(
                "SELECT rootpage FROM sqlite_master WHERE name IN ('ix_cards_memory_bytes', 'ix_prices_card_date')"
            )
        ]
    with open(db_path, "r+b") as file:  # overwrite the index pages with garbage
        for root in roots:
            file.seek((root - 1) * page_size)
            file.write(b"\xff" * page_size)
    messages = _assert_rebuilt(db_path, bundled)
    assert "recovering 1 of your cards and 2 of your prices" in messages[0]
    with open_catalog(db_path, bundled=bundled).read() as session:
        assert find_card(session, "Counter").user_owned
        used = [
            (p.card_name, p.amount) for p in price_history(session, "4090") if p.condition == "used" and p.user_owned
        ]
        assert used == [("GeForce RTX 4090", 1450.0)]


BAD_CSV = """name,vendor,architecture,segment,memory_gb,memory_type,bandwidth_gbs,fp32_tflops,tdp_w,source
Good One,NVIDIA,X,consumer,8,GDDR6,256,10,150,me
Bad Memory,NVIDIA,X,consumer,lots,GDDR6,256,10,150,me
Bad Vendor,Matrox,X,consumer,8,GDDR6,256,10,150,me
"Multi
Line",NVIDIA,X,consumer,8,GDDR6,256,10,150,me
Good One,NVIDIA,X,consumer,8,GDDR6,256,10,150,me
No Power,NVIDIA,X,consumer,8,GDDR6,256,10,,me
"""


def test_a_bad_csv_reports_every_bad_row_with_its_line() -> None:
    with pytest.raises(CatalogDataError) as caught:
        read_cards(BAD_CSV, "cards.csv")
    problems = caught.value.problems
    # Lines: 1 header, 2 good, 3 memory, 4 vendor, 5-6 a good quoted two-line name, 7 duplicate, 8 no tdp.
    assert [p.split(":")[0] for p in problems] == ["line 3", "line 4", "line 7", "line 8"]
    assert "memory_gb" in problems[0] and "vendor" in problems[1] and "Good One" in problems[2]
    assert "tdp_w is missing" in problems[3]
    assert str(caught.value).startswith("cards.csv: 4 bad rows, nothing imported")


# --- A busy or unusable path is reported, never set aside (issue 16, items 3-5 and 9) ----------------------


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    # 0.2 s instead of 10 s so the waiting part is short; the behaviour under test does not depend on it.
    monkeypatch.setattr("advisor.catalog.engine.BUSY_TIMEOUT_MS", 200)


def _backups(path: Path) -> list[Path]:
    return list(path.parent.glob(path.name + ".damaged-*"))


def test_a_database_locked_by_another_program_is_busy_not_damaged(
    db_path: Path, bundled: BundledData, short_busy_timeout: None
) -> None:
    before = db_path.read_bytes()
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")  # keeps even readers out, as a rogue tool could
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE cards SET tdp_w = tdp_w WHERE 0")
    try:
        with pytest.raises(CatalogBusyError, match="is busy"):
            open_catalog(db_path, bundled=bundled)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _backups(db_path) == [] and db_path.read_bytes() == before


def test_reading_does_not_wait_for_a_writer(db_path: Path, bundled: BundledData, short_busy_timeout: None) -> None:
    open_catalog(db_path, bundled=bundled).close()
    writer = sqlite3.connect(db_path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # an import in progress holds the write lock
    writer.execute("UPDATE cards SET tdp_w = tdp_w + 1")
    try:
        catalog = open_catalog(db_path, bundled=bundled)  # would be busy if opening took the write lock
        with catalog.read() as session:
            assert len(list_cards(session)) == len(bundled.cards)
        assert catalog.messages == []
        catalog.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def _unusable_paths(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "a-folder"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    plain = tmp_path / "plain.txt"
    plain.write_text("mine")
    return {
        "folder": folder,
        "device": Path("/dev/null"),
        "under a file": plain / "catalog.sqlite3",
        "long name": tmp_path / ("c" * 256),
    }


@pytest.mark.parametrize("kind", ["folder", "device", "under a file", "long name"])
def test_an_unusable_catalog_path_is_one_error_and_nothing_is_renamed(
    tmp_path: Path, bundled: BundledData, kind: str
) -> None:
    path = _unusable_paths(tmp_path)[kind]
    listing_before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(CatalogFileError) as caught:
        open_catalog(path, bundled=bundled)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)
    assert sorted(p.name for p in tmp_path.rglob("*")) == listing_before
    assert (tmp_path / "a-folder" / "keep.txt").read_text() == "mine"


def test_recovery_reads_past_a_broken_table_page(db_path: Path, bundled: BundledData) -> None:
    _user_rows(db_path, bundled)  # the user's card is the newest row, on the table's last page
    with sqlite3.connect(db_path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        leaves = [
            p
            for (p,) in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = 'cards' AND pagetype = 'leaf' ORDER BY pageno"
            )
        ]
    assert len(leaves) >= 2  # 150 bundled cards fill several pages
    with open(db_path, "r+b") as file:  # the first leaf (early bundled cards) becomes garbage
        file.seek((leaves[0] - 1) * page_size)
        file.write(b"\x07" * page_size)
    messages = _assert_rebuilt(db_path, bundled)
    assert "recovering 1 of your cards and 2 of your prices" in messages[0]


def test_export_on_a_full_disk_keeps_the_old_file(
    tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from advisor import cli
    from advisor.core import files

    old = tmp_path / "cards.csv"
    old.write_text("yesterday's export")

    def full(stream: object, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "write_chunks", full)
    assert cli.main(["catalog", "--catalog", str(db_path), "export", str(old)]) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert old.read_text() == "yesterday's export"
    assert [name for name in os.listdir(tmp_path) if name.startswith(".advisor-")] == []  # no temporary left


def test_editing_again_does_not_grow_the_source(catalog: Catalog) -> None:
    first = catalog.transact(lambda s: edit_card(s, "4090", tdp_w=400))
    again = [catalog.transact(lambda s, w=w: edit_card(s, "4090", tdp_w=w)) for w in (410, 420, 430)]
    second = catalog.transact(lambda s: edit_card(s, "4090", fp32_tflops=90.0))
    assert {len(card.source) for card in again} == {len(first.source)}  # same figures edited: same text
    assert "(tdp_w, fp32_tflops)" in second.source and second.source.count("edited by the user") == 1
    assert second.source.endswith(first.source.split("other figures: ", 1)[1])  # the original source kept


def test_a_write_behind_a_stuck_writer_says_busy_and_changes_nothing(
    db_path: Path, bundled: BundledData, short_busy_timeout: None
) -> None:
    catalog = open_catalog(db_path, bundled=bundled)
    writer = sqlite3.connect(db_path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another program's transaction that does not end
    try:
        with pytest.raises(CatalogBusyError, match="nothing was changed"):
            catalog.transact(lambda s: add_price(s, "4090", 999.0))
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    with catalog.read() as session:
        assert 999.0 not in {p.amount for p in price_history(session, "4090")}
    assert _backups(db_path) == []


def test_a_read_only_catalog_still_reads_and_a_write_is_one_error(db_path: Path, bundled: BundledData) -> None:
    open_catalog(db_path, bundled=bundled).close()
    before = db_path.read_bytes()
    with read_only(db_path):
        reads_and_refuses_writes(db_path, bundled)
    assert db_path.read_bytes() == before and _backups(db_path) == []
