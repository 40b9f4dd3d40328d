"""The menu bar: every action has a keyboard shortcut (shown in the menu)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from advisor.importers.spec_graph import FILE_FORMS
from advisor.ui.i18n import LANGUAGES, language, tr
from advisor.ui.open_model import ask_by_name

if TYPE_CHECKING:
    from advisor.ui.main_window import QtMainWindow


Shortcut = QKeySequence | QKeySequence.StandardKey | str


def _action(menu: QMenu, text: str, shortcut: Shortcut, slot: Callable[[], object]) -> QAction:
    action = QAction(text, menu)
    action.setShortcut(QKeySequence(shortcut))
    action.triggered.connect(lambda _checked=False: slot())
    menu.addAction(action)
    return action


def _ask_open(window: QtMainWindow) -> None:
    patterns = " ".join(f"*{suffix}" for suffix in FILE_FORMS)
    path, _ = QFileDialog.getOpenFileName(window, tr("Open a model"), "", tr("Model files") + f" ({patterns})")
    if path:
        window.open_file(path)


def _ask_save(window: QtMainWindow) -> None:
    path, _ = QFileDialog.getSaveFileName(
        window, tr("Save the network"), f"{window.state.draft.name}.json", tr("Network") + " (*.json)"
    )
    if path:
        window.save_network(path)


def _ask_export(window: QtMainWindow) -> None:
    path, _ = QFileDialog.getSaveFileName(
        window, tr("Export the PDF report"), f"{window.state.draft.name}.pdf", tr("PDF report") + " (*.pdf)"
    )
    if path:
        window.export_pdf(path)


def _about(window: QtMainWindow) -> None:
    QMessageBox.about(
        window,
        tr("About Advisor"),
        tr(
            "Advisor tells you whether your network fits a GPU, how fast it will run, and which "
            "card gives the most for the money."
        ),
    )


def build_menus(window: QtMainWindow) -> None:
    bar = window.menuBar()
    bar.clear()
    file_menu = bar.addMenu(tr("&File"))
    _action(file_menu, tr("New network"), QKeySequence.StandardKey.New, window.new_network)
    _action(file_menu, tr("Open model…"), QKeySequence.StandardKey.Open, lambda: _ask_open(window))
    _action(file_menu, tr("Open by name…"), "Ctrl+Shift+O", lambda: ask_by_name(window))  # Hub id or library
    _action(file_menu, tr("Save network as…"), QKeySequence.StandardKey.Save, lambda: _ask_save(window))
    _action(file_menu, tr("Export PDF report…"), "Ctrl+E", lambda: _ask_export(window))
    file_menu.addSeparator()
    _action(file_menu, tr("Quit"), "Ctrl+Q", window.close)
    edit = bar.addMenu(tr("&Edit"))
    undo = window.state.draft.undo
    _action(edit, tr("Undo"), QKeySequence.StandardKey.Undo, undo.undo)
    _action(edit, tr("Redo"), "Ctrl+Shift+Z", undo.redo)
    view = bar.addMenu(tr("&View"))
    for index in range(window.tabs.count()):
        _action(view, window.tabs.tabText(index), f"Ctrl+{index + 1}", lambda i=index: window.tabs.setCurrentIndex(i))  # type: ignore[misc]
    _action(view, tr("Refresh recommendations"), "F5", window.recommendations.refresh)
    languages = bar.addMenu(tr("&Language"))
    for number, (code, name) in enumerate(LANGUAGES.items(), start=1):
        action = _action(languages, name, f"Ctrl+Alt+{number}", lambda c=code: window.switch_language(c))  # type: ignore[misc]
        action.setCheckable(True)
        action.setChecked(code == language())
    help_menu = bar.addMenu(tr("&Help"))
    _action(help_menu, tr("About Advisor"), "F1", lambda: _about(window))
