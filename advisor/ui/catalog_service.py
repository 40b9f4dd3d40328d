"""The catalog as the app uses it: opened once on a worker (first run seeds it), sessions opened per task."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from advisor.catalog import Catalog, open_catalog
from advisor.ui.i18n import tr
from advisor.ui.workers import TaskRunner


class CatalogService(QObject):
    ready = Signal()
    changed = Signal()  # a price or card was written: rankings must be redone
    failed = Signal(str)

    def __init__(self, runner: TaskRunner, path: str | Path | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.path = path
        self.catalog: Catalog | None = None
        self.messages: list[str] = []

    def open(self) -> None:
        def work(_cancelled: threading.Event) -> Catalog:
            return open_catalog(self.path)

        self.runner.start(
            "catalog", tr("Opening the catalog"), work, self._opened, lambda error: self.failed.emit(str(error))
        )

    def _opened(self, catalog: object) -> None:
        assert isinstance(catalog, Catalog)
        self.catalog = catalog
        self.messages = list(catalog.messages)
        self.ready.emit()

    def close(self) -> None:
        if self.catalog is not None:
            self.catalog.close()
            self.catalog = None
