"""Messages to the user: errors name the file, layer and field; nothing is lost by dismissing one."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QMessageBox, QWidget

from advisor.ui.i18n import tr
from advisor.ui.i18n.errors import error_text


def show_error(parent: QWidget | None, title: str, message: str, unchanged: str | None = None) -> QMessageBox:
    """Non-blocking (open(), not exec()): the window keeps working and tests need no event-loop tricks.
    `unchanged` says what was left as it was (default: the network and settings)."""
    box = QMessageBox(QMessageBox.Icon.Warning, title, error_text(message), QMessageBox.StandardButton.Ok, parent)
    box.setObjectName("error_dialog")
    box.setInformativeText(unchanged or tr("Nothing was changed; your network and settings are as they were."))
    box.open()
    return box


# The importers' refusal of a file that would run pickled code ends with the command line's way to trust
# it (importers/code_scan.py, state_dict.py TRUST_HINT); the app asks instead.
_CLI_TRUST = "pass --trust-pickle"


def needs_trust(message: str) -> bool:
    return _CLI_TRUST in message


def app_wording(message: str) -> str:
    """The refusal without the command-line flag: a GUI user is asked, never told to pass a flag."""
    for hint in ("; if you trust this file, " + _CLI_TRUST, "if you trust this file, " + _CLI_TRUST):
        message = message.replace(hint, "")
    return message.rstrip("; ")


def ask_trust(parent: QWidget, file: str, message: str, trusted: Callable[[], object]) -> QMessageBox:
    """Non-blocking, like show_error: the window's own "I trust this file" (DESIGN.md, Safety: a full pickled
    module only after the user says they trust that file: --trust-pickle or a dialog)."""
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        tr("Trust {file}?").format(file=file),
        tr(
            "{file} holds pickled Python objects or code, which run when the file is loaded: they "
            "can do anything you can. Open it only if you trust where it came from."
        ).format(file=file),
        QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.setObjectName("trust_dialog")
    box.setInformativeText(error_text(app_wording(message)))
    trust = box.addButton(tr("Trust this file and open it"), QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)  # the safe answer is the one Enter gives
    box.finished.connect(lambda _result: trusted() if box.clickedButton() is trust else None)
    box.open()
    return box
