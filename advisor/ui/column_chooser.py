"""Which columns a table shows: a "Columns" button (and the header's right-click menu) with one checkable
entry per column, so a narrow screen shows the essential ones without scrolling sideways."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QMenu, QTableView, QToolButton

from advisor.ui.i18n import tr


def column_menu(table: QTableView) -> QMenu:
    """Rebuilt on each opening: the headers follow the language and the model."""
    menu = QMenu(table)
    model, header = table.model(), table.horizontalHeader()
    for column in range(model.columnCount()):
        action = menu.addAction(str(model.headerData(column, header.orientation())).replace("\n", " "))
        action.setCheckable(True)
        action.setChecked(not header.isSectionHidden(column))
        action.toggled.connect(lambda shown, c=column: header.setSectionHidden(c, not shown))
    return menu


def add_column_chooser(table: QTableView, hidden: Iterable[int]) -> QToolButton:
    header = table.horizontalHeader()
    for column in hidden:
        header.setSectionHidden(column, True)
    button = QToolButton()
    button.setText(tr("Columns…"))
    button.setToolTip(tr("Choose which columns the table shows"))
    button.clicked.connect(lambda: column_menu(table).exec(button.mapToGlobal(QPoint(0, button.height()))))
    header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    header.customContextMenuRequested.connect(lambda pos: column_menu(table).exec(header.mapToGlobal(pos)))
    return button
