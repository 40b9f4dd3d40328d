"""Starting the app: QApplication, language and font, the state, the window; the catalog opens behind it."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from PySide6.QtCore import QLibraryInfo, QSettings, QTranslator
from PySide6.QtGui import QFont, QGuiApplication
from PySide6.QtWidgets import QApplication

from advisor.telemetry.nvml import NvmlReader
from advisor.telemetry.poller import Poller
from advisor.telemetry.readings import Reader
from advisor.ui.i18n import app_language, fonts, set_language, system_language


def apply_font() -> None:
    """The app's language for what Qt draws itself: the font (Chinese needs the SC variant of Noto Sans CJK by
    name; fontconfig would pick the Japanese one) and Qt's own strings (dialog buttons: OK, Cancel, ...),
    from the translations PySide6 ships."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return
    held = app_language()
    font = QFont(app.font())
    font.setFamilies(list(fonts()) if held.code != "en" else [QFont().defaultFamily()])
    app.setFont(font)
    if held.qt_translator is not None:
        app.removeTranslator(held.qt_translator)
        held.qt_translator = None
    if held.code != "en":
        translator = QTranslator(app)
        folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
        if translator.load(f"qtbase_{held.code}", folder):
            app.installTranslator(translator)
            held.qt_translator = translator


def make_window(
    settings: QSettings | None = None, catalog_path: str | None = None, reader: Reader | None = None
) -> object:
    """Builds state, catalog service, GPU poller and window (the caller owns the QApplication and shows the
    window). `reader` defaults to NVML; tests pass the FakeReader."""
    from advisor.ui.catalog_service import CatalogService
    from advisor.ui.controls import install_wheel_guard
    from advisor.ui.main_window import QtMainWindow
    from advisor.ui.settings import default_settings, restore_state
    from advisor.ui.state import AppState
    from advisor.ui.workers import TaskRunner

    settings = settings or default_settings()
    stored = settings.value("language")
    set_language(stored if isinstance(stored, str) else system_language())
    apply_font()
    install_wheel_guard()
    runner = TaskRunner()
    state = AppState()
    state.runner = runner
    if not restore_state(settings, state):
        from advisor.core import zoo
        from advisor.ui import draft_edits

        draft_edits.load_graph_into(state.draft, zoo.build("resnet50"), "zoo:resnet50")
        state.draft.undo.clear()
    catalog = CatalogService(runner, catalog_path)
    poller = Poller(reader or NvmlReader())
    poller.start()
    window = QtMainWindow(state, catalog, runner, settings, poller)
    state.recompute()
    catalog.open()
    geometry = settings.value("geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    return window


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()
    app = QApplication.instance() or QApplication(list(argv or sys.argv[:1]))
    app.setApplicationName("advisor")
    # Wayland matches the window to the menu entry by this (packaging/linux/io.github.advisor.Advisor.desktop)
    QGuiApplication.setDesktopFileName("io.github.advisor.Advisor")
    window = make_window()
    window.show()  # type: ignore[attr-defined]
    app.processEvents()
    if "--startup-time" in (argv or ()):
        print(f"first window: {time.perf_counter() - started:.3f} s")
        window.close()  # type: ignore[attr-defined]
        window.runner.wait()  # type: ignore[attr-defined]  # the catalog opens on a worker: let it finish
        return 0
    return int(app.exec())
