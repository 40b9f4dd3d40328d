"""The catalog tab's "Update prices…" button: `advisor catalog update` on the worker pool (catalog/update.py),
then the summary in a message; offline is a message too, not an error (the prices stay as they were)."""

from __future__ import annotations

import threading

from PySide6.QtWidgets import QMessageBox, QPushButton, QWidget

from advisor.catalog.update import FeedUnreachable, update_prices
from advisor.ui.catalog_service import CatalogService
from advisor.ui.dialogs import show_error
from advisor.ui.i18n import tr
from advisor.ui.workers import TaskRunner


def update_button(catalog: CatalogService, runner: TaskRunner, parent: QWidget) -> QPushButton:
    button = QPushButton(tr("Update prices…"))
    button.setObjectName("update_prices")
    button.setToolTip(tr("Fetch the project's dated price feed; your own prices are kept"))
    button.clicked.connect(lambda: start_update(catalog, runner, parent))
    return button


def start_update(catalog: CatalogService, runner: TaskRunner, parent: QWidget, source: str | None = None) -> None:
    opened = catalog.catalog
    if opened is None:
        return

    def work(_cancelled: threading.Event) -> tuple[str, bool]:
        try:
            return update_prices(opened.transact, source).text(), True
        except FeedUnreachable as error:
            return str(error), False

    def done(result: tuple[str, bool]) -> None:
        text, changed = result
        box = QMessageBox(QMessageBox.Icon.Information, tr("Prices"), text, QMessageBox.StandardButton.Ok, parent)
        box.setObjectName("prices_updated")
        box.open()
        if changed:
            catalog.changed.emit()

    runner.start(
        "catalog-write",
        tr("Updating prices"),
        work,
        done,
        lambda error: show_error(parent, tr("Prices not updated"), str(error)),
    )
