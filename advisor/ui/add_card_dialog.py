"""A dialog for a card the catalog does not have: the figures the ranking needs, with their units."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from advisor.catalog import SEGMENTS, VENDORS, CardSpec
from advisor.core.units import GIB
from advisor.ui.i18n import tr


def _number(maximum: float, decimals: int, suffix: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0, maximum)
    box.setDecimals(decimals)
    box.setSuffix(suffix)
    return box


class QtAddCardDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(tr("Add your own card"))
        self.name = QLineEdit()
        self.vendor = QComboBox()
        self.vendor.addItems(list(VENDORS))
        self.architecture = QLineEdit()
        self.segment = QComboBox()
        for segment in SEGMENTS:
            self.segment.addItem(tr(segment), segment)
        self.memory = _number(4096, 1, " GiB")
        self.memory_type = QLineEdit("GDDR6")
        self.bandwidth = _number(100_000, 1, " GB/s")
        self.fp32 = _number(10_000, 2, " TFLOPS")
        self.tdp = QSpinBox()
        self.tdp.setRange(1, 5000)
        self.tdp.setSuffix(" W")
        self.source = QLineEdit(tr("entered by the user"))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        for label, widget in ((tr("Name"), self.name), (tr("Vendor"), self.vendor),
                              (tr("Architecture"), self.architecture), (tr("Segment"), self.segment),
                              (tr("Memory"), self.memory), (tr("Memory type"), self.memory_type),
                              (tr("Bandwidth"), self.bandwidth), (tr("FP32 TFLOPS"), self.fp32),
                              (tr("TDP W"), self.tdp), (tr("Source"), self.source)):
            form.addRow(label, widget)
        form.addRow(self.buttons)

    def spec(self) -> CardSpec:
        return CardSpec(
            name=self.name.text().strip(), vendor=self.vendor.currentText(),
            architecture=self.architecture.text().strip() or "unknown", segment=self.segment.currentData(),
            memory_bytes=int(self.memory.value() * GIB), memory_type=self.memory_type.text().strip(),
            bandwidth_gbs=self.bandwidth.value(), fp32_tflops=self.fp32.value(), tdp_w=self.tdp.value(),
            source=self.source.text().strip() or "entered by the user")
