"""Stand-in for the Live GPUs panel until advisor/ui/live_gpus.py (QtLiveGpusPanel) merges.

main_window.create_live_panel() is the one place the live panel is created; swap it there.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from advisor.ui.i18n import tr


class QtLivePlaceholder(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        label = QLabel(tr("No GPU reader connected"))
        label.setObjectName("live_status")
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        hint = QLabel(tr("Live readings of the NVIDIA cards in this machine will appear here."))
        hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(label)
        layout.addWidget(hint)
        layout.addStretch(1)
