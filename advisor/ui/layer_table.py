"""The per-layer table of an estimate: sortable by any column (numbers sort as numbers), with tooltips."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Qt

from advisor.core.estimate import Estimate, LayerRow
from advisor.core.units import format_bytes, format_count, format_shape
from advisor.ui.i18n import tr
from advisor.ui.table_model import SORT_ROLE, Index, RecordTableModel


def _columns() -> list[tuple[str, str]]:
    """(header, tooltip) per column; built on demand so a language switch is picked up."""
    return [
        (tr("Layer"), tr("Layer name in the network")),
        (tr("Kind"), tr("Layer kind")),
        (tr("Output shape"), tr("Output of one sample; the batch dimension is left out")),
        (tr("Params"), tr("Trainable parameters of the layer (weights + bias)")),
        (tr("MACs"), tr("Multiply-adds of conv/linear/matmul in the forward pass, over the whole batch")),
        (
            tr("FLOPs"),
            tr(
                "Forward + backward FLOPs over the batch: 2 x MACs + elementwise work; backward about twice the forward"
            ),
        ),
        (tr("Output"), tr("Bytes of the layer's output over the batch, in the compute precision")),
        (tr("Kept for backward"), tr("Bytes autograd still holds for this layer when the forward pass ends")),
    ]


def _cells(row: LayerRow) -> list[tuple[str, Any]]:
    flops = row.forward_flops + row.backward_flops
    return [
        (row.name, row.name),
        (row.kind, row.kind),
        (format_shape(row.output_shape), row.output_shape),
        (format_count(row.param_count), row.param_count),
        (format_count(row.forward_macs), row.forward_macs),
        (format_count(flops), flops),
        (format_bytes(row.output_bytes), row.output_bytes),
        (format_bytes(row.kept_bytes) if row.kept_bytes else "-", row.kept_bytes),
    ]


class LayerTableModel(RecordTableModel):
    def __init__(self) -> None:
        super().__init__(_columns)

    @property
    def rows(self) -> tuple[LayerRow, ...]:
        return tuple(self.items)

    def set_estimate(self, e: Estimate | None) -> None:
        self.set_items(e.layers if e else ())

    def format_row(self, row: int) -> list[tuple[str, Any]]:
        return _cells(self.items[row])

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        text, value = self.cells(index.row())[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return text
        if role == SORT_ROLE:
            return value if not isinstance(value, tuple) else math.prod(value)
        if role == Qt.ItemDataRole.ToolTipRole:
            exact = f"{value:,}" if isinstance(value, int) else text
            return f"{exact}\n{self.columns[index.column()][1]}"
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() >= 3:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None
