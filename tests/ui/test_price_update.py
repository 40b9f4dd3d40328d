"""The catalog tab offers the price update: the button fetches a feed from a real HTTP server on 127.0.0.1
(tests/catalog/test_update.py's), says what changed, and the new price shows with its age."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest
from PySide6.QtWidgets import QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from advisor.catalog.present import age_text
from advisor.ui.main_window import QtMainWindow
from tests.catalog.test_update import HEADER, NEW, Served, feed, serving


@pytest.fixture
def served() -> Iterator[Served]:
    with serving() as it:
        yield it


def test_the_update_button_fetches_the_feed_and_reports(
    qtbot: QtBot, window: QtMainWindow, served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = window.catalog_editor
    qtbot.waitUntil(lambda: editor.proxy.rowCount() > 100, timeout=5000)
    served.content = feed(HEADER + NEW)
    monkeypatch.setenv("ADVISOR_PRICES_URL", served.url)
    button = editor.findChild(QPushButton, "update_prices")
    assert button is not None
    button.click()
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "prices_updated") is not None, timeout=10000)
    box = window.findChild(QMessageBox, "prices_updated")
    assert box is not None and box.text().startswith(f"prices updated from {served.url} (data of 2026-11-30): 1 added")
    editor.select("GeForce RTX 4090")
    qtbot.waitUntil(lambda: editor.title.text() == "<b>GeForce RTX 4090</b>", timeout=10000)
    lines = [editor.prices.item(i).text() for i in range(editor.prices.count())]
    assert [t for t in lines if t.startswith("2026-11-20")] == [
        f"2026-11-20  1,499.00 USD  new · shop · {age_text(date(2026, 11, 20), date.today())} old"
    ], lines
