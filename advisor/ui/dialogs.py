"""Messages to the user: errors name the file, layer and field; nothing is lost by dismissing one."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from advisor.ui.i18n import tr


def show_error(parent: QWidget | None, title: str, message: str, unchanged: str | None = None) -> QMessageBox:
    """Non-blocking (open(), not exec()): the window keeps working and tests need no event-loop tricks.
    `unchanged` says what was left as it was (default: the network and settings)."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("error_dialog")
    box.setInformativeText(unchanged or tr("Nothing was changed; your network and settings are as they were."))
    box.open()
    return box
