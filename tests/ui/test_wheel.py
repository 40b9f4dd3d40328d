"""The mouse wheel over a combo or spin box the user has not clicked scrolls the panel, never the value
(issue 27: under X, scrolling the workload panel turned fp32 into AMP bf16, Adam into AdamW, batch 32 into 35)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from advisor.ui import controls
from advisor.ui.main_window import QtMainWindow


def _wheel_down(widget: QWidget) -> None:
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(
        centre,
        QPointF(widget.mapToGlobal(centre.toPoint())),
        QPoint(0, 0),
        QPoint(0, -120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QCoreApplication.sendEvent(widget, event)


def _values(window: QtMainWindow) -> tuple[object, ...]:
    w = window.workload
    return (
        w.precision.currentIndex(),
        w.optimizer.currentIndex(),
        w.batch.value(),
        window.recommendations.max_gpus.currentIndex(),
        window.recommendations.budget.value(),
    )


def test_the_wheel_leaves_unfocused_boxes_alone(qtbot: QtBot, window: QtMainWindow) -> None:
    w = window.workload
    boxes = (w.precision, w.optimizer, w.batch, window.recommendations.max_gpus, window.recommendations.budget)
    before = _values(window)
    for box in boxes:
        assert not box.hasFocus()
        _wheel_down(box)
        assert box.focusPolicy() != Qt.FocusPolicy.WheelFocus  # the wheel does not take focus either
    assert _values(window) == before

    guard = controls._guard
    assert guard is not None
    app = QCoreApplication.instance()
    assert app is not None
    app.removeEventFilter(guard)  # without the guard the same events change the values: the test can fail
    try:
        for box in boxes:
            _wheel_down(box)
        assert _values(window) != before
    finally:
        app.installEventFilter(guard)
