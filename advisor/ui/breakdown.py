"""Where memory and compute go: headline numbers, then four views of the same estimate (only the view on
screen is redrawn while the slider moves; the others redraw when shown)."""

from __future__ import annotations

from collections.abc import Callable

from matplotlib.figure import Figure
from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from advisor.appstate import ShownEstimate
from advisor.charts import CardLine, batch_curve_figure, category_figure, layer_figure, timeline_figure
from advisor.ui.chart_canvas import QtChart, chart_style
from advisor.ui.i18n import tr
from advisor.ui.i18n.errors import error_text
from advisor.ui.layer_table import LayerTableModel
from advisor.ui.state import AppState
from advisor.ui.summary import QtSummary, method_line
from advisor.ui.table_model import SORT_ROLE


class QtBreakdown(QWidget):
    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.cards: list[CardLine] = []
        self.summary = QtSummary()
        self.method = QLabel()
        self.method.setObjectName("method")
        self.method.setWordWrap(True)
        self.error = QLabel()
        self.error.setStyleSheet("color: #B00020")
        self.error.setWordWrap(True)
        self.category = QtChart()
        self.layers = LayerTableModel()
        self.proxy = QSortFilterProxyModel()
        self.proxy.setSourceModel(self.layers)
        self.proxy.setSortRole(SORT_ROLE)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        # network order first (the source model's order); a header click sorts, a third click restores it
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.horizontalHeader().setSortIndicatorClearable(True)
        self.proxy.sort(-1)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.layer_metric = QComboBox()
        for value, label in (
            ("kept_bytes", tr("Memory kept for backward")),
            ("output_bytes", tr("Output size")),
            ("flops", tr("FLOPs")),
        ):
            self.layer_metric.addItem(label, value)
        self.layer_metric.currentIndexChanged.connect(lambda: self._redraw(force=True))
        self.layer_chart = QtChart()
        self.timeline = QtChart()
        self.batch_chart = QtChart()
        self.views = QTabWidget()
        self.views.addTab(self.category, tr("Memory by category"))
        self.views.addTab(self._layers_page(), tr("Per layer"))
        self.views.addTab(self.timeline, tr("Over the step"))
        self.views.addTab(self.batch_chart, tr("Memory vs batch"))
        self.views.currentChanged.connect(lambda: self._redraw())
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.method)
        layout.addWidget(self.error)
        layout.addWidget(self.views, 1)
        self._drawn: dict[int, object] = {}
        state.result_changed.connect(self.refresh)
        state.error_changed.connect(self.show_error)
        self.refresh()

    def show_error(self, message: str) -> None:
        """An invalid edit leaves the last valid figures on screen: say that they are stale, and grey them."""
        stale = bool(message) and self.state.result is not None
        self.error.setText(
            error_text(message) + ("  " + tr("(The figures below are from the last valid network.)") if stale else "")
        )
        self.summary.setEnabled(not stale)
        self.views.setEnabled(not stale)

    def _layers_page(self) -> QWidget:
        page = QSplitter(Qt.Orientation.Vertical)  # the table over the chart: every column has the full width
        page.addWidget(self.table)
        right = QWidget()
        box = QVBoxLayout(right)
        box.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel(tr("Chart:")))
        row.addWidget(self.layer_metric, 1)
        box.addLayout(row)
        box.addWidget(self.layer_chart, 1)
        page.addWidget(right)
        page.setSizes([300, 260])
        return page

    def set_cards(self, cards: list[CardLine]) -> None:
        """The cards under consideration: horizontal lines on the memory-vs-batch chart."""
        if cards != self.cards:
            self.cards = cards
            self._drawn.pop(3, None)
            self._redraw()

    def refresh(self) -> None:
        result = self.state.result
        self.summary.set_estimate(
            result.estimate if result else None, result.trainable_param_count() if result else None
        )
        self.method.setText(
            method_line(
                result.method, result.pending, self.state.edited_import(), self.state.model.simulation_cancelled
            )
            if result
            else ""
        )
        self.layers.set_estimate(result.estimate if result else None)
        self.table.resizeColumnsToContents()
        self._drawn.clear()
        self._redraw()

    def _figure_for(self, view: int, result: ShownEstimate) -> Callable[[], Figure]:
        e = result.estimate
        metric = self.layer_metric.currentData() or "kept_bytes"
        if metric == "kept_bytes" and not e.workload.training:
            metric = "output_bytes"  # inference keeps nothing for backward
        return [
            lambda: category_figure(e.memory.at_peak.as_dict(), chart_style(height_in=2.4), e.memory.peak_bytes),
            lambda: layer_figure(e.layers, metric, 15, chart_style()),
            lambda: timeline_figure(e.timeline, chart_style(), e.memory.peak_bytes),
            lambda: batch_curve_figure(result.curve, result.job.required, e.workload.batch, self.cards, chart_style()),
        ][view]

    def _redraw(self, force: bool = False) -> None:
        result = self.state.result
        view = self.views.currentIndex()
        charts = (self.category, self.layer_chart, self.timeline, self.batch_chart)
        if result is None:  # File > New: no chart of the network that was there
            for each in charts:
                each.clear()
            return
        if not force and self._drawn.get(view) is result:
            return
        chart = charts[view]
        chart.set_figure(self._figure_for(view, result)())
        self._drawn[view] = result
