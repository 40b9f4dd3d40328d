"""Recommendations: filters, the ranked table (sortable), and why the selected configuration fits or not.

Ranking runs on a worker (prepare + every card x count x plan); a newer request supersedes an older one.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QEvent, QItemSelection, QObject, QPoint, QSortFilterProxyModel, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from advisor.appstate import RankingRequest
from advisor.catalog import SEGMENTS, VENDORS
from advisor.charts import CardLine
from advisor.recommend.money import budget_caps
from advisor.recommend.objectives import Objective
from advisor.recommend.prepare import RankingInput
from advisor.recommend.present import best_per_card
from advisor.recommend.ranking import RankingOptions
from advisor.recommend.recommendation import Recommendation
from advisor.recommend.service import CardFilter, recommend
from advisor.ui.catalog_service import CatalogService
from advisor.ui.column_chooser import add_column_chooser
from advisor.ui.controls import combo
from advisor.ui.dialogs import show_error
from advisor.ui.i18n import tr
from advisor.ui.job_chart import QtJobCost
from advisor.ui.make_it_fit import QtMakeItFit
from advisor.ui.money_text import MoneyFilters
from advisor.ui.recommend_model import (
    HIDDEN_AT_FIRST,
    PLAN_COLUMN,
    PREFILL_COLUMN,
    RecommendationTableModel,
    explain,
)
from advisor.ui.state import AppState
from advisor.ui.table_model import SORT_ROLE
from advisor.ui.workers import TaskRunner

CARD_COLUMN_PX = 190  # wide enough for most names; the rest are elided with the full name in the tooltip
MIN_CARD_COLUMN_PX = 100  # "RTX 4090" and the like read whole; longer names elide
CHART_CARDS = 3  # fitting cards drawn on the memory-vs-batch chart, besides the selected one
JOB_CHART_PX = 240  # height of the time-against-cost chart below the table: its axes and frontier labels


class QtRecommendations(QWidget):
    cards_considered = Signal(list)  # list[CardLine]
    ranked = Signal()

    def __init__(
        self, state: AppState, catalog: CatalogService, runner: TaskRunner, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.state, self.catalog, self.runner = state, catalog, runner
        self.entries: list[Recommendation] = []
        self._card_width = CARD_COLUMN_PX
        self.model = RecommendationTableModel()
        self.proxy = QSortFilterProxyModel()
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.detail = QLabel(tr("Select a row to see why it fits or not."))
        self.detail.setWordWrap(True)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.detail.setTextFormat(Qt.TextFormat.RichText)
        self.status = QLabel()
        self.fit_button = QPushButton(tr("Make it fit on…"))
        self.fit_button.setToolTip(
            tr("What to change so that the workload fits the selected card, each change measured")
        )
        self.fit_button.setEnabled(False)
        self.fit_button.clicked.connect(lambda: self.make_it_fit())
        self.fit_dialog: QtMakeItFit | None = None
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self._build_filters()
        # the table above; below it the selected row's explanation, and beside that the time-against-cost chart
        # once a job size is given (a splitter gives a widget hidden at start no room: _show_job_chart makes it)
        self.job_chart = QtJobCost()
        self.below_table = QSplitter(Qt.Orientation.Horizontal)
        self.below_table.addWidget(self.detail)
        self.below_table.addWidget(self.job_chart)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.below_table)
        self.splitter.setSizes([420, 120])
        self.ranked.connect(self._show_job_chart)
        layout = QVBoxLayout(self)
        layout.addLayout(self.filter_row)
        layout.addWidget(self.splitter, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.fit_button)
        layout.addLayout(bottom)
        self.table.selectionModel().selectionChanged.connect(self._selected)
        self.table.viewport().installEventFilter(self)
        self._timer = QTimer(self, singleShot=True, interval=150)
        self._timer.timeout.connect(self._refresh_if_asked)
        self._catalog_changed = False
        state.result_changed.connect(self._timer.start)
        state.result_changed.connect(self._grey_if_stale)
        for signal in (catalog.ready, catalog.changed):
            signal.connect(self._catalog_ready)

    def _build_filters(self) -> None:
        self.budget = QDoubleSpinBox()
        self.budget.setRange(0, 10_000_000)
        self.budget.setDecimals(0)
        self.budget.setSingleStep(500)
        self.budget.setSpecialValueText(tr("no limit"))
        self.vendor = combo([(None, tr("any vendor")), *((v, v) for v in VENDORS)], tr("Card vendor"))
        self.segment = combo([(None, tr("any segment")), *((s, tr(s)) for s in SEGMENTS)], tr("Market segment"))
        self.max_gpus = combo(
            [(1, tr("one card")), *((n, tr("up to {n} cards").format(n=n)) for n in (2, 4, 8))],
            tr("Largest number of cards of one kind to consider"),
        )
        self.max_gpus.setCurrentIndex(3)
        self.objective = combo([(o.value, tr(o.label)) for o in Objective], tr("What the ranking puts first"))
        self.all_configs = QCheckBox(tr("every configuration"))
        self.all_configs.setToolTip(tr("Show every count and plan, not only each card's best"))
        # two rows, so the tab fits a 1280-pixel screen beside the model panel
        self.filter_row = QVBoxLayout()
        first, second = QHBoxLayout(), QHBoxLayout()
        first.addWidget(QLabel(tr("Budget:")))
        # rent with no job size has no total to cap: the box greys and this says why (budget_caps)
        self.budget_note = QLabel(tr("(renting: give a job size to cap its cost)"))
        self.budget_note.setStyleSheet("color: #666666")
        self.budget_note.hide()
        for row, widgets in (
            (first, (self.budget, self.budget_note, self.vendor, self.segment)),
            (second, (self.max_gpus, self.objective, self.all_configs)),
        ):
            for widget in widgets:
                row.addWidget(widget)
            row.addStretch(1)
            self.filter_row.addLayout(row)
        second.addWidget(add_column_chooser(self.table, HIDDEN_AT_FIRST))
        self.budget.valueChanged.connect(lambda: self._timer.start())  # a new request: _refresh_if_asked ranks
        for box in (self.vendor, self.segment, self.max_gpus, self.objective):
            box.currentIndexChanged.connect(lambda: self._timer.start())
        self.all_configs.toggled.connect(lambda: self._show(self.entries))
        third = QHBoxLayout()  # the price basis (new, used, rent, lowest), software path and job size
        third.addStretch(1)
        self.filter_row.addLayout(third)
        self.money = MoneyFilters(third, self._money_changed)
        self._mirror_budget()

    def request(self) -> tuple[CardFilter, RankingOptions]:
        cards = CardFilter(self.vendor.currentData(), self.segment.currentData(), None)
        cards = self.money.card_filter(cards)
        money = self.money.options(cards.basis)
        # a budget that caps nothing is not asked for (the command line refuses it): the box greys instead
        budget = (self.budget.value() or None) if budget_caps(money) else None
        return cards, RankingOptions(self.objective.currentData(), budget, self.max_gpus.currentData(), money=money)

    def _money_changed(self) -> None:
        self._mirror_budget()
        self._timer.start()

    def _mirror_budget(self) -> None:
        """The budget box as the request holds it: enabled where a budget caps a price or a job's cost, greyed
        with a note and a tooltip saying why where it caps nothing (rent per hour without a job size)."""
        caps = budget_caps(self.request()[1].money)
        self.budget.setEnabled(caps)
        self.budget_note.setVisible(not caps)
        self.budget.setToolTip(
            tr("Most you will pay for all the cards together, in USD")
            if caps
            else tr(
                "A rent per hour has no total to cap: give the job's size (samples) and the budget caps the job's cost"
            )
        )

    def _grey_if_stale(self) -> None:
        """An earlier network's ranking stays readable but greyed (the verdict says whose it is)."""
        result = self.state.result
        self.table.setEnabled(result is not None and not result.stale)

    def _catalog_ready(self) -> None:
        self._catalog_changed = True  # same filters and estimate, other cards or prices: rank again
        self._timer.start()

    def _refresh_if_asked(self) -> None:
        """After a filter, estimate or catalog change; not for the same question again (a stale mark, the end of
        a cancelled simulation: Cancel must not start the ranking it stopped)."""
        catalog_changed, self._catalog_changed = self._catalog_changed, False
        if not catalog_changed and self.state.model.asked(RankingRequest(*self.request())):
            return
        self.refresh()

    def refresh(self) -> None:
        catalog, result = self.catalog.catalog, self.state.result
        if result is None and self.entries:  # File > New: no ranking of the network that was there
            self.entries = []
            self._show([])
            self.job_chart.show_entries([])
        if catalog is None or result is None or result.stale:
            return
        request = RankingRequest(*self.request())
        job = result.job  # the estimate on screen (simulated or analytic), not a second one
        self.state.model.ask_ranking(request, job)

        def work(cancelled: threading.Event) -> list[Recommendation]:
            if cancelled.is_set():
                return []
            with catalog.read() as session:
                return recommend(session, job, request.cards, request.options)

        self.runner.start(
            "recommend",
            tr("Ranking cards"),
            work,
            lambda entries: self._ranked(request, job, entries),
            lambda error: show_error(self, tr("Ranking failed"), str(error)),
        )

    def _ranked(self, request: RankingRequest, job: RankingInput, entries: list[Recommendation]) -> None:
        if not self.state.model.ranked(request, job, entries):
            return  # late: the estimate or the filters changed since
        self.entries = entries
        self._show(entries)
        fitting = [e for e in best_per_card(entries) if e.fits][:CHART_CARDS]
        self.cards_considered.emit([CardLine(e.card, e.usable_bytes) for e in fitting])
        self.ranked.emit()

    def _show(self, entries: list[Recommendation]) -> None:
        shown = entries if self.all_configs.isChecked() else best_per_card(entries)
        generating = bool(entries) and entries[0].prefill_tokens_per_s is not None
        if generating != self.model.generating:  # generation: the prefill speed and the split plans matter
            for column in (PLAN_COLUMN, PREFILL_COLUMN):
                self.table.horizontalHeader().setSectionHidden(column, not generating)
        self.model.set_entries(shown, generating)
        self.table.resizeColumnsToContents()  # card names vary in length ("RTX PRO 6000 Blackwell ...")
        if generating:
            self._tight_headers()
        self._card_width = self.table.horizontalHeader().sectionSize(1)  # what the names need
        self._fit_card_column()
        fits = sum(1 for e in shown if e.fits)
        self.status.setText(
            tr("{n} rows, {fits} fit; {total} configurations ranked").format(
                n=len(shown), fits=fits, total=len(entries)
            )
        )
        self.detail.setText(tr("Select a row to see why it fits or not."))

    def _tight_headers(self) -> None:
        """QHeaderView sizes every section for a sort arrow as wide as the header is high (qheaderview.cpp,
        sectionSizeFromContents), twice as wide under two-line headers: only the sorted column needs it."""
        header = self.table.horizontalHeader()
        metrics, margin = header.fontMetrics(), header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin)
        for column in range(header.count()):
            text = str(self.proxy.headerData(column, Qt.Orientation.Horizontal))
            arrow = metrics.height() + margin if column == header.sortIndicatorSection() else 0
            words = max(metrics.horizontalAdvance(line) for line in text.split("\n")) + 4 * margin + arrow
            header.resizeSection(column, max(self.table.sizeHintForColumn(column), words))

    def _fit_card_column(self) -> None:
        """The longest names are elided; narrower still where the value column would fall off a 1280 px
        screen (again whenever the table's width changes)."""
        header = self.table.horizontalHeader()
        others = sum(header.sectionSize(c) for c in range(header.count()) if c != 1 and not header.isSectionHidden(c))
        room = self.table.viewport().width() - others
        header.resizeSection(1, min(self._card_width, CARD_COLUMN_PX, max(room, MIN_CARD_COLUMN_PX)))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """The table's viewport resized (the window, or a scroll bar that came with the rows: 14 px)."""
        if event.type() == QEvent.Type.Resize and watched is self.table.viewport():
            self._fit_card_column()
        return False

    def _show_job_chart(self) -> None:
        was_hidden = self.job_chart.isHidden()
        self.job_chart.show_entries(self.entries)
        if was_hidden and not self.job_chart.isHidden():  # half the width, and the height a chart needs
            width, height = self.below_table.width(), sum(self.splitter.sizes())
            self.below_table.setSizes([width // 2, width - width // 2])
            self.splitter.setSizes([height - JOB_CHART_PX, JOB_CHART_PX])

    def selected_entry(self) -> Recommendation | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.entries[self.proxy.mapToSource(rows[0]).row()] if rows else None

    def _context_menu(self, position: QPoint) -> None:
        index = self.table.indexAt(position)
        if not index.isValid():
            return
        entry = self.model.entries[self.proxy.mapToSource(index).row()]
        menu = QMenu(self)
        menu.addAction(tr("Make it fit on {card}…").format(card=entry.card), lambda: self.make_it_fit(entry.card))
        menu.popup(self.table.viewport().mapToGlobal(position))

    def make_it_fit(self, card: str | None = None) -> QtMakeItFit | None:
        """Opens the make-it-fit list for a card (the selected row's unless named)."""
        entry = self.selected_entry()
        card = card or (entry.card if entry else None)
        if card is None:
            return None
        if self.fit_dialog is not None:
            self.fit_dialog.close()
            self.fit_dialog.deleteLater()
        self.fit_dialog = QtMakeItFit(self.state, self.catalog, self.runner, card, self)
        self.fit_dialog.show()
        return self.fit_dialog

    def _selected(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        entry = self.selected_entry()
        self.fit_button.setEnabled(entry is not None)
        if entry is None or self.state.result is None:
            return
        estimate = self.state.result.estimate
        self.detail.setText(explain(entry, estimate.workload.batch, estimate))
        chosen = [CardLine(entry.card, entry.usable_bytes)]
        others = [
            CardLine(e.card, e.usable_bytes) for e in best_per_card(self.entries) if e.fits and e.card != entry.card
        ][: CHART_CARDS - 1]
        self.cards_considered.emit(chosen + others)
