"""The catalog tab draws the selected card's price history."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from advisor.ui.main_window import QtMainWindow


def test_selecting_a_card_draws_its_price_history(qtbot: QtBot, window: QtMainWindow) -> None:
    editor = window.catalog_editor
    qtbot.waitUntil(lambda: editor.proxy.rowCount() > 100, timeout=5000)
    editor.select("GeForce GTX 1080")  # launch MSRP 599 (2016) and the 499 cut of 2017
    qtbot.waitUntil(
        lambda: editor.price_chart.figure is not None and bool(editor.price_chart.figure.axes), timeout=5000
    )
    figure = editor.price_chart.figure
    assert figure is not None and figure.axes[0].get_title() == "Price history: GeForce GTX 1080"
    assert 499 in list(figure.axes[0].get_lines()[0].get_ydata())
