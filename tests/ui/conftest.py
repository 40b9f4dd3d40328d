"""The app in tests: temporary settings (.ini) and a temporary copy of a seeded catalog, never the user's."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot
from tests_ui_support import open_window

from advisor.catalog import open_catalog
from advisor.ui.i18n import set_language
from advisor.ui.main_window import QtMainWindow


@pytest.fixture(scope="session")
def seeded_catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("catalog") / "catalog.sqlite3"
    open_catalog(path).close()
    return path


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    settings = QSettings(str(tmp_path / "advisor.ini"), QSettings.Format.IniFormat)
    settings.setValue("language", "en")
    return settings


@pytest.fixture
def catalog_file(tmp_path: Path, seeded_catalog: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "catalog.sqlite3"
    shutil.copy(seeded_catalog, path)
    monkeypatch.setenv("ADVISOR_CATALOG", str(path))
    return path


@pytest.fixture
def window(qtbot: QtBot, settings: QSettings, catalog_file: Path) -> Iterator[QtMainWindow]:
    window = open_window(qtbot, settings, catalog_file)
    yield window
    window.runner.cancel()
    window.runner.wait()
    window.catalog.close()
    set_language("en")


def _wait_ranked(qtbot: QtBot, window: QtMainWindow) -> None:
    with qtbot.waitSignal(window.recommendations.ranked, timeout=15000):
        window.recommendations.refresh()


@pytest.fixture
def wait_ranked() -> Callable[[QtBot, QtMainWindow], None]:
    """Asks for a ranking and waits for it (it runs on a worker)."""
    return _wait_ranked
