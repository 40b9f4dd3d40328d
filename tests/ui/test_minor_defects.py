"""Issue 27's minor defects, each as the walk found it."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from advisor.ui.main_window import QtMainWindow

Ranked = Callable[[QtBot, QtMainWindow], None]


def test_the_catalog_starts_sorted_a_to_z(qtbot: QtBot, window: QtMainWindow) -> None:
    editor = window.catalog_editor
    qtbot.waitUntil(lambda: editor.proxy.rowCount() > 10, timeout=10000)
    names = [editor.proxy.index(r, 0).data() for r in range(editor.proxy.rowCount())]
    assert names == sorted(names, key=str.lower) or names == sorted(names)  # Z to A before
    assert editor.table.horizontalHeader().sortIndicatorOrder() == Qt.SortOrder.AscendingOrder


def test_file_new_leaves_no_chart_and_no_ranking(qtbot: QtBot, window: QtMainWindow, wait_ranked: Ranked) -> None:
    wait_ranked(qtbot, window)
    assert window.breakdown.category.canvas is not None and window.recommendations.model.entries
    window.new_network()
    qtbot.waitUntil(lambda: window.state.result is None, timeout=5000)
    qtbot.waitUntil(lambda: not window.recommendations.model.entries, timeout=5000)
    assert all(chart.canvas is None for chart in (window.breakdown.category, window.breakdown.layer_chart,
                                                  window.breakdown.timeline, window.breakdown.batch_chart))
    assert "No estimate yet" in window.verdict.text()


def test_a_job_size_in_scientific_notation_is_that_many_samples(qtbot: QtBot, window: QtMainWindow) -> None:
    box = window.recommendations.money.samples
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "1.2e8")
    box.interpretText()
    assert box.value() == 120_000_000  # 1.2 x 10^8, not 1
    assert window.recommendations.money.options("new").samples == 120_000_000


def test_one_card_is_not_up_to_1_cards(window: QtMainWindow) -> None:
    box = window.recommendations.max_gpus
    labels = [box.itemText(i) for i in range(box.count())]
    assert labels[0] == "one card" and "up to 1 cards" not in labels and labels[-1] == "up to 8 cards"
