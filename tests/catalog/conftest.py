"""Catalog test fixtures. Every test gets its own database file under tmp_path, and ADVISOR_CATALOG points
there too, so no test can touch the real user data folder."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from advisor.catalog import Catalog, open_catalog
from advisor.catalog.bundled import BundledData, load_bundled


@pytest.fixture(autouse=True)
def _private_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ADVISOR_CATALOG", str(tmp_path / "env-catalog.sqlite3"))
    monkeypatch.setattr("platformdirs.user_data_dir", lambda *a, **k: str(tmp_path / "user-data"))


@pytest.fixture(scope="session")
def bundled() -> BundledData:
    return load_bundled()


@pytest.fixture(scope="session")
def seeded_file(tmp_path_factory: pytest.TempPathFactory, bundled: BundledData) -> Path:
    """One seeded database per test session; tests copy it instead of seeding 150 cards each time."""
    path = tmp_path_factory.mktemp("template") / "catalog.sqlite3"
    open_catalog(path, bundled=bundled).close()
    return path


@pytest.fixture
def db_path(tmp_path: Path, seeded_file: Path) -> Path:
    path = tmp_path / "catalog.sqlite3"
    shutil.copyfile(seeded_file, path)
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def catalog(request: pytest.FixtureRequest, bundled: BundledData) -> Iterator[Catalog]:
    """A seeded catalog on each backend: a copy of the seeded SQLite file, or of a seeded PostgreSQL database."""
    if request.param == "sqlite":
        location = str(request.getfixturevalue("db_path"))
    else:
        from tests.pg_server import fresh_database

        template = request.getfixturevalue("pg_seeded")
        location = fresh_database(request.getfixturevalue("postgres"), _db_name(request), template)
    opened = open_catalog(location, bundled=bundled)
    yield opened
    opened.close()


def _db_name(request: pytest.FixtureRequest) -> str:
    return f"t_{abs(hash(request.node.nodeid)):x}"


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A real PostgreSQL server for this test session (tests/pg_server.py); its libpq connection string."""
    from tests.pg_server import postgres_server

    with postgres_server() as conninfo:
        yield conninfo


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path, seeded_file: Path) -> str:
    """Where a catalog lives on each backend: a fresh seeded SQLite file, or an empty PostgreSQL database
    (seeded when first opened, as a team's new server would be)."""
    if request.param == "sqlite":
        path = tmp_path / "catalog.sqlite3"
        shutil.copyfile(seeded_file, path)
        return str(path)
    from tests.pg_server import fresh_database

    return fresh_database(request.getfixturevalue("postgres"), _db_name(request))


@pytest.fixture(scope="session")
def pg_seeded(postgres: str, bundled: BundledData) -> str:
    """A seeded PostgreSQL database that tests copy (CREATE DATABASE ... TEMPLATE) instead of seeding each."""
    from tests.pg_server import fresh_database

    open_catalog(fresh_database(postgres, "seeded"), bundled=bundled).close()
    return "seeded"
