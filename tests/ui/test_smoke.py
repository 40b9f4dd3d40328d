from pytestqt.qtbot import QtBot

from advisor.ui.main_window import QtMainWindow


def test_window_opens(qtbot: QtBot, window: QtMainWindow) -> None:
    assert window.state.result is not None
    assert window.tabs.count() == 5  # breakdown, recommendations, catalog, live GPUs, choose the model
