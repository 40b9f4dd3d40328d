"""The catalog never takes over a file it did not make (issue 29, item 4): a file that is not SQLite, another
program's SQLite database, or a damaged SQLite file without the catalog's marker is refused in one line and
left byte for byte as it was; a read-only catalog (file or folder) is still read; a damaged catalog of our
own is repaired, and says so once."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from advisor import cli
from advisor.catalog import add_price, list_cards, open_catalog
from advisor.catalog.bundled import BundledData
from advisor.catalog.errors import CatalogBusyError, CatalogFileError, ForeignFileError
from advisor.catalog.identity import APPLICATION_ID
from tests.catalog.readonly import read_only, reads_and_refuses_writes

REPO = Path(__file__).resolve().parents[2]


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _journal_mode(path: Path) -> str:
    with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as conn:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


@pytest.mark.parametrize("mode", [0o644, 0o444])
def test_a_file_that_is_not_sqlite_is_refused_and_left_alone(tmp_path: Path, bundled: BundledData, mode: int) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"my notes, not SQLite at all\n" * 1000)
    notes.chmod(mode)
    before = _snapshot(tmp_path)
    with pytest.raises(ForeignFileError, match="is not an SQLite database") as caught:
        open_catalog(notes, bundled=bundled)
    assert "\n" not in str(caught.value) and str(notes) in str(caught.value)
    assert _snapshot(tmp_path) == before  # not renamed to *.damaged-<time>, nothing created beside it
    assert notes.stat().st_mode & 0o777 == mode


def test_the_cli_refuses_a_foreign_file_with_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    assert cli.main(["catalog", "--catalog", str(notes), "list"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing was changed" in err and "Traceback" not in err
    assert notes.read_text() == "hello\n" and sorted(os.listdir(tmp_path)) == ["notes.txt"]


def _other_program_db(path: Path) -> None:
    with sqlite3.connect(path) as conn:  # rollback journal (the default), as most programs leave it
        conn.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
        conn.executemany("INSERT INTO contacts VALUES (?, ?)", [(f"n{i}", "0" * 200) for i in range(200)])
    assert _journal_mode(path) == "delete"


def test_another_programs_sqlite_database_gets_no_tables_and_stays_out_of_wal(
    tmp_path: Path, bundled: BundledData
) -> None:
    other = tmp_path / "contacts.db"
    _other_program_db(other)
    before = _snapshot(tmp_path)
    with pytest.raises(ForeignFileError, match=r"another program's SQLite database .*contacts"):
        open_catalog(other, bundled=bundled)
    assert _snapshot(tmp_path) == before
    assert _journal_mode(other) == "delete"


def test_a_damaged_sqlite_file_without_the_marker_is_not_renamed(tmp_path: Path, bundled: BundledData) -> None:
    other = tmp_path / "contacts.db"
    _other_program_db(other)
    with open(other, "r+b") as file:  # page 1 past the 100-byte header (the schema) becomes garbage
        file.seek(100)
        file.write(b"\xff" * (4096 - 100))
    before = _snapshot(tmp_path)
    with pytest.raises(ForeignFileError, match=r"damaged SQLite file .* without advisor's catalog marker"):
        open_catalog(other, bundled=bundled)
    assert _snapshot(tmp_path) == before


def _application_id(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("PRAGMA application_id").fetchone()[0])


def test_a_new_catalog_carries_the_marker(tmp_path: Path, bundled: BundledData) -> None:
    path = tmp_path / "fresh.sqlite3"
    open_catalog(path, bundled=bundled).close()
    assert _application_id(path) == APPLICATION_ID == 0x41445643  # "ADVC"
    with open(path, "rb") as file:
        assert file.read(100)[68:72] == b"ADVC"  # where the SQLite file format keeps it


def test_a_catalog_from_before_the_marker_is_recognised_and_marked(db_path: Path, bundled: BundledData) -> None:
    with sqlite3.connect(db_path) as conn:
        conn.execute("PRAGMA application_id = 0")  # as every catalog was before the marker
    catalog = open_catalog(db_path, bundled=bundled)
    with catalog.read() as session:
        assert len(list_cards(session)) == len(bundled.cards)
    catalog.close()
    assert catalog.messages == [] and _application_id(db_path) == APPLICATION_ID


def test_a_catalog_in_a_read_only_folder_is_listed_and_a_write_is_one_error(
    tmp_path: Path, db_path: Path, bundled: BundledData
) -> None:
    before = _snapshot(tmp_path)
    with read_only(tmp_path):
        reads_and_refuses_writes(db_path, bundled)
        with pytest.raises(CatalogFileError, match="read-only"):  # and no new catalog can be made there
            open_catalog(tmp_path / "new.sqlite3", bundled=bundled)
    assert _snapshot(tmp_path) == before  # no -wal or -shm left behind, nothing changed


def test_a_damaged_catalog_of_ours_is_rebuilt_and_the_notice_is_printed_once(db_path: Path) -> None:
    with open(db_path, "r+b") as file:
        file.truncate(db_path.stat().st_size // 2)  # page 1, with the marker, is still there
    # A real process: pytest captures log records, which is how the second copy (a logged warning) hid.
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "advisor", "catalog", "--catalog", str(db_path), "list", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("was damaged") == 1, result.stderr
    backups = [p for p in db_path.parent.glob(db_path.name + ".damaged-*") if not p.name.endswith(("-wal", "-shm"))]
    assert len(backups) == 1


def test_the_busy_message_states_the_real_wait(
    db_path: Path, bundled: BundledData, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("advisor.catalog.engine.BUSY_TIMEOUT_MS", 200)
    catalog = open_catalog(db_path, bundled=bundled)
    writer = sqlite3.connect(db_path, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    start = time.monotonic()
    try:
        with pytest.raises(CatalogBusyError) as caught:
            catalog.transact(lambda s: add_price(s, "4090", 999.0))  # 3 attempts of 0.2 s each
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    waited = time.monotonic() - start
    stated = caught.value.waited_s
    # 3 x 0.2 = 0.6 s at least; it used to say "over 0.2 s" (the one timeout) whatever the wait was.
    assert 0.6 <= stated <= waited and f"waited {stated:.1f} s" in str(caught.value)


def test_a_server_database_holding_another_programs_tables_is_refused(postgres: str, bundled: BundledData) -> None:
    import psycopg

    from tests.pg_server import fresh_database

    url = fresh_database(postgres, "t_another_program")
    conninfo = postgres.replace("dbname=postgres", "dbname=t_another_program")
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("CREATE TABLE contacts (name TEXT)")
    with pytest.raises(ForeignFileError, match=r"holds other tables \(contacts\)"):
        open_catalog(url, bundled=bundled)
    with psycopg.connect(conninfo) as conn:
        tables = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    assert tables == [("contacts",)]  # no cards, prices or meta added


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("postgresql+pg8000://u@db.example.org/advisor", "the database driver pg8000 is not installed"),
        ("postgresql+psycopg://u@db.example.org:notaport/advisor", "not a usable database URL"),
        ("postgresql+psycopg://u@[::1/advisor", "not a usable database URL"),
    ],
)
def test_a_catalog_url_with_a_missing_driver_or_a_malformed_host_is_one_line(
    url: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if "pg8000" in url and importlib.util.find_spec("pg8000") is not None:
        pytest.skip("pg8000 is installed here")
    assert cli.main(["catalog", "--catalog", url, "list"]) == 2  # it was a ModuleNotFoundError / ValueError
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_read_only_catalog_with_older_bundled_data_is_read_as_it_is(db_path: Path, bundled: BundledData) -> None:
    newer = dataclasses.replace(bundled, digest="the data of a newer advisor")
    with read_only(db_path):
        catalog = open_catalog(db_path, bundled=newer)  # re-seeding would write: it used to fail here
        with catalog.read() as session:
            assert len(list_cards(session)) == len(bundled.cards)
        catalog.close()
    assert len(catalog.messages) == 1 and "is read-only" in catalog.messages[0]
