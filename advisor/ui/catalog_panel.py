"""Catalog editor: browse and search cards, see a card's prices, enter a price (price_form.py), add a card.

Reads and writes run on the worker pool; a write tells the recommendations to rank again.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from advisor.catalog import CardRecord, PriceRecord, add_card, add_price, list_cards, price_history
from advisor.catalog.repository import remove_card
from advisor.core.units import format_bytes
from advisor.ui.add_card_dialog import QtAddCardDialog
from advisor.ui.catalog_service import CatalogService
from advisor.ui.dialogs import show_error
from advisor.ui.i18n import tr
from advisor.ui.price_chart import QtPriceHistory
from advisor.ui.price_form import QtPriceForm, price_line
from advisor.ui.price_update import update_button
from advisor.ui.workers import TaskRunner

SORT_ROLE = Qt.ItemDataRole.UserRole + 1


def _item(text: str, value: object, tip: str = "") -> QStandardItem:
    item = QStandardItem(text)
    item.setData(value, SORT_ROLE)
    item.setEditable(False)
    if tip:
        item.setToolTip(tip)
    return item


class QtCatalogEditor(QWidget):
    def __init__(self, catalog: CatalogService, runner: TaskRunner, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.catalog, self.runner = catalog, runner
        self.cards: list[CardRecord] = []
        self.search = QLineEdit()
        self.search.setPlaceholderText(tr("Search cards (name, vendor, architecture)"))
        self.model = QStandardItemModel()
        self.proxy = QSortFilterProxyModel()
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)
        self.search.textChanged.connect(self.proxy.setFilterFixedString)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)  # A to Z: sorting alone started at Z
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(20)
        self.prices = QListWidget()
        self.title = QLabel(tr("Select a card to see and edit its prices."))
        self.title.setWordWrap(True)
        add_card_button = QPushButton(tr("Add your own card…"))
        add_card_button.clicked.connect(self.open_add_card)
        self.remove_button = QPushButton(tr("Remove card"))
        self.remove_button.setToolTip(tr("Delete the selected card; only cards you added or edited"))
        self.remove_button.setEnabled(False)
        self.remove_button.clicked.connect(self.remove_selected)
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(add_card_button)
        top.addWidget(self.remove_button)
        top.addWidget(update_button(catalog, runner, self))
        side = QWidget()
        side_layout = QVBoxLayout(side)
        side_layout.addWidget(self.title)
        side_layout.addWidget(QLabel(tr("Prices (newest first):")))
        side_layout.addWidget(self.prices, 1)
        self.price_chart = QtPriceHistory()
        side_layout.addWidget(self.price_chart, 1)
        side_layout.addLayout(self._price_form())
        # the table over the prices: beside them it showed two or three of its eight columns on a laptop screen
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(side)
        splitter.setSizes([420, 200])
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._selection_changed())
        catalog.ready.connect(self.reload)
        catalog.changed.connect(self.reload)

    def _price_form(self) -> QHBoxLayout:
        self.form = QtPriceForm()
        save = QPushButton(tr("Add price"))
        save.clicked.connect(self.save_price)
        row = QHBoxLayout()
        row.addWidget(self.form, 1)
        row.addWidget(save)
        return row

    def selected_card(self) -> str | None:
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        return str(self.proxy.index(index.row(), 0).data())

    def reload(self) -> None:
        catalog = self.catalog.catalog
        if catalog is None:
            return

        def work(_cancelled: threading.Event) -> list[CardRecord]:
            with catalog.read() as session:
                return list_cards(session)

        self.runner.start(
            "catalog-list",
            tr("Reading the catalog"),
            work,
            self._show_cards,
            lambda error: show_error(self, tr("Cannot read the catalog"), str(error)),
        )

    def _show_cards(self, cards: object) -> None:
        assert isinstance(cards, list)
        selected = self.selected_card()
        self.cards = cards
        self.model.clear()
        self.model.setHorizontalHeaderLabels(
            [
                tr("Card"),
                tr("Vendor"),
                tr("Segment"),
                tr("Memory"),
                tr("Bandwidth GB/s"),
                tr("FP32 TFLOPS"),
                tr("TDP W"),
                tr("Mine"),
            ]
        )
        for card in cards:
            self.model.appendRow(
                [
                    _item(card.name, card.name, card.source),
                    _item(card.vendor, card.vendor),
                    _item(tr(card.segment), card.segment),
                    _item(format_bytes(card.memory_bytes), card.memory_bytes, f"{card.memory_bytes:,} B"),
                    _item(f"{card.bandwidth_gbs:g}", card.bandwidth_gbs),
                    _item(f"{card.fp32_tflops:g}", card.fp32_tflops),
                    _item(str(card.tdp_w), card.tdp_w),
                    _item(tr("yes") if card.user_owned else "", card.user_owned),
                ]
            )
        self.table.resizeColumnsToContents()
        if selected:
            self.select(selected)

    def select(self, name: str) -> None:
        matches = self.proxy.match(
            self.proxy.index(0, 0), Qt.ItemDataRole.DisplayRole, name, 1, Qt.MatchFlag.MatchExactly
        )
        if matches:
            self.table.setCurrentIndex(matches[0])

    def _selection_changed(self) -> None:
        name = self.selected_card()
        owned = any(c.name == name and c.user_owned for c in self.cards)
        self.remove_button.setEnabled(owned)  # bundled cards come back with the next data update
        self.load_prices()

    def remove_selected(self) -> None:
        name, catalog = self.selected_card(), self.catalog.catalog
        if name is None or catalog is None:
            return

        def work(_cancelled: threading.Event) -> str:
            return catalog.transact(lambda s: remove_card(s, name))

        self.runner.start(
            "catalog-write",
            tr("Removing the card"),
            work,
            lambda _n: self.catalog.changed.emit(),
            lambda error: show_error(self, tr("Card not removed"), str(error)),
        )

    def load_prices(self) -> None:
        name, catalog = self.selected_card(), self.catalog.catalog
        if name is None or catalog is None:
            return

        def work(_cancelled: threading.Event) -> list[PriceRecord]:
            with catalog.read() as session:
                return price_history(session, name)

        self.runner.start(
            "catalog-prices",
            tr("Reading prices"),
            work,
            lambda p: self._show_prices(name, p),
            lambda error: show_error(self, tr("Cannot read prices"), str(error)),
        )

    def _show_prices(self, name: str, prices: object) -> None:
        assert isinstance(prices, list)
        self.title.setText(f"<b>{name}</b>")
        self.prices.clear()
        for p in reversed(prices):
            self.prices.addItem(price_line(p))
            self.prices.item(self.prices.count() - 1).setToolTip(p.source)
        self.price_chart.show_prices(name, prices)

    def save_price(self) -> None:
        name, catalog = self.selected_card(), self.catalog.catalog
        if name is None or catalog is None:
            show_error(self, tr("No card selected"), tr("Select the card whose price you are entering."))
            return
        e = self.form.entry()

        def work(_cancelled: threading.Event) -> PriceRecord:
            return catalog.transact(
                lambda s: add_price(
                    s,
                    name,
                    e.amount,
                    currency=e.currency,
                    on=e.on,
                    condition=e.condition,
                    source=e.source,
                    kind=e.kind,
                    market=e.market,
                )
            )

        def saved(_price: PriceRecord) -> None:
            self.form.source.clear()  # the next price is another listing: its source is not this one's
            self.catalog.changed.emit()

        self.runner.start(
            "catalog-write",
            tr("Saving the price"),
            work,
            saved,
            lambda error: show_error(self, tr("Price not saved"), str(error), tr("The catalog is as it was.")),
        )

    def open_add_card(self) -> QtAddCardDialog:
        dialog = QtAddCardDialog(self)
        dialog.accepted.connect(lambda: self.save_card(dialog))
        dialog.open()
        return dialog

    def save_card(self, dialog: QtAddCardDialog) -> None:
        catalog = self.catalog.catalog
        if catalog is None:
            return
        spec = dialog.spec()

        def work(_cancelled: threading.Event) -> CardRecord:
            return catalog.transact(lambda s: add_card(s, spec))

        self.runner.start(
            "catalog-write",
            tr("Adding the card"),
            work,
            lambda _c: self.catalog.changed.emit(),
            lambda error: show_error(self, tr("Card not added"), str(error)),
        )
