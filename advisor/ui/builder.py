"""The network builder: the layer list (with inferred shapes and errors), the edit buttons, the layer form."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from advisor.core.ops import OP_REGISTRY
from advisor.core.units import format_shape
from advisor.ui import draft_edits
from advisor.ui.controls import narrow
from advisor.ui.draft import NetworkDraft
from advisor.ui.i18n import tr
from advisor.ui.i18n.errors import error_text
from advisor.ui.layer_form import QtLayerForm

Index = QModelIndex | QPersistentModelIndex


class DraftTableModel(QAbstractTableModel):
    """Rows of the draft: name, kind, output shape per sample (inferred), and the problem if any."""

    def __init__(self, draft: NetworkDraft) -> None:
        super().__init__()
        self.draft = draft
        draft.changed.connect(self._reset)

    def _reset(self) -> None:
        self.beginResetModel()
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.draft.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 4

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return (tr("Layer"), tr("Kind"), tr("Output shape"), tr("Problem"))[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self.draft.rows[index.row()]
        result = self.draft.result
        error = error_text(result.errors.get(index.row(), ""))  # the layers' English, in the user's language
        if role == Qt.ItemDataRole.DisplayRole:
            shape = result.shapes[index.row()] if index.row() < len(result.shapes) else None
            shape_text = format_shape(shape) if shape is not None else ("!" if error else "?")
            return (row.name, row.kind, shape_text, error or "")[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            if error:
                return error
            if index.column() == 2:
                return tr("Output shape of one sample (the batch dimension left out), inferred from the layers above")
        if role == Qt.ItemDataRole.BackgroundRole and error:
            return QBrush(QColor("#FDE2E1"))
        return None


class QtNetworkBuilder(QWidget):
    def __init__(self, draft: NetworkDraft, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.draft = draft
        self.model = DraftTableModel(draft)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # sized to the contents once per change, not continuously: long layer names must not widen the window
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setMinimumSectionSize(40)
        draft.changed.connect(self.table.resizeColumnsToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.form = QtLayerForm(draft)
        self.kind = QComboBox()
        self.kind.addItems(sorted(OP_REGISTRY))
        self.kind.setCurrentText("linear")
        narrow(self.kind)
        self.kind.setToolTip(tr("Layer kinds of the estimator"))
        buttons = QHBoxLayout()
        for text, tip, slot in (
            (tr("Add"), tr("Add a layer of this kind below the selected one"), self.add),
            (tr("Remove"), tr("Remove the selected layer"), self.remove),
            ("▲", tr("Move the selected layer up"), lambda: self.move_selected(-1)),
            ("▼", tr("Move the selected layer down"), lambda: self.move_selected(1)),
        ):
            button = QPushButton(text)
            if len(text) == 1:  # the arrows: narrow, so the panel fits beside the tabs on a laptop
                button.setFixedWidth(32)
            button.setToolTip(tip)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        top = QHBoxLayout()
        top.addWidget(self.kind, 1)
        top.addLayout(buttons)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        # the form scrolls by itself: a conv's ten fields must not push the workload rows out of a 720 px screen
        form_scroll = QScrollArea()
        form_scroll.setWidget(self.form)
        form_scroll.setWidgetResizable(True)
        form_scroll.setFrameShape(QFrame.Shape.NoFrame)
        form_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        form_scroll.setMinimumWidth(self.form.minimumSizeHint().width())
        splitter.addWidget(form_scroll)
        splitter.setSizes([300, 200])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(splitter)
        self.table.selectionModel().currentRowChanged.connect(lambda cur, _prev: self.form.show_row(cur.row()))
        self.form.show_row(-1)
        self.select(0)

    def selected(self) -> int:
        index = self.table.currentIndex()
        return index.row() if index.isValid() else -1

    def select(self, row: int) -> None:
        if 0 <= row < self.model.rowCount():
            self.table.selectRow(row)
            self.form.show_row(row)

    def add(self) -> None:
        row = self.selected()
        at = draft_edits.add_layer(self.draft, self.kind.currentText(), row + 1 if row >= 0 else None)
        self.select(at)

    def remove(self) -> None:
        row = self.selected()
        if row >= 0:
            draft_edits.remove_layer(self.draft, row)
            self.select(min(row, len(self.draft.rows) - 1))

    def move_selected(self, offset: int) -> None:
        row = self.selected()
        if row >= 0:
            self.select(draft_edits.move_layer(self.draft, row, offset))
