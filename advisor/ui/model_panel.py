"""The model area: pick a zoo model or build one; what is loaded is always editable in the builder."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from advisor.core import zoo
from advisor.core.errors import AdvisorError
from advisor.core.zoo import library
from advisor.ui import draft_edits
from advisor.ui.builder import QtNetworkBuilder
from advisor.ui.controls import narrow
from advisor.ui.dialogs import show_error
from advisor.ui.i18n import tr
from advisor.ui.state import AppState


def fill_zoo(box: QComboBox, query: str = "") -> None:
    """Architectures first; after a separator the small "seed:" networks, each saying what it is for (they
    are the networks the H200 calibration measured, not models anyone trains). A query keeps the names
    library.search matches (name, family, Hub repository, size)."""
    box.clear()
    names = library.search(query, zoo.zoo_names())
    seeds = [n for n in names if n.startswith("seed:")]
    box.addItems([n for n in names if n not in seeds])
    if seeds:
        box.insertSeparator(box.count())
    for name in seeds:
        box.addItem(name)
        box.setItemData(
            box.count() - 1,
            tr(
                "A small test network the H200 calibration measured "
                "(shared/calibration): compare the estimate with real readings"
            ),
            Qt.ItemDataRole.ToolTipRole,
        )


class QtModelPanel(QWidget):
    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.zoo = QComboBox()
        fill_zoo(self.zoo)
        narrow(self.zoo)
        self.zoo.setPlaceholderText(tr("(not a zoo model)"))
        self.zoo.setToolTip(tr("Built-in architectures, built layer by layer"))
        self.search = QLineEdit()
        self.search.setPlaceholderText(tr("Search: name, family, size (8b, <10b, moe)"))
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.filter_zoo)
        load = QPushButton(tr("Load"))
        load.setToolTip(tr("Replace the network with this model (undo brings yours back)"))
        load.clicked.connect(lambda: self.load_zoo(self.zoo.currentText()))
        self.source = QLabel()
        # a file's full path must not set the window's minimum width: one line, cut at the panel's edge, whole
        # in the tooltip. Not word-wrapped: a wrapping label makes the left column height-for-width, which the
        # scroll area sizes by its preferred height, and the workload rows fell out of a 720 px screen
        self.source.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        row = QHBoxLayout()
        row.addWidget(QLabel(tr("Zoo:")))
        row.addWidget(self.search)
        row.addWidget(self.zoo, 1)
        row.addWidget(load)
        self.builder = QtNetworkBuilder(state.draft)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.source)
        layout.addWidget(self.builder, 1)
        state.draft.changed.connect(self.refresh)
        self.refresh()

    def filter_zoo(self, query: str) -> None:
        """The chooser keeps the matches, the first one chosen so that Load takes it."""
        fill_zoo(self.zoo, query)
        self.zoo.setCurrentIndex(0 if query and self.zoo.count() else -1)

    def load_zoo(self, name: str) -> None:
        seq_len = self.state.choice.graph_length if zoo.takes_seq_len(name) else None
        try:
            graph = zoo.build(name, seq_len)
        except AdvisorError as error:
            show_error(self, tr("Cannot build the model"), str(error))
            return
        draft_edits.load_graph_into(self.state.draft, graph, f"zoo:{name}")

    def refresh(self) -> None:
        draft = self.state.draft
        text = tr("Model: {name} ({n} layers)").format(name=draft.name, n=len(draft.rows))
        if draft.source:
            text += "  ·  " + tr("from {source}").format(source=draft.source)
        self.source.setText(text)
        self.source.setToolTip(text)
        self.zoo.blockSignals(True)
        if draft.source.startswith("zoo:"):
            self.zoo.setCurrentText(draft.source[4:])
        else:  # a file or a built network: the box must not keep naming the last zoo model
            self.zoo.setCurrentIndex(-1)
        self.zoo.blockSignals(False)
