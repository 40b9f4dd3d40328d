"""The money side of a recommendation as the app shows it: the price cell, the detail's software path,
price (its kind, age and source) and job cost, in the user's language; and the price-basis and software
selectors. Figures come from the engine
(advisor/recommend/money.py), the same ones the command line and the PDF print."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QDoubleSpinBox, QHBoxLayout

from advisor.catalog.present import amount_text
from advisor.catalog.software import SOFTWARE_PATHS
from advisor.recommend.money import BASES, MoneyOptions, PriceBasis, as_basis
from advisor.recommend.present import job_cells, price_text
from advisor.recommend.recommendation import Recommendation
from advisor.recommend.service import CardFilter
from advisor.ui.controls import combo
from advisor.ui.i18n import tr


def price_cell(r: Recommendation) -> str:
    return price_text(r, tr)  # the command line's and the PDF's cell, in the user's language


SOURCE_CHARS = 120  # a bundled source can run to 400 characters: the catalog tab shows it whole


def short_source(text: str) -> str:
    return text if len(text) <= SOURCE_CHARS else text[: SOURCE_CHARS - 1].rstrip() + "…"


def money_lines(r: Recommendation) -> list[str]:
    lines = [tr("PyTorch runs this card through {software}.").format(software=r.software)]
    if r.price_usd is None:
        lines.append(tr("No price on this basis: add one in the Catalog tab (or `advisor catalog import-prices`)."))
        return lines
    if r.price_kind == "rent_hour":
        lines.append(
            tr("Rent {price} USD per hour for all cards ({date}, {source}).").format(
                price=amount_text(r.price_usd), date=r.price_date, source=short_source(r.price_source or "")
            )
        )
    else:
        lines.append(
            tr("Price {price} USD ({condition}, {date}).").format(
                price=f"{r.price_usd:,.0f}", condition=tr(r.price_condition or "new"), date=r.price_date
            )
        )
    if r.price_old:
        lines.append(tr("This price is over a year old."))
    hours, cost, break_even = job_cells(r)
    if r.job_hours is not None and r.job_cost_usd is not None:
        lines.append(tr("The whole job: {hours} h, {cost} USD.").format(hours=hours, cost=cost))
    if r.break_even_hours is not None:
        lines.append(tr("Buying beats renting the same cards after {hours} h.").format(hours=break_even))
    return lines


class JobSizeBox(QDoubleSpinBox):
    """A count of samples or tokens that also takes scientific notation: QDoubleSpinBox's own validator stopped
    at the "e" of "1.2e8" and the job became 1 sample, silently (issue 27)."""

    def _number(self, text: str) -> float | None:
        body = text.removeprefix(self.prefix()).removesuffix(self.suffix()).replace(",", "").replace("_", "")
        body = body.strip()
        if body in ("", self.specialValueText().strip()):
            return 0.0
        try:
            number = float(body)
        except ValueError:
            return None
        return number if 0 <= number <= self.maximum() else None

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        state = QValidator.State.Acceptable if self._number(text) is not None else QValidator.State.Intermediate
        return state, text, pos

    def valueFromText(self, text: str) -> float:
        number = self._number(text)
        return round(number) if number is not None else self.value()


class MoneyFilters:
    """The price-basis and software-path selectors of the recommendations panel (added beside its filters)."""

    def __init__(self, row: QHBoxLayout, changed: Callable[[], None]) -> None:
        bases = {
            "new": tr("new price"),
            "used": tr("used price"),
            "rent": tr("rent per GPU-hour"),
            "lowest": tr("lowest purchase price"),
        }
        self.basis = combo([(b.value, bases[b]) for b in BASES], tr("Which price the money objectives rank on"))
        self.software = combo(
            [(None, tr("any software")), *((s, s) for s in SOFTWARE_PATHS)],
            tr("Only cards PyTorch runs through this software path"),
        )
        self.samples = JobSizeBox()
        self.samples.setRange(0, 1e15)
        self.samples.setDecimals(0)
        self.samples.setGroupSeparatorShown(True)  # 100,000,000 samples, not 100000000
        self.samples.setSingleStep(1e6)
        self.samples.setSpecialValueText(tr("no job size"))
        self.samples.setSuffix(" " + tr("samples"))
        self.samples.setToolTip(
            tr(
                "Samples in the whole job: adds its hours, its cost and when buying beats "
                "renting, and the time-against-cost chart"
            )
        )
        at = max(row.count() - 1, 0)  # before the stretch that ends the row
        for widget in (self.samples, self.software, self.basis):
            row.insertWidget(at, widget)
        for box in (self.basis, self.software):
            box.currentIndexChanged.connect(lambda *_: changed())
        self.samples.valueChanged.connect(lambda *_: changed())

    def values(self) -> dict[str, object]:
        """What the user chose, to keep across a restart and a language switch (settings.py)."""
        return {
            "basis": self.basis.currentData(),
            "software": self.software.currentData(),
            "samples": self.samples.value(),
        }

    def restore(self, values: dict[str, object]) -> None:
        """Unknown or malformed values (an older settings file) leave that control as it is."""
        for box, key in ((self.basis, "basis"), (self.software, "software")):
            at = box.findData(values.get(key))
            if at >= 0:
                box.setCurrentIndex(at)
        samples = values.get("samples")
        if isinstance(samples, int | float) and 0 <= samples <= self.samples.maximum():
            self.samples.setValue(float(samples))

    def options(self, basis: PriceBasis) -> MoneyOptions:
        return MoneyOptions(basis, samples=self.samples.value() or None)

    def card_filter(self, base: CardFilter) -> CardFilter:
        basis = as_basis(self.basis.currentData())
        return replace(
            base,
            allow_used=base.allow_used and basis is PriceBasis.NEW,
            price_basis=basis,
            software=self.software.currentData(),
        )
