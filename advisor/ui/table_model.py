"""A read-only table of records for QTableView: the header and tooltips come from a function, so a language
switch re-reads them; subclasses say what each cell shows (format_row(), data()).

A row's cells are formatted once per set_items, on first use: resizeColumnsToContents asks every cell for a
dozen roles (QStyledItemDelegate::initStyleOption), and formatting the whole row for each of those asks was a
quarter of the UI tests' time. The records are frozen, and a language switch builds new panels and models
(QtMainWindow.switch_language), so formatted text cannot go stale."""

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
        self._cells: dict[int, list[tuple[str, Any]]] = {}

    def set_items(self, items: Sequence[Any]) -> None:
        self.beginResetModel()
        self.items = items
        self.columns = self._columns_of()
        self._cells = {}
        self.endResetModel()

    def format_row(self, row: int) -> list[tuple[str, Any]]:
        """(text shown, value sorted by) per column of row `row` of self.items."""
        raise NotImplementedError

    def cells(self, row: int) -> list[tuple[str, Any]]:
        """format_row(row), formatted once per set_items."""
        cells = self._cells.get(row)
        if cells is None:
            cells = self._cells[row] = self.format_row(row)
        return cells

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
