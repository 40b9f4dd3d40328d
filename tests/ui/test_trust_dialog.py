"""A pickled model file is opened only after the user says, in the app, that they trust it; the app never
tells a GUI user to pass a command-line flag (issue 27)."""

from __future__ import annotations

from pathlib import Path

import torch
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot
from tests_ui_support import dialogs

from advisor.ui.main_window import QtMainWindow


def _trust_dialogs(window: QtMainWindow) -> list[QMessageBox]:
    return [b for b in window.findChildren(QMessageBox) if b.objectName() == "trust_dialog" and b.isVisible()]


def _pickled_module(tmp_path: Path) -> Path:
    path = tmp_path / "whole_model.pt"
    # a whole nn.Module, pickled by torch.save: loading it runs the pickle; it takes 3x32x32 images
    torch.save(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, 10)), path)
    return path


def test_cancel_opens_nothing(qtbot: QtBot, window: QtMainWindow, tmp_path: Path) -> None:
    path = _pickled_module(tmp_path)
    before = window.state.draft.source
    window.open_file(str(path))
    qtbot.waitUntil(lambda: bool(_trust_dialogs(window)), timeout=60000)
    box = _trust_dialogs(window)[0]
    assert "--trust-pickle" not in box.text() + box.informativeText()
    assert "pickled Python objects" in box.informativeText() and not dialogs(window)
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.wait(200)
    assert window.state.draft.source == before and not window.runner.running("import")


def test_trusting_the_file_opens_it(qtbot: QtBot, window: QtMainWindow, tmp_path: Path) -> None:
    path = _pickled_module(tmp_path)
    window.open_file(str(path))
    qtbot.waitUntil(lambda: bool(_trust_dialogs(window)), timeout=60000)
    trust = next(b for b in _trust_dialogs(window)[0].buttons() if b.text() == "Trust this file and open it")
    trust.click()
    qtbot.waitUntil(lambda: window.state.draft.source == str(path), timeout=60000)
    assert [r.kind for r in window.state.draft.rows][-1] == "linear" and not dialogs(window)
    qtbot.waitUntil(
        lambda: window.state.result is not None and window.state.result.estimate.param_count == 30730, timeout=10000
    )  # 3*32*32*10 + 10 = 30,730
