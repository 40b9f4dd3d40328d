"""Entering a price as the fact it is: amount and currency, a purchase or a rent per GPU-hour, where it was
seen (shop, used market, a cloud on demand or spot...), the date, the condition and a source; and a price
shown back as one line that says all of that."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from PySide6.QtCore import QDate
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QComboBox, QDateEdit, QDoubleSpinBox, QHBoxLayout, QLineEdit, QVBoxLayout, QWidget

from advisor.catalog import CONDITIONS, PriceRecord
from advisor.catalog.exchange import bundled_rates
from advisor.catalog.present import age_text, amount_text
from advisor.ui.i18n import tr


def market_names() -> dict[str, str]:
    """Where a price was seen, in the user's language (a function: a language switch is picked up)."""
    return {
        "msrp": tr("launch price"),
        "retail": tr("shop"),
        "used_market": tr("used market"),
        "cloud_on_demand": tr("cloud, on demand"),
        "cloud_spot": tr("cloud, spot"),
        "cloud_reserved": tr("cloud, reserved"),
    }


def markets_of(kind: str, condition: str) -> tuple[str, ...]:
    """Where such a price can come from, as the catalog files them (advisor/data/README.md): a rent is a
    cloud's; a used card is bought on the used market, a new or refurbished one in a shop (or at launch)."""
    if kind == "rent_hour":
        return ("cloud_on_demand", "cloud_spot", "cloud_reserved")
    return ("used_market",) if condition == "used" else ("retail", "msrp")


def price_line(p: PriceRecord, today: date | None = None) -> str:
    """ "2026-12-01  7.50 CNY per GPU-hour  new · cloud, on demand · 3 months old": every fact of a price,
    and how old it is, on one line."""
    per = " " + tr("per GPU-hour") if p.kind == "rent_hour" else ""
    mine = " · " + tr("entered by you") if p.user_owned else ""
    where = market_names().get(p.market, p.market)
    age = age_text(p.date, today or date.today())
    old = tr("today") if age == "today" else tr("{age} old").format(age=age)
    return f"{p.date}  {amount_text(p.amount)} {p.currency}{per}  {tr(p.condition)} · {where}{mine} · {old}"


class QtPriceBox(QDoubleSpinBox):
    """A price: a minus sign is refused as it is typed (Qt let "-50" through as "-0"); four decimals for a
    marketplace rent (0.0556 per hour), shown without trailing zeros (1499, not 1499.0000)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setDecimals(4)

    def textFromValue(self, value: float) -> str:
        return f"{value:.4f}".rstrip("0").rstrip(".")

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        if "-" in text:
            return QValidator.State.Invalid, text, pos
        return super().validate(text, pos)


@dataclass(frozen=True)
class PriceEntry:
    """What the form holds, as `catalog.add_price` takes it."""

    amount: float
    currency: str
    kind: str
    market: str
    on: date
    condition: str
    source: str


class QtPriceForm(QWidget):
    """Amount, currency, kind, market; date, condition, source (two rows); the caller adds its own button."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.amount = QtPriceBox()
        self.amount.setRange(0, 10_000_000)
        self.amount.setToolTip(tr("Price of one card, or its rent for one GPU-hour"))
        self.currency = QComboBox()  # the currencies the ranking can convert to USD
        for code in ("USD", *sorted(c for c in bundled_rates().units_per_eur if c != "USD")):
            self.currency.addItem(code, code)
        self.currency.setToolTip(tr("Currency of the price; the ranking converts it to USD at the bundled rates"))
        self.kind = QComboBox()
        self.kind.addItem(tr("purchase"), "purchase")
        self.kind.addItem(tr("rent per GPU-hour"), "rent_hour")
        self.market = QComboBox()
        self.on = QDateEdit(QDate.currentDate())
        self.on.setCalendarPopup(True)
        self.on.setMaximumDate(QDate.currentDate())  # a price is dated the day it was seen (catalog.add_price)
        self.on.setDisplayFormat("yyyy-MM-dd")
        self.on.setToolTip(tr("Date the price was seen"))
        self.condition = QComboBox()
        for condition in CONDITIONS:
            self.condition.addItem(tr(condition), condition)
        for box in (self.kind, self.condition):
            box.currentIndexChanged.connect(self._markets)
        self._markets()
        self.source = QLineEdit()
        self.source.setPlaceholderText(tr("Where you saw it (shop, cloud, address)"))
        # two rows: the price itself, then when, in what condition and where it was seen (one row of seven
        # fields made the window wider than a 1280-pixel screen)
        rows = QVBoxLayout(self)
        rows.setContentsMargins(0, 0, 0, 0)
        for widgets in ((self.amount, self.currency, self.kind, self.market), (self.on, self.condition, self.source)):
            row = QHBoxLayout()
            for widget in widgets:
                row.addWidget(widget, 1 if widget in (self.kind, self.market, self.source) else 0)
            rows.addLayout(row)

    def _markets(self) -> None:
        """A rent is of a cloud's card (condition new); the markets follow the kind and the condition."""
        renting = self.kind.currentData() == "rent_hour"
        if renting:
            self.condition.setCurrentIndex(self.condition.findData("new"))
        self.condition.setEnabled(not renting)
        names = market_names()
        self.market.clear()
        for market in markets_of(self.kind.currentData(), self.condition.currentData()):
            self.market.addItem(names[market], market)

    def entry(self) -> PriceEntry:
        return PriceEntry(
            self.amount.value(),
            self.currency.currentData(),
            self.kind.currentData(),
            self.market.currentData(),
            date.fromisoformat(self.on.date().toString("yyyy-MM-dd")),
            self.condition.currentData(),
            self.source.text().strip() or "entered by the user",
        )
