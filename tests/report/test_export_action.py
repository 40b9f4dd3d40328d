"""File > Export PDF report… in the app: written on a worker, the window stays usable, errors in a dialog."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from report_support import pdf_text, words

from advisor.ui.i18n import set_language
from advisor.ui.main_window import QtMainWindow

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))
from tests_ui_support import open_window


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path, catalog_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[QtMainWindow]:
    settings = QSettings(str(tmp_path / "advisor.ini"), QSettings.Format.IniFormat)
    settings.setValue("language", "en")
    catalog = tmp_path / "catalog.sqlite3"
    shutil.copy(catalog_path, catalog)
    monkeypatch.setenv("ADVISOR_CATALOG", str(catalog))
    window = open_window(qtbot, settings, catalog)
    qtbot.waitUntil(lambda: window.state.result is not None, timeout=10000)
    yield window
    window.runner.cancel()
    window.runner.wait()
    window.catalog.close()
    set_language("en")


def test_the_file_menu_has_the_export_action(window: QtMainWindow) -> None:
    file_menu = window.menuBar().actions()[0].menu()
    texts = [action.text() for action in file_menu.actions()]  # type: ignore[union-attr]
    assert "Export PDF report…" in texts


def test_export_writes_the_report_in_the_apps_language(qtbot: QtBot, window: QtMainWindow, tmp_path: Path) -> None:
    window.switch_language("zh_CN")
    out = tmp_path / "report.pdf"
    window.export_pdf(str(out))
    assert window.runner.running("report")  # on a worker: the window is not blocked
    qtbot.waitUntil(lambda: not window.runner.running("report"), timeout=30000)
    text = words(pdf_text(out))
    assert "推荐显卡" in text and "NVIDIA H200" in text  # the replayed local GPU is in the snapshot
    assert window.state.draft.name in text


def test_export_to_an_unwritable_place_shows_a_dialog(qtbot: QtBot, window: QtMainWindow) -> None:
    window.export_pdf("/proc/report.pdf")
    qtbot.waitUntil(lambda: not window.runner.running("report"), timeout=30000)
    boxes = [b for b in window.findChildren(QMessageBox) if b.objectName() == "error_dialog" and b.isVisible()]
    assert boxes and "cannot write /proc/report.pdf" in boxes[0].text()
