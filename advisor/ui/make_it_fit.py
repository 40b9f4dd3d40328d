""" "Make it fit on...": the changes that make the workload fit one card, measured, and one click to apply one.

The search (advisor.recommend.fit.search) re-estimates every change, so it runs on a worker. Apply sets the
workload controls (AppState.set_choice); changes the controls cannot express (freezing layers, sharding)
are shown but belong in the training script, which the row's tooltip says.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from advisor.catalog import find_card
from advisor.core import zoo
from advisor.core.graph import Graph
from advisor.core.units import format_bytes
from advisor.importers.spec_estimate import simulator
from advisor.recommend.fit.keys import CHANGES, ChangeKey
from advisor.recommend.fit.measure import Subject, target
from advisor.recommend.fit.search import FitOption, FitReport, make_it_fit
from advisor.recommend.reasons import reason_text
from advisor.ui.catalog_service import CatalogService
from advisor.ui.i18n import tr
from advisor.ui.state import AppState, ShownEstimate
from advisor.ui.workers import TaskRunner


def change_label(key: ChangeKey, training: bool = True) -> str:
    return tr(CHANGES[key].words(training)[0])


def option_label(o: FitOption) -> str:
    text = " + ".join(change_label(c, o.training) for c in o.changes or (ChangeKey.CURRENT,))
    return text + (tr(" on {count} cards").format(count=o.cards) if o.cards > 1 else "")


def option_note(o: FitOption) -> str:
    return "; ".join(tr(CHANGES[key].words(o.training)[1]).format(**values) for key, values in o.notes)


def speed(slowdown: float) -> str:
    if abs(slowdown) < 0.005:
        return tr("same speed")
    if slowdown > 0:
        return tr("{value} slower").format(value=f"{slowdown:.0%}")
    return tr("{value} faster").format(value=f"{-slowdown / (1 + slowdown):.0%}")


def fit_subject(result: ShownEstimate, state: AppState) -> Subject:
    """The workload on screen as fitting sees it (a zoo sequence model can be rebuilt shorter)."""
    graph, source = result.graph, state.draft.source
    tokens = graph.tokens_per_sample
    name = source[4:] if source.startswith("zoo:") else ""
    rebuild: Callable[[int], Graph] | None = None
    if tokens > 1 and name and zoo.takes_seq_len(name):
        rebuild = functools.partial(zoo.build, name)
    return Subject(graph, result.estimate.workload, tokens if tokens > 1 else None, rebuild)


class QtMakeItFit(QDialog):
    """The list of changes for one card; Apply (or a double-click) sets the workload controls."""

    COLUMNS = ("Change", "Needs", "Fits", "Speed", "Note")

    def __init__(
        self, state: AppState, catalog: CatalogService, runner: TaskRunner, card: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.state, self.catalog, self.runner, self.card = state, catalog, runner, card
        self.report: FitReport | None = None
        self.rows: list[FitOption | None] = []
        self.setWindowTitle(tr("Make it fit on {card}").format(card=card))
        self.resize(980, 520)
        self.verdict = QLabel(tr("Measuring the changes…"))
        self.verdict.setWordWrap(True)
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels([tr(c) for c in self.COLUMNS])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._selected)
        self.table.itemDoubleClicked.connect(lambda _item: self.apply_selected())
        self.apply_button = QPushButton(tr("Apply"))
        self.apply_button.setToolTip(tr("Set the workload controls to this change"))
        self.apply_button.setEnabled(False)
        self.apply_button.clicked.connect(self.apply_selected)
        close = QPushButton(tr("Close"))
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.apply_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.verdict)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        state.result_changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        catalog, result = self.catalog.catalog, self.state.result
        if catalog is None or result is None:
            return
        subject, card = fit_subject(result, self.state), self.card
        spec = self.state.simulated_spec() if result.method == "simulated" else None

        def work(_cancelled: threading.Event) -> FitReport:
            with catalog.read() as session:
                record = find_card(session, card)
            # as `advisor fit` does for a PyTorch file: each change is measured by simulating it
            fitted = dataclasses.replace(subject, simulate=simulator(spec)) if spec else subject
            return make_it_fit(fitted, target(record))

        self.runner.start(
            "fit", tr("Measuring the changes"), work, self.show_report, lambda error: self.verdict.setText(str(error))
        )

    def show_report(self, report: object) -> None:
        assert isinstance(report, FitReport)
        self.report = report
        need, usable = report.current.measured.required_bytes, report.usable_bytes
        spare = tr("fits with {share} to spare").format(share=f"{1 - need / usable:.0%}")
        state = (
            spare if not report.needs_help else tr("fits, under 10% to spare") if need <= usable else tr("does not fit")
        )
        self.verdict.setText(
            tr("{card}: the workload needs {need}, the card has {usable} usable: {state}.").format(
                card=report.card, need=format_bytes(need), usable=format_bytes(usable), state=state
            )
        )
        if report.refusal is not None:  # the runtime does not run this card: freeing memory cannot help
            why = tr("{reason}; no change below makes it run on this card.").format(
                reason=reason_text(report.refusal, tr)
            )
            self.verdict.setText(self.verdict.text() + " " + why)
        if report.recommended is not None:
            self.verdict.setText(
                self.verdict.text()
                + " "
                + tr("Recommended: {change} ({speed}).").format(
                    change=option_label(report.recommended), speed=speed(report.recommended.slowdown)
                )
            )
        self.table.setRowCount(0)
        self.rows = []
        if not report.needs_help:
            self._show_headroom(report)
            return
        self._section(tr("Each change alone"), [report.current, *report.singles])
        title = (
            tr("Fewest changes that fit, keeping the training the same")
            if report.combinations_same_training and report.current.training
            else tr("Fewest changes that fit, keeping the outputs the same")
            if report.combinations_same_training
            else tr("Fewest changes that fit (they change the training)")
            if report.current.training
            else tr("Fewest changes that fit (they change the numbers the model computes)")
        )
        self._section(title, list(report.combinations))
        self._section(tr("Sharding over several cards"), list(report.sharding))
        self.table.resizeColumnsToContents()

    def _show_headroom(self, report: FitReport) -> None:
        """It fits: no change is needed, so list only what buys speed, or memory for a larger batch."""
        options = [o for o in (*report.singles, *report.combinations) if o.fits and o.same_training]
        need = report.current.measured.required_bytes
        self._section(tr("Changes that make it faster"), [o for o in options if o.slowdown < 0])
        self._section(
            tr("Changes that free memory for a larger batch"),
            [o for o in options if o.measured.required_bytes < need and o.slowdown >= 0],
        )
        self.table.resizeColumnsToContents()

    def _section(self, title: str, options: list[FitOption]) -> None:
        if not options:
            return
        row = self.table.rowCount()
        self.table.insertRow(row)
        heading = QTableWidgetItem(title)
        font = heading.font()
        font.setBold(True)
        heading.setFont(font)
        heading.setFlags(Qt.ItemFlag.ItemIsEnabled)
        self.table.setItem(row, 0, heading)
        self.table.setSpan(row, 0, 1, len(self.COLUMNS))
        self.rows.append(None)
        for option in options:
            self._add(option)

    def _add(self, o: FitOption) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        tip = (
            option_note(o)
            if o.applicable or not o.changes
            else option_note(o) + "\n" + tr("Not a workload control: set it in your training script.")
        )
        cells = (
            option_label(o),
            format_bytes(o.measured.required_bytes),
            tr("yes") if o.fits else tr("no"),
            speed(o.slowdown),
            option_note(o),
        )
        for column, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setToolTip(tip)
            if not o.fits:
                item.setForeground(QBrush(QColor("#9A9A9A")))
            self.table.setItem(row, column, item)
        self.rows.append(o)

    def selected(self) -> FitOption | None:
        rows = self.table.selectionModel().selectedRows()
        return self.rows[rows[0].row()] if rows else None

    def _selected(self) -> None:
        option = self.selected()
        self.apply_button.setEnabled(option is not None and option.applicable)

    def apply_selected(self) -> None:
        option = self.selected()
        if option is not None and option.applicable:
            self.state.set_choice(**option.settings)
