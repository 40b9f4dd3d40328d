"""The main window: model and workload on the left, breakdown / recommendations / catalog / live GPUs on the
right. Switching language rebuilds the widgets from the state (they hold none), so nothing is lost."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication
from PySide6.QtWidgets import (
    QGroupBox,
    QLabel,
    QMainWindow,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from advisor.core.graph import Graph
from advisor.recommend.devices import local_need_bytes
from advisor.telemetry.poller import Poller
from advisor.ui import draft_edits, menus, open_model
from advisor.ui.breakdown import QtBreakdown
from advisor.ui.catalog_panel import QtCatalogEditor
from advisor.ui.catalog_service import CatalogService
from advisor.ui.dialogs import app_wording, ask_trust, needs_trust, show_error
from advisor.ui.i18n import fonts, set_language, tr
from advisor.ui.i18n.errors import error_text
from advisor.ui.live_gpus import QtLiveGpusPanel
from advisor.ui.model_map import QtModelMap
from advisor.ui.model_panel import QtModelPanel
from advisor.ui.recommend_panel import QtRecommendations
from advisor.ui.settings import load_money, save_money, save_state
from advisor.ui.state import AppState, ShownEstimate
from advisor.ui.verdict import QtVerdict
from advisor.ui.workers import QtTaskBar, TaskRunner


def requirement_label(result: ShownEstimate) -> str:
    w = result.estimate.workload
    return f"{result.estimate.model} {tr(w.mode)} b{w.batch}"


def first_size() -> tuple[int, int]:
    """1440x900, or less on a smaller screen (the layout's minimum is under 1280x720)."""
    screen = QGuiApplication.primaryScreen()
    if screen is None:
        return 1440, 900
    room = screen.availableGeometry()
    return min(1440, room.width()), min(900, room.height())


class QtMainWindow(QMainWindow):
    tabs: QTabWidget
    recommendations: QtRecommendations

    def __init__(
        self,
        state: AppState,
        catalog: CatalogService,
        runner: TaskRunner,
        settings: QSettings,
        poller: Poller | None = None,
    ) -> None:
        super().__init__()
        self.state, self.catalog, self.runner, self.settings = state, catalog, runner, settings
        self.poller = poller  # started by the caller; the window stops it when it closes
        for owned in (state, catalog, runner):  # they live and die with the window (timers, signals)
            owned.setParent(self)
        self.setAcceptDrops(True)
        self.resize(*first_size())
        self.build()
        # connected once here, not in build(): a language switch rebuilds the widgets, not these links
        state.error_changed.connect(self.show_status)
        state.result_changed.connect(self.show_requirement)
        state.result_changed.connect(self.show_verdict)
        state.ranking_changed.connect(self.show_verdict)
        runner.cancelled.connect(state.tasks_cancelled)
        catalog.failed.connect(self.catalog_failed)

    def show_status(self, message: str) -> None:
        self.statusBar().showMessage(error_text(message))

    def catalog_failed(self, message: str) -> None:
        show_error(self, tr("Cannot open the catalog"), message)

    def build(self) -> None:
        """(Re)creates every widget from the state: at start and after a language switch."""
        current = self.tabs.currentIndex() if getattr(self, "tabs", None) is not None else 0
        self.setWindowTitle(tr("Advisor: which GPU for your network"))
        self.model_panel = QtModelPanel(self.state)
        self.workload_box = QGroupBox(tr("Workload"))
        from advisor.ui.workload_panel import QtWorkloadControls

        self.workload = QtWorkloadControls(self.state)
        QVBoxLayout(self.workload_box).addWidget(self.workload)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(4, 4, 4, 4)
        left_layout.addWidget(self.model_panel, 1)
        left_layout.addWidget(self.workload_box)
        # scrolls rather than growing the window: Chinese text is taller, and 720 px must still fit
        self.left_scroll = QScrollArea()
        self.left_scroll.setWidget(left)
        self.left_scroll.setWidgetResizable(True)
        self.left_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.left_scroll.setMinimumWidth(left.minimumSizeHint().width() + 16)
        self.breakdown = QtBreakdown(self.state)
        # the money filters survive a language switch (the old panel's) and a restart (the settings')
        money = (
            self.recommendations.money.values()
            if getattr(self, "recommendations", None) is not None
            else load_money(self.settings)
        )
        self.recommendations = QtRecommendations(self.state, self.catalog, self.runner)
        self.recommendations.money.restore(money)
        self.recommendations.cards_considered.connect(self.breakdown.set_cards)
        self.catalog_editor = QtCatalogEditor(self.catalog, self.runner)
        self.live = QtLiveGpusPanel(self.poller)
        self.model_map = QtModelMap(self.state)
        self.model_map.model_loaded.connect(  # a click on the map answers: the ring moves, and this line
            lambda name: self.statusBar().showMessage(
                tr("Loaded {name}; Undo brings back the previous model").format(name=name), 8000
            )
        )
        self.tabs = QTabWidget()
        for widget, label in (
            (self.breakdown, tr("Breakdown")),
            (self.recommendations, tr("Recommendations")),
            (self.catalog_editor, tr("Catalog")),
            (self.live, tr("Live GPUs")),
            (self.model_map, tr("Choose the model")),
        ):
            self.tabs.addTab(widget, label)
        self.tabs.setCurrentIndex(current)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.left_scroll)
        splitter.addWidget(self.tabs)
        splitter.setSizes([420, 860])
        self.verdict = QtVerdict()
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(self.verdict)  # above the tabs: the answer stays in view whichever tab is open
        column.addWidget(splitter, 1)
        old = self.takeCentralWidget()
        if old is not None:
            old.deleteLater()
        self.setCentralWidget(central)
        self.task_bar = QtTaskBar(self.runner)
        self.status_text = QLabel()
        self.statusBar().addPermanentWidget(self.task_bar)
        menus.build_menus(self)
        self._fill()

    def show_requirement(self) -> None:
        """The Live GPUs tab compares each local card with what this workload needs: the allocator budget
        plus the CUDA context and library workspaces (DESIGN.md: that decides a fit)."""
        result = self.state.result
        if result is None:
            self.live.set_workload_requirement(None, "")
            return
        needed = local_need_bytes(result.estimate.memory.required_bytes)
        self.live.set_workload_requirement(needed, requirement_label(result))

    def show_verdict(self) -> None:
        self.verdict.show_verdict(self.state.result, self.state.model.shown_ranking())

    def _fill(self) -> None:
        """Widgets just built show what the state already has (the estimate, the catalog)."""
        self.breakdown.refresh()
        self.show_requirement()
        self.show_verdict()
        if self.catalog.catalog is not None:
            self.catalog_editor.reload()
            self.recommendations.refresh()

    def switch_language(self, code: str) -> None:
        set_language(code)
        self.settings.setValue("language", code)
        from advisor.ui.app import apply_font

        apply_font()
        old_bar = self.task_bar
        self.statusBar().removeWidget(old_bar)
        old_bar.deleteLater()
        self.build()

    # File actions
    def new_network(self) -> None:
        draft_edits.clear(self.state.draft)

    def open_file(self, path: str, trust_pickle: bool = False) -> None:
        """Imports run on a worker (torch-based importers take seconds); errors name the file. A transformers
        config.json opens as hf:CONFIG.json (open_model.py); a file that would run pickled code is opened only
        after the user says they trust it, in a dialog."""
        seq_len, spec, name = self.state.choice.seq_len, open_model.spec_for_path(path), Path(path).name

        def work(_cancelled: threading.Event) -> Graph:
            return open_model.load_spec(spec, seq_len, trust_pickle=trust_pickle)

        def failed(error: BaseException) -> None:
            if not trust_pickle and needs_trust(str(error)):
                ask_trust(self, name, str(error), lambda: self.open_file(path, trust_pickle=True))
            else:
                show_error(self, tr("Cannot open {file}").format(file=name), app_wording(str(error)))

        self.runner.start(
            "import", tr("Importing {file}").format(file=name), work, lambda graph: self.opened(graph, spec), failed
        )

    def opened(self, graph: Graph, spec: str) -> None:
        draft_edits.load_graph_into(self.state.draft, graph, spec)
        self.state.mark_imported(spec)

    def save_network(self, path: str) -> None:
        from advisor.importers.netfile import save_graph

        graph = self.state.draft.result.graph
        if graph is None:
            errors = self.state.draft.result.errors
            show_error(
                self,
                tr("Cannot save the network"),
                next(iter(errors.values())) if errors else tr("The network has no layers."),
            )
            return
        try:
            save_graph(graph, path)
        except OSError as error:
            show_error(self, tr("Cannot save the network"), f"{path}: {error.strerror or error}")
            return
        self.statusBar().showMessage(tr("Saved {file}").format(file=path), 5000)

    def export_pdf(self, path: str) -> None:
        """The PDF report of what the window shows (estimate, the ranking's filters, the local GPUs), written on
        a worker: ranking every card and drawing the charts takes a second or two."""
        result, catalog = self.state.result, self.catalog.catalog
        if result is None or catalog is None:
            show_error(self, tr("Cannot write the report"), tr("There is no estimate to report yet."))
            return
        cards, options = self.recommendations.request()
        snapshot = self.poller.state().snapshot if self.poller is not None else None
        source, families = self.state.draft.source, fonts()

        def work(_cancelled: threading.Event) -> tuple[Path, int]:
            from advisor.report import build_report, default_paper, rank_for_report, write_pdf

            job = result.job  # the numbers on screen, whichever method made them
            with catalog.read() as session:
                ranking = rank_for_report(session, job, cards, options)
            return write_pdf(path, build_report(job, ranking, snapshot, source), default_paper(), tr, families)

        self.runner.start(
            "report",
            tr("Writing the PDF report"),
            work,
            lambda written: self.statusBar().showMessage(tr("Saved {file}").format(file=written[0]), 5000),
            lambda error: show_error(self, tr("Cannot write the report"), str(error)),
        )

    # Drag and drop of model files
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_file(url.toLocalFile())
                event.acceptProposedAction()
                return

    def closeEvent(self, event: QCloseEvent) -> None:
        save_state(self.settings, self.state)
        save_money(self.settings, self.recommendations.money.values())
        self.settings.setValue("geometry", self.saveGeometry())
        self.runner.cancel()
        if self.poller is not None:
            self.poller.stop()
        super().closeEvent(event)
