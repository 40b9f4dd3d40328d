"""A read-only table of records for QTableView: the header and tooltips come from a function, so a language
switch re-reads them; subclasses say what each cell shows (data())."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

Index = QModelIndex | QPersistentModelIndex
SORT_ROLE = Qt.ItemDataRole.UserRole


class RecordTableModel(QAbstractTableModel):
    def __init__(self, columns: Callable[[], list[tuple[str, str]]]) -> None:
        super().__init__()
        self._columns_of = columns
        self.columns = columns()  # (header, tooltip) per column
        self.items: Sequence[Any] = ()

    def set_items(self, items: Sequence[Any]) -> None:
        self.beginResetModel()
        self.items = items
        self.columns = self._columns_of()
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.items)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section][0]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.columns[section][1]
        return None
