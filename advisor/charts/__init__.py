"""matplotlib Figure builders shared by the desktop app and the PDF report.

Each builder takes plain records (core dataclasses or simple sequences) and returns a
`matplotlib.figure.Figure` that is not attached to any backend: the app wraps it in a Qt canvas, the
report saves it. No pyplot (global state, and it would pick a GUI backend) and no Qt here.
Text goes through a `text` callable so a caller can translate labels; `ChartStyle` names the font.
"""

from advisor.charts.memory import (
    CardLine,
    batch_curve_figure,
    category_figure,
    layer_figure,
    timeline_figure,
)
from advisor.charts.style import CATEGORY_COLORS, ChartStyle

__all__ = [
    "CATEGORY_COLORS",
    "CardLine",
    "ChartStyle",
    "batch_curve_figure",
    "category_figure",
    "layer_figure",
    "timeline_figure",
]
