"""The recommendations' time-against-cost chart (advisor.charts.job_cost), shown once a job size is given."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QWidget

from advisor.charts.job_cost import job_cost_figure
from advisor.recommend.recommendation import Recommendation
from advisor.ui.chart_canvas import QtChart, chart_style


class QtJobCost(QtChart):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setVisible(False)

    def show_entries(self, entries: Sequence[Recommendation]) -> None:
        costed = any(e.job_cost_usd is not None for e in entries)
        self.setVisible(costed)
        if costed:
            self.set_figure(job_cost_figure(entries, chart_style(width_in=6.0, height_in=3.0)))
