"""A dialog for a card the catalog does not have: the figures the ranking needs, with their units."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from advisor.catalog import SEGMENTS, VENDORS, CardSpec
from advisor.catalog.records import missing_figures
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
        self.problem = QLabel()
        self.problem.setObjectName("problem")
        self.problem.setStyleSheet("color: #B00020")
        self.problem.setWordWrap(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        for label, widget in (
            (tr("Name"), self.name),
            (tr("Vendor"), self.vendor),
            (tr("Architecture"), self.architecture),
            (tr("Segment"), self.segment),
            (tr("Memory"), self.memory),
            (tr("Memory type"), self.memory_type),
            (tr("Bandwidth"), self.bandwidth),
            (tr("FP32 TFLOPS"), self.fp32),
            (tr("TDP W"), self.tdp),
            (tr("Source"), self.source),
        ):
            form.addRow(label, widget)
        form.addRow(self.problem)
        form.addRow(self.buttons)
        self.fields = {
            "name": self.name,
            "memory_bytes": self.memory,
            "bandwidth_gbs": self.bandwidth,
            "fp32_tflops": self.fp32,
            "tdp_w": self.tdp,
        }

    def accept(self) -> None:
        """Stays open, naming what is missing, until the card has every figure the ranking divides by (an
        empty card once broke every ranking with a division by zero)."""
        missing = missing_figures(self.spec())
        if missing:
            labels = {
                "name": tr("a name"),
                "memory_bytes": tr("memory above 0 GiB"),
                "bandwidth_gbs": tr("bandwidth above 0 GB/s"),
                "fp32_tflops": tr("an FP32 rate above 0"),
                "tdp_w": tr("a TDP above 0 W"),
            }
            self.problem.setText(tr("The card needs {what}.").format(what=", ".join(labels[m] for m in missing)))
            self.fields[missing[0]].setFocus()
            return
        self.problem.clear()
        super().accept()

    def spec(self) -> CardSpec:
        return CardSpec(
            name=self.name.text().strip(),
            vendor=self.vendor.currentText(),
            architecture=self.architecture.text().strip() or "unknown",
            segment=self.segment.currentData(),
            memory_bytes=int(self.memory.value() * GIB),
            memory_type=self.memory_type.text().strip(),
            bandwidth_gbs=self.bandwidth.value(),
            fp32_tflops=self.fp32.value(),
            tdp_w=self.tdp.value(),
            source=self.source.text().strip() or "entered by the user",
        )
