"""'Choose the model': hovering a circle shows its numbers, clicking it loads the model, own model drawn."""

from __future__ import annotations

from matplotlib.backend_bases import MouseEvent
from pytestqt.qtbot import QtBot

from advisor.charts.zoo_map import CURRENT_GID, OWN_GID
from advisor.core import zoo
from advisor.core.graph import Graph
from advisor.ui import draft_edits
from advisor.ui.main_window import QtMainWindow
from advisor.ui.model_map import QtModelMap


def event_at(view: QtModelMap, kind: str, name: str) -> MouseEvent:
    canvas = view.chart.canvas
    assert canvas is not None
    canvas.draw()  # the layout engine places the axes on the first draw
    point = next(p for p in view.points if p.name == name)
    x, y = canvas.figure.axes[0].transData.transform((point.forward_macs / 1e9, point.top1_percent))
    return MouseEvent(kind, canvas, x, y, button=1 if kind == "button_press_event" else None)


def test_hover_shows_the_numbers(qtbot: QtBot, window: QtMainWindow) -> None:
    view = window.model_map
    window.tabs.setCurrentWidget(view)
    assert view.tip is not None and not view.tip.get_visible()
    event = event_at(view, "motion_notify_event", "efficientnet_b0")
    view.chart.canvas.callbacks.process("motion_notify_event", event)  # type: ignore[union-attr]
    assert view.tip.get_visible()
    assert view.tip.get_text() == "efficientnet_b0\ntop-1 77.7%\n0.39 GMACs per image\n5.3 M parameters"
    away = MouseEvent("motion_notify_event", view.chart.canvas, 5, 5)
    view.chart.canvas.callbacks.process("motion_notify_event", away)  # type: ignore[union-attr]
    assert not view.tip.get_visible()


def test_click_loads_the_model(qtbot: QtBot, window: QtMainWindow) -> None:
    view = window.model_map
    window.tabs.setCurrentWidget(view)  # the map is drawn once its tab is shown
    with qtbot.waitSignal(view.model_loaded, timeout=2000) as loaded:
        view.chart.canvas.callbacks.process(  # type: ignore[union-attr]
            "button_press_event", event_at(view, "button_press_event", "mobilenet_v2")
        )
    assert loaded.args == ["mobilenet_v2"]
    assert window.state.draft.source == "zoo:mobilenet_v2"
    assert window.model_panel.zoo.currentText() == "mobilenet_v2"
    window.state.draft.undo.undo()  # one undo step, as the zoo picker
    assert window.state.draft.source != "zoo:mobilenet_v2"


def renamed(graph: Graph, name: str) -> Graph:
    return Graph(name, graph.nodes, graph.task)


def test_own_imagenet_classifier_is_a_line_with_accuracy_unknown(qtbot: QtBot, window: QtMainWindow) -> None:
    view = window.model_map
    window.tabs.setCurrentWidget(view)
    draft_edits.load_graph_into(window.state.draft, renamed(zoo.build("resnet18"), "my_net"), "my_net.json")
    window.state.recompute()
    figure = view.chart.figure
    assert figure is not None
    assert [line for line in figure.axes[0].lines if line.get_gid() == OWN_GID]
    assert any("my_net" in t.get_text() and "accuracy unknown" in t.get_text() for t in figure.axes[0].texts)
    own, _current = view.shown_own or (None, None)
    assert own is not None and own.forward_macs == 1_814_073_344
    view.chart.grab().save("/tmp/model_map_tab.png")
    window.model_panel.load_zoo("gpt2")  # a language model has no place on the map
    window.state.recompute()
    assert view.shown_own == (None, "gpt2")  # no own point; gpt2 is not on the map, so nothing is ringed


def test_a_hidden_map_is_drawn_when_its_tab_is_shown(qtbot: QtBot, window: QtMainWindow) -> None:
    view = window.model_map
    assert not view.isVisible() and view.chart.canvas is None  # not built behind the first tab
    window.tabs.setCurrentWidget(view)
    assert view.shown_own == (None, "resnet50") and view.chart.figure is not None  # the window's first model
    window.tabs.setCurrentIndex(0)
    window.model_panel.load_zoo("resnet18")  # a new model while the map is hidden: redrawn on the next show
    window.state.recompute()
    assert view.stale and view.shown_own == (None, "resnet50")
    window.tabs.setCurrentWidget(view)
    assert not view.stale and view.shown_own == (None, "resnet18")
    assert [c for c in view.chart.figure.axes[0].collections if c.get_gid() == CURRENT_GID]  # resnet18 ringed
