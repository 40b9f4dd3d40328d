"""A matplotlib Figure from advisor.charts shown in Qt."""

from __future__ import annotations

from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg
from matplotlib.figure import Figure
from PySide6.QtWidgets import QSizePolicy, QVBoxLayout, QWidget

from advisor.charts import ChartStyle
from advisor.ui.i18n import fonts, tr


def chart_style(**size: float) -> ChartStyle:
    return ChartStyle(text=tr, fonts=fonts(), **size)  # type: ignore[arg-type]


class QtChart(QWidget):
    """Holds one canvas; a new figure replaces the old canvas (builders return fresh figures)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.box = QVBoxLayout(self)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.canvas: FigureCanvasQTAgg | None = None
        self.setMinimumHeight(160)

    def clear(self) -> None:
        if self.canvas is not None:
            self.box.removeWidget(self.canvas)
            self.canvas.deleteLater()
            self.canvas = None

    def set_figure(self, figure: Figure) -> None:
        canvas = FigureCanvasQTAgg(figure)  # type: ignore[no-untyped-call]
        canvas.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        if self.canvas is not None:
            self.box.replaceWidget(self.canvas, canvas)
            self.canvas.deleteLater()
        else:
            self.box.addWidget(canvas)
        self.canvas = canvas
        canvas.draw_idle()  # type: ignore[no-untyped-call]

    @property
    def figure(self) -> Figure | None:
        return self.canvas.figure if self.canvas is not None else None
