"""Small widget factories shared by the app's panels."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QComboBox


def combo(items: Sequence[tuple[object, str]], tip: str) -> QComboBox:
    """A combo box of (value, label) items: it shows the labels and hands back the values as currentData()."""
    box = QComboBox()
    for value, label in items:
        box.addItem(label, value)
    box.setToolTip(tip)
    return box


def narrow(box: QComboBox, characters: int = 10) -> None:
    """A combo box whose longest entry does not set the window's minimum width (the list still shows it)."""
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(characters)
