"""The catalog tab's price-history chart of the selected card (the figure comes from advisor.charts.prices)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QWidget

from advisor.catalog import PriceRecord
from advisor.charts.prices import price_history_figure
from advisor.ui.chart_canvas import QtChart, chart_style


class QtPriceHistory(QtChart):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(180)  # with the two-row price form below it, the card table keeps 150 px at 720

    def show_prices(self, card: str, prices: Sequence[PriceRecord]) -> None:
        self.set_figure(price_history_figure(card, prices, chart_style(width_in=4.0, height_in=2.6)))
