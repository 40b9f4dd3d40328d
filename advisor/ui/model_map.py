"""Choose the model: the zoo's classifiers by accuracy, compute and size (advisor.charts.zoo_map).

Hovering a circle shows its numbers; clicking one loads that model into the builder, as the zoo picker
does (one undo step). The user's own model is drawn as a line at its compute when it is a 1000-class
image classifier that is not one of the zoo's.
"""

from __future__ import annotations

from matplotlib.backend_bases import Event, MouseEvent
from matplotlib.collections import PathCollection
from matplotlib.text import Annotation
from PySide6.QtCore import Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from advisor.charts.zoo_map import MODELS_GID, point_text, zoo_map_figure
from advisor.core import zoo
from advisor.core.zoo.accuracy import TOP1, ModelPoint, estimate_point, is_imagenet_classifier, zoo_points
from advisor.ui import draft_edits
from advisor.ui.chart_canvas import QtChart, chart_style
from advisor.ui.i18n import tr
from advisor.ui.state import AppState


def own_point(state: AppState) -> ModelPoint | None:
    result = state.result
    if result is None or state.draft.source.removeprefix("zoo:") in TOP1:
        return None
    graph = result.graph
    if not is_imagenet_classifier(graph.task, graph.nodes[-1].output.shape):
        return None
    return estimate_point(result.estimate)


class QtModelMap(QWidget):
    model_loaded = Signal(str)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.points = list(zoo_points())
        self.chart = QtChart()
        self.hint = QLabel(tr("Hover a circle for its numbers; click it to load that model."))
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addWidget(self.chart, 1)
        self.tip: Annotation | None = None
        self.shown_own: tuple[ModelPoint | None, str | None] | None = None
        self.stale = True  # drawn when the tab is first shown (showEvent)
        state.result_changed.connect(self.refresh)
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        own = own_point(self.state)
        source = self.state.draft.source
        current = source[4:] if source.startswith("zoo:") else None
        if not force and not self.stale and (own, current) == self.shown_own:
            return  # the map only changes with the user's model, not with the batch slider
        if not self.isVisible():
            # a hidden tab waits for showEvent: laying out and placing ~40 names costs ~0.35 s of CPU
            # (profiled in the tests' windows), paid at start and on every new network nobody looks at here
            self.stale = True
            return
        self.stale = False
        self.shown_own = (own, current)
        self.chart.set_figure(zoo_map_figure(self.points, own, chart_style(width_in=7.2, height_in=4.8), current))
        canvas = self.chart.canvas
        assert canvas is not None
        axis = canvas.figure.axes[0]
        self.tip = axis.annotate(
            "",
            (0, 0),
            xytext=(12, 12),
            textcoords="offset points",
            fontsize=8,
            bbox={"boxstyle": "round", "fc": "#FFFFF0", "ec": "#999999"},
            zorder=10,
        )
        self.tip.set_visible(False)
        canvas.mpl_connect("motion_notify_event", self._hover)
        canvas.mpl_connect("button_press_event", self._click)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self.stale:
            self.refresh(force=True)

    def _models(self) -> PathCollection | None:
        figure = self.chart.figure
        if figure is None or not figure.axes:
            return None
        found = [c for c in figure.axes[0].collections if c.get_gid() == MODELS_GID]
        return found[0] if found and isinstance(found[0], PathCollection) else None

    def point_at(self, event: MouseEvent) -> ModelPoint | None:
        models = self._models()
        if models is None or event.inaxes is None:
            return None
        hit, details = models.contains(event)
        indices = details.get("ind", []) if hit else []
        # overlapping circles: the smallest one under the cursor (it is the one the user aims at)
        return min((self.points[i] for i in indices), key=lambda p: p.param_count, default=None)

    def _hover(self, event: Event) -> None:
        if self.tip is None or not isinstance(event, MouseEvent):
            return
        point = self.point_at(event)
        visible = point is not None
        if point is not None:
            self.tip.xy = (point.forward_macs / 1e9, point.top1_percent or 0.0)
            self.tip.set_text(point_text(point, tr))
        if visible or self.tip.get_visible():
            self.tip.set_visible(visible)
            assert self.chart.canvas is not None
            self.chart.canvas.draw_idle()  # type: ignore[no-untyped-call]

    def _click(self, event: Event) -> None:
        if isinstance(event, MouseEvent) and event.button == 1:
            point = self.point_at(event)
            if point is not None:
                self.load(point.name)

    def load(self, name: str) -> None:
        draft_edits.load_graph_into(self.state.draft, zoo.build(name), f"zoo:{name}")
        self.model_loaded.emit(name)
