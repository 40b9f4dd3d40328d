"""Small widget factories shared by the app's panels."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSlider, QAbstractSpinBox, QComboBox, QSpinBox


def combo(items: Sequence[tuple[object, str]], tip: str) -> QComboBox:
    """A combo box of (value, label) items: it shows the labels and hands back the values as currentData()."""
    box = QComboBox()
    for value, label in items:
        box.addItem(label, value)
    box.setToolTip(tip)
    return box


def spin_box(high: int, low: int = 1) -> QSpinBox:
    """A counting box from `low` to `high` whose thousands are separated (8,192 tokens, not 8192)."""
    box = QSpinBox()
    box.setRange(low, high)
    box.setGroupSeparatorShown(True)
    return box


def narrow(box: QComboBox, characters: int = 10) -> None:
    """A combo box whose longest entry does not set the window's minimum width (the list still shows it)."""
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(characters)


class WheelGuard(QObject):
    """The mouse wheel scrolls the panel under the pointer; it changes a combo box, spin box or slider only
    once the user has clicked into it. Qt hands a wheel event to whatever value widget is under the pointer,
    so scrolling down the workload panel turned fp32 into AMP bf16 and batch 32 into 35 (issue 27, under X).
    The unfocused widget's event goes to its parent instead (up to the scroll area), and the wheel no longer
    gives those widgets focus (Qt.WheelFocus is the spin box's default)."""

    GUARDED = (QAbstractSpinBox, QComboBox, QAbstractSlider)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, self.GUARDED) or watched.hasFocus():
            return False
        if watched.focusPolicy() == Qt.FocusPolicy.WheelFocus:
            watched.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        parent = watched.parentWidget()
        if parent is not None:
            QCoreApplication.sendEvent(parent, event)
        return True


_guard: WheelGuard | None = None


def install_wheel_guard() -> None:
    """Once per application: every value widget of every window is guarded, however it was made."""
    global _guard
    app = QCoreApplication.instance()
    if app is None or (_guard is not None and _guard.parent() is app):
        return
    _guard = WheelGuard(app)
    app.installEventFilter(_guard)
