"""The model chooser's search field keeps the zoo names library.search matches; clearing it brings all back."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from advisor.core import zoo
from advisor.ui.main_window import QtMainWindow


def items(window: QtMainWindow) -> list[str]:
    box = window.model_panel.zoo
    return [box.itemText(i) for i in range(box.count()) if box.itemText(i)]  # separators have no text


def test_search_filters_the_chooser(qtbot: QtBot, window: QtMainWindow) -> None:
    panel = window.model_panel
    everything = items(window)
    assert len(everything) == len(zoo.zoo_names())
    qtbot.keyClicks(panel.search, "qwen3 moe")
    assert items(window) == ["qwen3-235b-a22b-2507", "qwen3-30b-a3b", "qwen3-coder-480b-a35b"]
    panel.load_zoo(panel.zoo.currentText())
    assert window.state.draft.source == "zoo:qwen3-235b-a22b-2507"
    panel.search.clear()
    assert items(window) == everything
